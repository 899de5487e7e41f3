/**
 * The receiver as a whole (`receiveWebhook` over recording queues), fuzzed with fast-check from a fixed seed:
 * random signed bodies (random events and layouts, decoy members at every level, repeated member names whose
 * earlier copies hold decoy events, nesting around and past the parser's limit, id-less items, changes of
 * unknown fields, anonymous contacts, and in a few runs bulk up to about 3 MB), for random sets of
 * subscribers with and without a message lane. For each body, either
 *
 * - every subscriber's queues hold each event of a field it wants exactly once across its parts (an event in
 *   a piece quarantined as `event-too-large` aside), each id-less item and unknown-field change once for a
 *   subscriber of every field, every part readable and a message-lane part's keys its own, and at most
 *   `AMPLIFICATION_FACTOR` × the body + `AMPLIFICATION_ALLOWANCE_BYTES` bytes in all; or
 * - the body is quarantined whole and byte-exact (too deep, or amplifying), and nothing of it is enqueued.
 */
import fc from 'fast-check';
import { isLosslessNumber, LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { MESSAGE_LANE_FIELD } from '../../contract/lanes.ts';
import { type SubscriberQueue, wantsField } from '../../contract/subscribers.ts';
import { extractEventsFromEnvelope } from '../../functions/events/extract-events.ts';
import { nestingExceeds } from '../../functions/events/json-spans.ts';
import { MAX_LOSSLESS_NESTING } from '../../functions/events/parse-json.ts';
import type { EventExtraction, JsonObject, JsonValue } from '../../functions/events/types.ts';
import {
  AMPLIFICATION_ALLOWANCE_BYTES,
  AMPLIFICATION_FACTOR,
} from '../../functions/receiver/output-budget.ts';
import { receiveWebhook } from '../../functions/receiver/receive-webhook.ts';
import { signBody } from '../../functions/receiver/signature.ts';
import { RecordingQueues } from '../support/recording-queues.ts';
import { buildBodies, layout, taggedSpecs } from '../support/webhooks/webhook-arbitraries.ts';

const SEED = 20_261_215;
const RUNS = 100;
const SECRET = 'fuzz-app-secret';
const WHOLE_BODY_REASONS = ['invalid-json', 'amplifying-body'];

const SUBSCRIBERS: readonly SubscriberQueue[] = [
  { name: 'legacy', queueUrl: 'memory://legacy' },
  { name: 'bot', queueUrl: 'memory://bot', messageQueueUrl: 'memory://bot.fifo', messageLaneOrdered: true },
  {
    name: 'crm',
    queueUrl: 'memory://crm',
    fields: ['messages', 'brand_new_field'],
    messageQueueUrl: 'memory://crm-messages',
  },
  { name: 'chat', queueUrl: 'memory://chat', fields: ['messages'], messageQueueUrl: 'memory://chat.fifo' },
  { name: 'templates', queueUrl: 'memory://templates', fields: ['message_template_status_update'] },
  { name: 'calls', queueUrl: 'memory://calls', fields: ['calls', 'history'], messageQueueUrl: 'memory://c' },
];

// ---------------------------------------------------------------------------------------------------------
// Writing a body: repeated member names cannot live in a JS object, so an object may carry members to be
// written before its own (same names: the later, real one is what JSON.parse keeps).

const EARLIER = Symbol('members written before the object’s own');
type Decorated = JsonObject & { [EARLIER]?: [string, JsonValue][] };

function write(node: JsonValue | undefined, ws: string): string {
  if (node === null || node === undefined) return 'null';
  if (typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean')
    return JSON.stringify(node);
  if (isLosslessNumber(node)) return node.value;
  if (Array.isArray(node)) return `[${ws}${node.map((item) => write(item, ws)).join(`,${ws}`)}${ws}]`;
  const earlier = (node as Decorated)[EARLIER] ?? [];
  const members = [...earlier, ...Object.entries(node)].map(
    ([name, value]) => `${JSON.stringify(name)}${ws}:${ws}${write(value, ws)}`,
  );
  return `{${ws}${members.join(`,${ws}`)}${ws}}`;
}

/** A deep copy that keeps `LosslessNumber`s (immutable) as they are. */
function copyOf(node: JsonValue): JsonValue {
  if (Array.isArray(node)) return node.map(copyOf);
  if (typeof node !== 'object' || node === null || isLosslessNumber(node)) return node;
  return Object.fromEntries(Object.entries(node).map(([name, value]) => [name, copyOf(value)]));
}

// ---------------------------------------------------------------------------------------------------------
// Decorations of a generated body

type Level = 'envelope' | 'entry' | 'change' | 'value';

interface Decoration {
  readonly kind: 'decoy' | 'repeat' | 'nest' | 'anonymous contacts' | 'id-less item' | 'unknown change';
  readonly level: Level;
  readonly at: number;
  readonly size: number;
}

const decoration: fc.Arbitrary<Decoration> = fc.record({
  kind: fc.constantFrom(
    'decoy',
    'decoy',
    'repeat',
    'repeat',
    'nest',
    'anonymous contacts',
    'id-less item',
    'unknown change',
  ),
  level: fc.constantFrom<Level>('envelope', 'entry', 'change', 'value'),
  at: fc.nat(),
  // Mostly small; now and then past a part of a message.
  size: fc.oneof(
    { weight: 9, arbitrary: fc.nat(600) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 60_000 }) },
  ),
});

