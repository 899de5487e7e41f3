/**
 * fast-check generators of WhatsApp events and of ways to lay them out in webhook bodies. Every generated
 * item carries a `_tag` so a test can tell which generated event an extracted event came from, whatever
 * body, entry or change it travelled in.
 */
import fc from 'fast-check';
import { LosslessNumber } from 'lossless-json';
import { stringifyWebhookJson } from '../../../functions/events/parse-json.ts';
import type { JsonObject, JsonValue } from '../../../functions/events/types.ts';

export interface EventSpec {
  readonly entryId: string;
  readonly entryTime: number | undefined;
  readonly field: string;
  readonly phoneNumberId: string;
  /** The `change.value` array the item goes into, or `null` when the item is the change value itself. */
  readonly array: string | null;
  readonly item: JsonObject;
}

const BASE64_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='];
/** Real wamids are `wamid.` and 40 to 80 base64 characters. */
const base64Text = fc.string({ unit: fc.constantFrom(...BASE64_CHARS), minLength: 8, maxLength: 80 });
export const wamid = base64Text.map((text) => `wamid.${text}`);
const wacid = base64Text.map((text) => `wacid.${text}`);
const digits = fc.stringMatching(/^[1-9][0-9]{9,14}$/);
const unixSeconds = fc.integer({ min: 1_600_000_000, max: 1_900_000_000 });
/** Any text, including astral characters, quotes, backslashes, slashes and control characters. */
const anyText = fc.string({ unit: 'grapheme', maxLength: 12 });
const largeId = fc.bigInt({ min: 0n, max: 2n ** 70n }).map((id) => new LosslessNumber(id.toString()));

interface SpecShape {
  readonly field: string;
  readonly array: string | null;
  readonly item: JsonObject;
}

const shapes: fc.Arbitrary<SpecShape>[] = [
  fc
    .record({ from: digits, id: wamid, timestamp: unixSeconds.map(String), body: anyText })
    .map(({ from, id, timestamp, body }) => ({
      field: 'messages',
      array: 'messages',
      item: { from, id, timestamp, type: 'text', text: { body } },
    })),
  fc
    .record({
      id: wamid,
      status: fc.constantFrom('sent', 'delivered', 'read', 'failed', 'played'),
      timestamp: unixSeconds.map(String),
      participant: fc.option(digits, { nil: undefined }),
    })
    .map(({ id, status, timestamp, participant }) => ({
      field: 'messages',
      array: 'statuses',
      item: {
        id,
        status,
        timestamp,
        recipient_id: '120363405357894546',
        ...(participant === undefined
          ? {}
          : { recipient_type: 'group', recipient_participant_id: participant }),
      },
    })),
  fc.record({ code: fc.integer({ min: 100, max: 2_600_000 }), title: anyText }).map((item) => ({
    field: 'messages',
    array: 'errors',
    item,
  })),
  fc
    .record({ id: largeId, event: fc.constantFrom('APPROVED', 'REJECTED', 'PAUSED'), name: anyText })
    .map(({ id, event, name }) => ({
      field: 'message_template_status_update',
      array: null,
      item: {
        event,
        message_template_id: id,
        message_template_name: name,
        message_template_language: 'en_US',
      },
    })),
  fc
    .record({ name: anyText, status: fc.constantFrom('Active', 'Needs_Connecting'), updated: unixSeconds })
    .map(({ name, status, updated }) => ({
      field: 'payment_configuration_update',
      array: null,
      item: { configuration_name: name, provider_name: 'razorpay', status, updated_timestamp: updated },
    })),
  fc
    .record({
      waId: digits,
      value: fc.constantFrom('stop', 'resume'),
      timestamp: unixSeconds,
      detail: anyText,
    })
    .map(({ waId, value, timestamp, detail }) => ({
      field: 'user_preferences',
      array: 'user_preferences',
      item: { wa_id: waId, detail, category: 'marketing_messages', value, timestamp },
    })),
  fc
    .record({ phase: fc.integer({ min: 0, max: 2 }), chunk: fc.integer({ min: 1, max: 500 }) })
    .map(({ phase, chunk }) => ({
      field: 'history',
      array: 'history',
      item: { metadata: { phase, chunk_order: chunk, progress: 50 }, threads: [] },
    })),
  fc
    .record({ id: wacid, event: fc.constantFrom('connect', 'terminate'), timestamp: unixSeconds.map(String) })
    .map(({ id, event, timestamp }) => ({
      field: 'calls',
      array: 'calls',
      item: { id, to: '15556013472', from: '4915112345678', event, timestamp, direction: 'USER_INITIATED' },
    })),
  // A business-initiated call's state: a `calls` change's `statuses` array, which may share the change with
  // `calls` items.
  fc
    .record({
      id: wacid,
      status: fc.constantFrom('RINGING', 'ACCEPTED', 'REJECTED'),
      timestamp: unixSeconds.map(String),
    })
    .map(({ id, status, timestamp }) => ({
      field: 'calls',
      array: 'statuses',
      item: { id, timestamp, type: 'call', status, recipient_id: '4915112345678' },
    })),
  // A Groups API item naming one to three customers, by phone number or, for a username customer, BSUID only.
  fc
    .record({
      groupId: base64Text,
      added: fc.boolean(),
      timestamp: unixSeconds.map(String),
      customers: fc.array(
        fc.oneof(
          fc.record({ wa_id: digits }),
          digits.map((id) => ({ user_id: `US.${id}`, username: 'maple.reader' })),
        ),
        { minLength: 1, maxLength: 3 },
      ),
    })
    .map(
      ({ groupId, added, timestamp, customers }): SpecShape => ({
        field: 'group_participants_update',
        array: 'groups',
        item: added
          ? { timestamp, group_id: groupId, type: 'group_participants_add', added_participants: customers }
          : {
              timestamp,
              group_id: groupId,
              type: 'group_participants_remove',
              removed_participants: customers,
            },
      }),
    ),
];

