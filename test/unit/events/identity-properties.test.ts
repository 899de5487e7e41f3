/**
 * Property: two events that differ in an identity part never share a key (docs/design.md §1), whatever the
 * parts hold: separators (`:`), the escape character (`%`), the missing-part mark (`-`), empty strings, and a
 * customer named by phone number or by business-scoped user id.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractEvents } from '../../../functions/events/extract-events.ts';

const WABA = '104882371930562';
const tricky = fc.string({ unit: fc.constantFrom('a', '1', ':', '%', '-', '3', 'A', 'é'), maxLength: 5 });
const id = tricky.filter((text) => text !== '');
const maybe = fc.option(tricky, { nil: undefined });

/** The customer part as the rule names it: the phone number unless missing or empty, else the BSUID. */
function customer(phone: string | undefined, bsuid: string | undefined): string | undefined {
  if (phone !== undefined && phone !== '') return phone;
  return bsuid !== undefined && bsuid !== '' ? bsuid : phone;
}

function keysOf(changes: unknown[]): string[] {
  const extraction = extractEvents(
    JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: WABA, time: 1, changes }] }),
  );
  if (!extraction.ok) throw new Error('expected an envelope');
  return extraction.events.map((event) => event.key);
}

function expectKeysApartExactlyWhenIdentitiesDiffer(keys: string[], identities: unknown[][]) {
  expect(keys).toHaveLength(2);
  const sameIdentity = JSON.stringify(identities[0]) === JSON.stringify(identities[1]);
  expect(keys[0] === keys[1]).toBe(sameIdentity);
}

describe('property: distinct identities, distinct keys', () => {
  it('statuses: id, status and the participant (phone else BSUID)', () => {
    const status = fc.record({ id, status: tricky, phone: maybe, bsuid: maybe });
    fc.assert(
      fc.property(status, status, (a, b) => {
        const item = (s: typeof a) => ({
          id: s.id,
          status: s.status,
          ...(s.phone !== undefined && { recipient_participant_id: s.phone }),
          ...(s.bsuid !== undefined && { recipient_participant_user_id: s.bsuid }),
        });
        const keys = keysOf([{ field: 'messages', value: { statuses: [item(a), item(b)] } }]);
        const identity = (s: typeof a) => [s.id, s.status, customer(s.phone, s.bsuid) ?? null];
        expectKeysApartExactlyWhenIdentitiesDiffer(keys, [identity(a), identity(b)]);
      }),
      {
        numRuns: 500,
        examples: [
          [
            { id: 'wamid.A:read', status: 'x', phone: undefined, bsuid: undefined },
            { id: 'wamid.A', status: 'read:x', phone: undefined, bsuid: undefined },
          ],
          [
            { id: 'wamid.G', status: 'read', phone: undefined, bsuid: 'US.1' },
            { id: 'wamid.G', status: 'read', phone: undefined, bsuid: 'US.2' },
          ],
        ],
      },
    );
  });

  it('user preferences: timestamp, the customer (phone else BSUID), category and value', () => {
    const preference = fc.record({
      timestamp: tricky,
      phone: maybe,
      bsuid: maybe,
      category: tricky,
      value: tricky,
    });
    fc.assert(
      fc.property(preference, preference, (a, b) => {
        const item = (p: typeof a) => ({
          timestamp: p.timestamp,
          category: p.category,
          value: p.value,
          ...(p.phone !== undefined && { wa_id: p.phone }),
          ...(p.bsuid !== undefined && { user_id: p.bsuid }),
        });
        const keys = keysOf([{ field: 'user_preferences', value: { user_preferences: [item(a), item(b)] } }]);
        const identity = (p: typeof a) => [
          p.timestamp,
          customer(p.phone, p.bsuid) ?? null,
          p.category,
          p.value,
        ];
        expectKeysApartExactlyWhenIdentitiesDiffer(keys, [identity(a), identity(b)]);
      }),
      { numRuns: 500 },
    );
  });

  it('per-change fields: any value, including a missing one against a literal `-`', () => {
    const flow = fc.record({
      event: fc.option(tricky, { nil: null }),
      flowId: fc.option(tricky, { nil: null }),
    });
    fc.assert(
      fc.property(flow, flow, (a, b) => {
        const value = (f: typeof a) => ({ event: f.event, flow_id: f.flowId });
        const keys = keysOf([
          { field: 'flows', value: value(a) },
          { field: 'flows', value: value(b) },
        ]);
        expectKeysApartExactlyWhenIdentitiesDiffer(keys, [
          [a.event, a.flowId],
          [b.event, b.flowId],
        ]);
      }),
      { numRuns: 500 },
    );
  });
});