/** Bulk that takes a body towards Meta's 3 MB, in a few runs. */
interface Bulk {
  readonly kind: 'decoy' | 'statuses' | 'conversations' | 'anonymous contacts';
  readonly bytes: number;
  readonly level: Level;
}

const bulk: fc.Arbitrary<Bulk | undefined> = fc.oneof(
  { weight: 20, arbitrary: fc.constant(undefined) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom<Bulk['kind']>('decoy', 'statuses', 'conversations', 'anonymous contacts'),
      bytes: fc.integer({ min: 200_000, max: 3_000_000 }),
      level: fc.constantFrom<Level>('envelope', 'entry', 'change', 'value'),
    }),
  },
);

function objectsAt(body: JsonObject, level: Level): JsonObject[] {
  if (level === 'envelope') return [body];
  const entries = (body.entry as JsonObject[]).filter((entry) => Array.isArray(entry.changes));
  if (level === 'entry') return entries;
  const changes = entries.flatMap((entry) => entry.changes as JsonObject[]);
  if (level === 'change') return changes;
  return changes.flatMap((change) => (typeof change.value === 'object' ? [change.value as JsonObject] : []));
}

const messagesValues = (body: JsonObject) =>
  objectsAt(body, 'change')
    .filter((change) => change.field === MESSAGE_LANE_FIELD)
    .map((change) => change.value as JsonObject);

let decoyCounter = 0;
const decoyEvent = () => ({ id: `wamid.decoy${decoyCounter++}`, from: '1999', status: 'read', type: 'text' });