export const eventSpec: fc.Arbitrary<EventSpec> = fc
  .record({
    shape: fc.oneof(...shapes),
    entryId: fc.constantFrom('184735920115467', '261538409927314'),
    // Few distinct entries, so that generated events often share an entry and a change.
    entryTime: fc.option(fc.constantFrom(1751304100, 1781175600), { nil: undefined }),
    phoneNumberId: fc.constantFrom('397201846153720', '418820375561902'),
  })
  .map(({ shape, entryId, entryTime, phoneNumberId }) => ({ ...shape, entryId, entryTime, phoneNumberId }));

/** Specs whose items are tagged with their index. */
export const taggedSpecs = (options: { minLength: number; maxLength: number }) =>
  fc
    .array(eventSpec, options)
    .map((specs) => specs.map((spec, tag) => ({ ...spec, item: { ...spec.item, _tag: tag } })));

/** Where one placed event goes: which body, which of two same-id entries, which of two same-field changes. */
export interface Placement {
  readonly body: number;
  readonly entrySlot: number;
  readonly changeSlot: number;
}

export const placement = (bodies: number): fc.Arbitrary<Placement> =>
  fc.record({ body: fc.nat(bodies - 1), entrySlot: fc.nat(1), changeSlot: fc.nat(1) });

/** A random order and placement for `count` events. */
export const layout = (count: number, bodies: number) =>
  fc.record({
    order: fc.shuffledSubarray(
      Array.from({ length: count }, (_, index) => index),
      { minLength: count, maxLength: count },
    ),
    placements: fc.array(placement(bodies), { minLength: count, maxLength: count }),
  });

/**
 * Builds webhook bodies (as parsed values) from specs taken in `order`, each put where `placements` says.
 * Specs that share body, entry slot, entry id and time share an entry; item specs that also share field,
 * phone number id and change slot share a change. A per-change spec always gets its own change.
 */
export function buildBodies(
  specs: readonly EventSpec[],
  order: readonly number[],
  placements: readonly Placement[],
): JsonObject[] {
  const bodies = new Map<number, Map<string, { entry: JsonObject; changes: Map<string, JsonObject> }>>();
  let perChangeCounter = 0;
  for (const [position, index] of order.entries()) {
    const spec = specs[index];
    const where = placements[position];
    if (spec === undefined || where === undefined) throw new Error('layout does not match the specs');
    const entries = bodies.get(where.body) ?? new Map();
    bodies.set(where.body, entries);
    const entryKey = `${where.entrySlot}|${spec.entryId}|${spec.entryTime}`;
    let entry = entries.get(entryKey);
    if (entry === undefined) {
      const entryObject: JsonObject = { id: spec.entryId, changes: [] };
      if (spec.entryTime !== undefined) entryObject.time = spec.entryTime;
      entry = { entry: entryObject, changes: new Map() };
      entries.set(entryKey, entry);
    }
    const changeList = entry.entry.changes as JsonValue[];
    if (spec.array === null) {
      changeList.push({ field: spec.field, value: spec.item });
      entry.changes.set(`per-change-${perChangeCounter++}`, {});
      continue;
    }
    const changeKey = `${spec.field}|${spec.phoneNumberId}|${where.changeSlot}`;
    let value = entry.changes.get(changeKey);
    if (value === undefined) {
      value = {
        messaging_product: 'whatsapp',
        metadata: { display_phone_number: '15556013472', phone_number_id: spec.phoneNumberId },
      };
      entry.changes.set(changeKey, value);
      changeList.push({ field: spec.field, value });
    }
    const items = (value[spec.array] as JsonValue[] | undefined) ?? [];
    value[spec.array] = items;
    items.push(spec.item);
  }
  return [...bodies.values()].map((entries) => ({
    object: 'whatsapp_business_account',
    entry: [...entries.values()].map(({ entry }) => entry),
  }));
}

/** One spec alone in its own body. */
export function soloBody(spec: EventSpec): string {
  const [body] = buildBodies([spec], [0], [{ body: 0, entrySlot: 0, changeSlot: 0 }]);
  return stringifyWebhookJson(body as JsonObject);
}
