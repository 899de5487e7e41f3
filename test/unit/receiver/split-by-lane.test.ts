import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversationId } from '../../../contract/lanes.ts';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import type { JsonObject, JsonValue, WebhookEvent } from '../../../functions/events/types.ts';
import {
  ANONYMOUS_CONTACTS_BYTES,
  type StatusRest,
  splitByLane,
} from '../../../functions/receiver/split-by-lane.ts';
import { writeJson } from '../../support/webhooks/json-writer.ts';
import { buildBodies, layout, taggedSpecs } from '../../support/webhooks/webhook-arbitraries.ts';

/** How many array elements `run` visits through the iteration protocol (for…of, spreads), counted. */
function arrayIterationSteps(run: () => void): number {
  const prototype = Array.prototype as { [Symbol.iterator]: (this: unknown[]) => Iterator<unknown> };
  const original = prototype[Symbol.iterator];
  let steps = 0;
  prototype[Symbol.iterator] = function* (this: unknown[]) {
    for (let index = 0; index < this.length; index++) {
      steps++;
      yield this[index];
    }
  };
  try {
    run();
  } finally {
    prototype[Symbol.iterator] = original;
  }
  return steps;
}

function eventsOf(text: string): WebhookEvent[] {
  const extraction = extractEvents(text);
  if (!extraction.ok) throw new Error(`not an envelope: ${extraction.detail}`);
  return extraction.events;
}

const tagOf = (event: WebhookEvent) => event.payload._tag as number;
const conversationOf = (event: WebhookEvent) =>
  conversationId((event.value.metadata as JsonObject | undefined)?.phone_number_id, event.payload.from);

/**
 * Gives some messages no `from` and every `messages` change a `contacts` array: one contact per sender, an
 * unrelated one, and, now and then, one without a `wa_id`.
 */
function withContactsAndMissingSenders(body: JsonObject, drops: readonly boolean[], seed: number): void {
  let message = 0;
  for (const entry of body.entry as JsonObject[]) {
    for (const change of entry.changes as JsonObject[]) {
      const value = change.value as JsonObject;
      const messages = value.messages as JsonObject[] | undefined;
      if (change.field !== 'messages' || messages === undefined) continue;
      for (const item of messages) if (drops[message++ % drops.length] === true) delete item.from;
      const senders = [
        ...new Set(messages.flatMap((item) => (typeof item.from === 'string' ? [item.from] : []))),
      ];
      const contacts: JsonValue[] = senders.map((waId) => ({ profile: { name: `n${waId}` }, wa_id: waId }));
      contacts.push({ profile: { name: 'other' }, wa_id: '19990000000' });
      if (seed % 3 === 0) contacts.push({ profile: { name: 'no id' } });
      value.contacts = contacts;
    }
  }
}

const spelling = fc.record({
  seed: fc.integer(),
  asciiEscapeRate: fc.constantFrom(0, 0.1),
  escapeNonAscii: fc.boolean(),
  escapeSlash: fc.boolean(),
  whitespace: fc.constantFrom([''], ['', ' ', '\n', '\t']),
});

const bodies = taggedSpecs({ minLength: 1, maxLength: 25 }).chain((specs) =>
  fc.record({
    specs: fc.constant(specs),
    layout: layout(specs.length, 1),
    drops: fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
    spelling,
  }),
);