function decorate(body: JsonObject, { kind, level, at, size }: Decoration): void {
  const objects = objectsAt(body, level);
  const target = objects[at % Math.max(1, objects.length)] as Decorated | undefined;
  if (target === undefined) return;
  switch (kind) {
    case 'decoy':
      target[`decoy_${decoyCounter++}`] = 'd'.repeat(size);
      return;
    case 'repeat': {
      // An earlier copy of one of its members, holding decoy events where the real one holds events.
      const names = Object.keys(target);
      const name = names[at % Math.max(1, names.length)];
      if (name === undefined) return;
      const real = target[name];
      const copy: JsonValue = Array.isArray(real)
        ? Array.from({ length: 1 + (size % 4) }, decoyEvent)
        : typeof real === 'object' && real !== null && !isLosslessNumber(real)
          ? { decoy: 'd'.repeat(size), phone_number_id: 'decoy' }
          : 'decoy';
      target[EARLIER] = [...(target[EARLIER] ?? []), [name, copy]];
      return;
    }
    case 'nest': {
      // Around the lossless parser's limit in some runs, with a number no JS number keeps in some.
      const depth = size % 5 === 0 ? MAX_LOSSLESS_NESTING - 8 + (size % 16) : 1 + (size % 40);
      let nested: JsonValue = size % 2 === 0 ? new LosslessNumber('12345678901234567890') : 1;
      for (let level = 0; level < depth; level++) nested = [nested];
      target[`nest_${decoyCounter++}`] = nested;
      return;
    }
    case 'anonymous contacts': {
      const value = messagesValues(body)[at % Math.max(1, messagesValues(body).length)];
      if (value === undefined) return;
      const anonymous = Array.from({ length: 1 + (size % 60) }, (_, index) => ({
        profile: { name: `anon ${index}` },
      }));
      value.contacts = [...((value.contacts as JsonValue[] | undefined) ?? []), ...anonymous];
      return;
    }
    case 'id-less item': {
      const value = messagesValues(body)[at % Math.max(1, messagesValues(body).length)];
      if (value === undefined) return;
      const array = size % 2 === 0 ? 'messages' : 'statuses';
      value[array] = [...((value[array] as JsonValue[] | undefined) ?? []), { from: '1777', status: 'sent' }];
      return;
    }
    case 'unknown change': {
      const entry = objectsAt(body, 'entry')[at % Math.max(1, objectsAt(body, 'entry').length)];
      if (entry === undefined) return;
      (entry.changes as JsonValue[]).push({
        field: 'brand_new_field',
        value: { size, note: 'n'.repeat(size % 200) },
      });
      return;
    }
  }
}

/** Contacts for the senders of every `messages` value, as Meta lists them. */
function withSenderContacts(body: JsonObject): void {
  for (const value of messagesValues(body)) {
    const senders = new Set<string>();
    for (const message of (value.messages as JsonObject[] | undefined) ?? [])
      if (typeof message.from === 'string') senders.add(message.from);
    if (senders.size > 0)
      value.contacts = [...senders].map((waId) => ({ profile: { name: 'n' }, wa_id: waId }));
  }
}

function addBulk(body: JsonObject, { kind, bytes, level }: Bulk): void {
  const [value] = messagesValues(body);
  const target = value ?? (body.entry as JsonObject[])[0];
  switch (kind) {
    case 'decoy': {
      const objects = objectsAt(body, level);
      const object = objects[0] ?? body;
      object.bulk = 'b'.repeat(bytes);
      return;
    }
    case 'statuses': {
      const count = Math.floor(bytes / 160);
      const statuses = Array.from({ length: count }, (_, index) => ({
        id: `wamid.bulkstatus${index}`,
        status: 'delivered',
        timestamp: '1749416383',
        recipient_id: '16505551234',
      }));
      if (value === undefined) body.entry = [...(body.entry as JsonValue[]), bulkEntry({ statuses })];
      else value.statuses = [...((value.statuses as JsonValue[] | undefined) ?? []), ...statuses];
      return;
    }
    case 'conversations': {
      // Distinct senders, each with its contact: past the parts bound from about 2,000 of them, or under it
      // with metadata every part must copy.
      const count = bytes % 2 === 0 ? Math.min(1_800, Math.floor(bytes / 260)) : Math.floor(bytes / 260);
      const messages = Array.from({ length: count }, (_, index) => ({
        from: `44700${index}`,
        id: `wamid.bulkmessage${index}`,
        timestamp: '1749416383',
        type: 'text',
        text: { body: 'x'.repeat(index % 50) },
      }));
      const contacts = messages.map(({ from }) => ({ profile: { name: 'bulk' }, wa_id: from }));
      const metadata = {
        phone_number_id: '397201846153720',
        padding: 'p'.repeat(bytes % 3 === 0 ? 2_000 : 0),
      };
      body.entry = [...(body.entry as JsonValue[]), bulkEntry({ metadata, contacts, messages })];
      return;
    }
    case 'anonymous contacts': {
      const count = Math.floor(bytes / 40);
      const anonymous = Array.from({ length: count }, (_, index) => ({
        profile: { name: `guest ${index}` },
      }));
      if (value === undefined) (target as JsonObject).bulk = anonymous;
      else value.contacts = [...((value.contacts as JsonValue[] | undefined) ?? []), ...anonymous];
      return;
    }
  }
}

function bulkEntry(value: JsonObject): JsonObject {
  return {
    id: '184735920115467',
    changes: [
      {
        field: 'messages',
        value: {
          messaging_product: 'whatsapp',
          metadata: { display_phone_number: '15556013472', phone_number_id: '397201846153720' },
          ...value,
        },
      },
    ],
  };
}

const bodies = taggedSpecs({ minLength: 1, maxLength: 30 }).chain((specs) =>
  fc.record({
    specs: fc.constant(specs),
    layout: layout(specs.length, 1),
    contacts: fc.boolean(),
    decorations: fc.array(decoration, { maxLength: 8 }),
    bulk,
    whitespace: fc.constantFrom('', '', ' ', '\n  '),
    subscribers: fc.subarray([...SUBSCRIBERS], { minLength: 1 }),
    maximumBodyBytes: fc.constantFrom(16 * 1024, 256 * 1024 - 256, 1024 * 1024 - 256),
  }),
);

// ---------------------------------------------------------------------------------------------------------

const counts = (keys: readonly string[]) => {
  const tally = new Map<string, number>();
  for (const key of keys) tally.set(key, (tally.get(key) ?? 0) + 1);
  return tally;
};

/**
 * A part's events, read as the consumer's parser reads them (parse-json.ts: JSON, at most MAX_LOSSLESS_NESTING
 * levels), but natively: a lossless parse of a few MB takes seconds when they hold an id above 2^53, and the
 * body's keys are read the same way, so equal events still compare equal. Cached: subscribers share parts.
 */
const reads = new Map<string, Extract<EventExtraction, { ok: true }>>();
function readPart(part: string) {
  const cached = reads.get(part);
  if (cached !== undefined) return cached;
  expect(nestingExceeds(part, MAX_LOSSLESS_NESTING)).toBe(false);
  const extraction = extractEventsFromEnvelope(JSON.parse(part));
  if (!extraction.ok) throw new Error(`an enqueued part is unreadable: ${extraction.detail}`);
  reads.set(part, extraction);
  return extraction;
}