describe('splitByLane', () => {
  it('keeps every event once: each conversation its messages in order, the rest the other events in order', () => {
    fc.assert(
      fc.property(bodies, ({ specs, layout: { order, placements }, drops, spelling: style }) => {
        const [parsed] = buildBodies(specs, order, placements);
        if (parsed === undefined) throw new Error('no body');
        withContactsAndMissingSenders(parsed, drops, style.seed);
        const text = writeJson(parsed, style);
        const original = eventsOf(text);
        const { messageParts, rest } = splitByLane(text);

        const messages = original.filter((event) => event.kind === 'message');
        const others = original.filter((event) => event.kind !== 'message');
        expect(messageParts.map((part) => part.conversationId)).toEqual([
          ...new Set(messages.map(conversationOf)),
        ]);
        for (const part of messageParts) {
          const events = eventsOf(part.text);
          expect(events.map(tagOf)).toEqual(
            messages.filter((event) => conversationOf(event) === part.conversationId).map(tagOf),
          );
          expect(events.map(conversationOf).every((id) => id === part.conversationId)).toBe(true);
          expect(part.eventKeys).toEqual(events.map((event) => event.key));
          for (const event of events) {
            const contacts = (event.value.contacts ?? []) as JsonObject[];
            const from = event.payload.from;
            expect(contacts.every((contact) => contact.wa_id === undefined || contact.wa_id === from)).toBe(
              true,
            );
            if (typeof from === 'string')
              expect(contacts.some((contact) => contact.wa_id === from)).toBe(true);
          }
        }
        if (others.length === 0) {
          expect(rest).toBeUndefined();
        } else {
          const restEvents = eventsOf(rest?.text ?? '');
          expect(restEvents.map(tagOf)).toEqual(others.map(tagOf));
          expect(fieldsOf(rest)).toEqual([...new Set(others.map((event) => event.field))]);
        }
      }),
      { numRuns: 300 },
    );
  });

  const metadata = { display_phone_number: '15550783881', phone_number_id: '106540352242922' };
  const WABA_ID = '102290129340398';
  const envelope = (changes: unknown[]) =>
    JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: WABA_ID, changes }] });
  const message = (id: string, from?: string) => ({
    ...(from === undefined ? {} : { from }),
    id,
    timestamp: '1749416383',
    type: 'text',
    text: { body: `hello ${id}` },
  });

  it('leaves a body of statuses whole, in the rest only', () => {
    const body = envelope([
      {
        field: 'messages',
        value: { metadata, statuses: [{ id: 'wamid.s1', status: 'read', recipient_id: '16505551234' }] },
      },
    ]);
    expect(splitByLane(body)).toEqual({
      messageParts: [],
      rest: {
        text: body,
        origins: [{ field: 'messages', phoneNumberId: metadata.phone_number_id, wabaId: WABA_ID }],
      },
    });
  });

  it('sends a body of messages only as message parts, with no rest', () => {
    const body = envelope([
      { field: 'messages', value: { metadata, messages: [message('wamid.a', '1650')] } },
    ]);
    const { messageParts, rest } = splitByLane(body);
    expect(rest).toBeUndefined();
    expect(messageParts).toEqual([
      {
        conversationId: '106540352242922:1650',
        text: body,
        eventKeys: ['msg:wamid.a'],
        origins: [{ field: 'messages', phoneNumberId: metadata.phone_number_id, wabaId: WABA_ID }],
      },
    ]);
  });

  it('gives two conversations two parts, each with its own contact, and keeps statuses for the rest', () => {
    const body = envelope([
      {
        field: 'messages',
        value: {
          messaging_product: 'whatsapp',
          metadata,
          contacts: [
            { profile: { name: 'A' }, wa_id: '111' },
            { profile: { name: 'B' }, wa_id: '222' },
          ],
          messages: [message('wamid.a1', '111'), message('wamid.b1', '222'), message('wamid.a2', '111')],
          statuses: [{ id: 'wamid.s1', status: 'sent', recipient_id: '333' }],
        },
      },
      { field: 'account_update', value: { event: 'VERIFIED_ACCOUNT' } },
    ]);
    const { messageParts, rest } = splitByLane(body);
    expect(messageParts.map(({ conversationId: id, eventKeys }) => ({ id, eventKeys }))).toEqual([
      { id: '106540352242922:111', eventKeys: ['msg:wamid.a1', 'msg:wamid.a2'] },
      { id: '106540352242922:222', eventKeys: ['msg:wamid.b1'] },
    ]);
    const first = JSON.parse(messageParts[0]?.text ?? '');
    expect(first.entry[0].changes).toEqual([
      {
        field: 'messages',
        value: {
          messaging_product: 'whatsapp',
          metadata,
          contacts: [{ profile: { name: 'A' }, wa_id: '111' }],
          messages: [message('wamid.a1', '111'), message('wamid.a2', '111')],
          statuses: [],
        },
      },
    ]);
    const restBody = JSON.parse(rest?.text ?? '');
    expect(restBody.entry[0].changes[0].value.messages).toEqual([]);
    expect(restBody.entry[0].changes[0].value.contacts).toHaveLength(2);
    expect(fieldsOf(rest)).toEqual(['messages', 'account_update']);
  });

  it('groups a message without a sender under its phone number id, never dropping it', () => {
    const body = envelope([{ field: 'messages', value: { metadata, messages: [message('wamid.x')] } }]);
    expect(splitByLane(body).messageParts.map((part) => part.conversationId)).toEqual(['106540352242922:-']);
    const noMetadata = envelope([{ field: 'messages', value: { messages: [message('wamid.y', '1')] } }]);
    expect(splitByLane(noMetadata).messageParts.map((part) => part.conversationId)).toEqual(['-:1']);
  });

  it("copies a message's own bytes: escapes and number lexemes survive", () => {
    const item =
      '{"from":"1650","id":"wamid.\\u0041","n":12345678901234567890,"text":{"body":"\\ud83d\\ude00 \\/"}}';
    const body = `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"metadata":{"phone_number_id":"9"},"messages":[${item}]},"field":"messages"}]}]}`;
    const [part] = splitByLane(body).messageParts;
    expect(part?.text).toContain(item);
    expect(part?.eventKeys).toEqual(['msg:wamid.A']);
  });

  it('follows JSON.parse for repeated member names: the last one counts', () => {
    const body =
      '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"old"},"metadata":{"phone_number_id":"9"},"messages":[{"id":"wamid.gone","from":"1"}],"messages":[{"id":"wamid.kept","from":"2"}]}}]}]}';
    const { messageParts, rest } = splitByLane(body);
    expect(messageParts.map(({ conversationId: id, eventKeys }) => ({ id, eventKeys }))).toEqual([
      { id: '9:2', eventKeys: ['msg:wamid.kept'] },
    ]);
    expect(rest).toBeUndefined();
  });

  // A part nested past the lossless parser's limit that also holds a number no JS number keeps: the rest can be
  // cut but not read back. readDelivery refuses such a body first; here splitByLane gets it directly.
  const deep = (depth: number) => `${'['.repeat(depth)}12345678901234567890${']'.repeat(depth)}`;
  const withDeepRest = `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"9"},"messages":[{"id":"wamid.a","from":"1"}],"statuses":[{"id":"wamid.s","status":"read","recipient_id":"2"}],"deep":${deep(1001)}}}]}]}`;

  it('tells a rest it cannot read back from a rest with nothing in it', () => {
    const split = splitByLane(withDeepRest);
    expect(split.unreadable).toEqual({ reason: 'invalid-json', detail: expect.any(String) });
    expect(split.rest).toBeUndefined();
    expect(
      splitByLane(
        envelope([{ field: 'messages', value: { metadata, messages: [message('wamid.a', '1')] } }]),
      ),
    ).not.toHaveProperty('unreadable');
  });

  it('keeps a rest that holds only a change of an unknown field, for the consumers that count it', () => {
    const body = envelope([
      { field: 'messages', value: { metadata, messages: [message('wamid.a', '1')] } },
      { field: 'brand_new_field', value: { anything: true } },
    ]);
    const { rest } = splitByLane(body);
    expect(fieldsOf(rest)).toEqual(['brand_new_field']);
    expect(JSON.parse(rest?.text ?? '').entry[0].changes[1]).toEqual({
      field: 'brand_new_field',
      value: { anything: true },
    });
  });

  it('keeps a rest that holds only a status without an id, for its consumers to quarantine', () => {
    const body = envelope([
      {
        field: 'messages',
        value: { metadata, messages: [message('wamid.a', '1')], statuses: [{ status: 'read' }] },
      },
    ]);
    expect(fieldsOf(splitByLane(body).rest)).toEqual(['messages']);
  });

  it('copies into a part what belongs to its conversation only, never what is repeated around it', () => {
    const decoy = 'd'.repeat(10_000);
    const anonymous = Array.from({ length: 40 }, (_, index) => ({ profile: { name: `anon ${index}` } }));
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      around: decoy,
      entry: [
        {
          id: '102290129340398',
          time: 1749416383,
          extra: decoy,
          small: 1,
          changes: [
            {
              field: 'messages',
              extra: decoy,
              value: {
                messaging_product: 'whatsapp',
                metadata,
                note: 'small and unknown',
                big: decoy,
                contacts: [
                  { profile: { name: 'A' }, wa_id: '111' },
                  { profile: { name: 'B' }, wa_id: '222', user_id: 'US.b' },
                  ...anonymous,
                ],
                messages: [message('wamid.a1', '111'), message('wamid.b1', '222')],
                statuses: 'not an array',
              },
            },
          ],
        },
      ],
    });
    const { messageParts, rest } = splitByLane(body);
    const [first, second] = messageParts.map((part) => JSON.parse(part.text));
    // The first anonymous contacts, up to ANONYMOUS_CONTACTS_BYTES: the same few in every part.
    const keptAnonymous = first.entry[0].changes[0].value.contacts.slice(1);
    expect(keptAnonymous.length).toBeGreaterThan(0);
    expect(JSON.stringify(keptAnonymous).length).toBeLessThanOrEqual(ANONYMOUS_CONTACTS_BYTES + 40);
    expect(keptAnonymous).toEqual(anonymous.slice(0, keptAnonymous.length));
    expect(first).toEqual({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '102290129340398',
          time: 1749416383,
          small: 1,
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata,
                note: 'small and unknown',
                contacts: [{ profile: { name: 'A' }, wa_id: '111' }, ...keptAnonymous],
                messages: [message('wamid.a1', '111')],
              },
            },
          ],
        },
      ],
    });
    expect(second.entry[0].changes[0].value.contacts).toEqual([
      { profile: { name: 'B' }, wa_id: '222', user_id: 'US.b' },
      ...keptAnonymous,
    ]);
    for (const part of messageParts) expect(part.text.length).toBeLessThan(1_500);
    // The rest keeps everything but the messages.
    expect(JSON.parse(rest?.text ?? '')).toMatchObject({ around: decoy, entry: [{ extra: decoy }] });
  });

  it('copies the last of repeated members only, as JSON.parse reads them', () => {
    const big = JSON.stringify({ decoy: 'd'.repeat(10_000) });
    const messages = [message('wamid.a', '1'), message('wamid.b', '2')];
    const body = `{"object":"whatsapp_business_account","entry":${big},"entry":[{"id":"1","changes":${big},"changes":[{"field":"messages","value":{"metadata":${big},"metadata":${JSON.stringify(metadata)},"contacts":[${'{"wa_id":"1"},'.repeat(500)}{"wa_id":"1"}],"contacts":[],"messages":${big},"messages":${JSON.stringify(messages)}}}]}]}`;
    const { messageParts } = splitByLane(body);
    expect(messageParts.map(({ eventKeys }) => eventKeys)).toEqual([['msg:wamid.a'], ['msg:wamid.b']]);
    for (const part of messageParts) {
      expect(part.text.length).toBeLessThan(400);
      expect(JSON.parse(part.text).entry[0].changes[0].value).toEqual({
        metadata,
        contacts: [],
        messages: [messages[messageParts.indexOf(part)]],
      });
    }
  });

  it('groups the contacts of one customer in steps linear in their number (a copy per append took 15 s for 40,000)', () => {
    // Timing-free: counts the array elements visited through the iteration protocol, which a copy per append
    // (`[...list, contact]`) walks again for every contact.
    const count = 4_000;
    const contacts = `[${'{"profile":{"name":"x"},"wa_id":"1"},'.repeat(count)}{"wa_id":"2"}]`;
    const body = `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"9"},"contacts":${contacts},"messages":[{"id":"wamid.a","from":"1"},{"id":"wamid.b","from":"2"}]}}]}]}`;
    let split: ReturnType<typeof splitByLane> | undefined;
    const steps = arrayIterationSteps(() => {
      split = splitByLane(body);
    });
    expect(steps).toBeLessThan(20 * count); // quadratic: count² / 2 = 8,000,000
    const parts = split?.messageParts ?? [];
    expect(parts.map(({ conversationId: id }) => id)).toEqual(['9:1', '9:2']);
    expect(JSON.parse(parts[0]?.text ?? '').entry[0].changes[0].value.contacts).toHaveLength(count);
    expect(JSON.parse(parts[1]?.text ?? '').entry[0].changes[0].value.contacts).toEqual([{ wa_id: '2' }]);
  });

  it('leaves an item of messages that is not an object in the rest', () => {
    const body = envelope([
      {
        field: 'messages',
        value: { metadata, messages: [message('wamid.a', '1'), 42], statuses: [{ id: 's', status: 'sent' }] },
      },
    ]);
    const { messageParts, rest } = splitByLane(body);
    expect(messageParts).toHaveLength(1);
    expect(JSON.parse(rest?.text ?? '').entry[0].changes[0].value.messages).toEqual([42]);
  });
});

/** The distinct fields of a rest's origins, in first-seen order. */
function fieldsOf(rest: StatusRest | undefined): string[] {
  return [...new Set(rest?.origins.map((origin) => origin.field))];
}