describe('receiver fuzzing, lanes and amplification', () => {
  it('enqueues every event of a signed body exactly once per subscriber within the bound, or quarantines it whole', async () => {
    const outcomes = { enqueued: 0, quarantined: new Map<string, number>(), withOversized: 0, largest: 0 };
    await fc.assert(
      fc.asyncProperty(bodies, async (run) => {
        const [built] = buildBodies(run.specs, run.layout.order, run.layout.placements);
        if (built === undefined) throw new Error('no body');
        // The generated items are shared between runs (and shrinks): decorate a copy.
        const body = copyOf(built) as JsonObject;
        if (run.contacts) withSenderContacts(body);
        for (const each of run.decorations) decorate(body, each);
        if (run.bulk !== undefined) addBulk(body, run.bulk);
        const text = write(body, run.whitespace);
        const bytes = Buffer.byteLength(text);
        outcomes.largest = Math.max(outcomes.largest, bytes);
        const queue = new RecordingQueues(run.maximumBodyBytes);
        const response = await receiveWebhook(
          {
            method: 'POST',
            path: '/webhook',
            query: {},
            headers: { 'x-hub-signature-256': signBody(text, SECRET) },
            body: text,
            requestId: 'fuzz-lanes',
          },
          {
            secrets: { origin: 'fuzz', load: async () => ({ appSecrets: [SECRET], verifyToken: undefined }) },
            subscribers: run.subscribers,
            fanOut: queue,
            quarantine: queue,
            metrics: { addMetric: () => undefined },
            logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
          },
        );
        expect(response.statusCode).toBe(200);

        const whole = queue.quarantined.filter(({ reason }) => WHOLE_BODY_REASONS.includes(reason));
        if (whole.length > 0) {
          expect(whole).toHaveLength(1);
          const reason = whole[0]?.reason as string;
          expect(whole[0]?.raw.equals(Buffer.from(text))).toBe(true);
          // The only JSON it refuses is JSON nested past the limit the consumer's parser has.
          if (reason === 'invalid-json') expect(nestingExceeds(text, MAX_LOSSLESS_NESTING)).toBe(true);
          expect(queue.stored.size).toBe(0);
          expect(queue.quarantined).toHaveLength(1);
          outcomes.quarantined.set(reason, (outcomes.quarantined.get(reason) ?? 0) + 1);
          return;
        }
        outcomes.enqueued++;
        expect(nestingExceeds(text, MAX_LOSSLESS_NESTING)).toBe(false);

        reads.clear();
        const expected = readPart(text);
        const bodyCounts = counts(expected.events.map((event) => event.key));
        const oversized = queue.quarantined.filter(({ reason }) => reason === 'event-too-large');
        expect(queue.quarantined.length).toBe(oversized.length);
        if (oversized.length > 0) outcomes.withOversized++;
        const oversizedCounts = counts(
          oversized.flatMap(({ raw }) => readPart(raw.toString('utf8')).events.map((e) => e.key)),
        );
        const oversizedBytes = oversized.reduce((sum, { raw }) => sum + raw.length, 0);
        const bound = AMPLIFICATION_FACTOR * bytes + AMPLIFICATION_ALLOWANCE_BYTES;
        expect(oversizedBytes).toBeLessThanOrEqual(2 * bound);

        for (const subscriber of run.subscribers) {
          const parts = queue.storedFor(subscriber.name).flat();
          const extractions = parts.map(readPart);
          const got = counts(
            extractions.flatMap((extraction) => extraction.events.map((event) => event.key)),
          );
          // Collected, then compared once: an expect per event of a 3 MB body takes seconds.
          const wrong: string[] = [];
          for (const event of expected.events) {
            const inBody = bodyCounts.get(event.key) ?? 0;
            const stored = got.get(event.key) ?? 0;
            const wanted = wantsField(subscriber.fields, event.field);
            const once =
              oversized.length === 0
                ? stored === inBody
                : stored + (oversizedCounts.get(event.key) ?? 0) >= inBody;
            if (stored > inBody || (wanted && !once)) wrong.push(`${event.key}: ${stored} of ${inBody}`);
          }
          for (const key of got.keys()) if (!bodyCounts.has(key)) wrong.push(`${key}: not in the body`);
          expect(wrong).toEqual([]);
          if (subscriber.fields === undefined && oversized.length === 0) {
            const sum = (pick: (e: (typeof extractions)[number]) => number) =>
              extractions.reduce((total, extraction) => total + pick(extraction), 0);
            expect(sum((e) => e.unkeyed.length)).toBe(expected.unkeyed.length);
            expect(sum((e) => e.unknownFields.length)).toBe(expected.unknownFields.length);
          }
          const storedBytes = parts.reduce((sum, part) => sum + Buffer.byteLength(part), 0);
          expect(storedBytes).toBeLessThanOrEqual(bound);
        }
        // A message-lane part carries the keys of its own events (its FIFO deduplication id).
        for (const subscriber of run.subscribers) {
          if (subscriber.messageQueueUrl === undefined) continue;
          for (const delivery of queue.storedIn.get(subscriber.messageQueueUrl) ?? []) {
            for (const part of delivery.parts) {
              const events = readPart(part.body).events;
              expect(events.every((event) => event.kind === 'message')).toBe(true);
              expect(part.eventKeys).toEqual(events.map((event) => event.key));
            }
          }
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    console.info(
      `fuzzed bodies through the lanes: ${outcomes.enqueued} enqueued (${outcomes.withOversized} with an event too large), ` +
        `${[...outcomes.quarantined].map(([reason, count]) => `${count} ${reason}`).join(', ') || 'none'} quarantined whole; ` +
        `largest body ${outcomes.largest} bytes`,
    );
    expect(outcomes.enqueued).toBeGreaterThan(RUNS / 2);
    expect(outcomes.quarantined.get('amplifying-body') ?? 0).toBeGreaterThan(0);
    expect(outcomes.quarantined.get('invalid-json') ?? 0).toBeGreaterThan(0);
    expect(outcomes.largest).toBeGreaterThan(2_000_000);
  }, 120_000);
});
