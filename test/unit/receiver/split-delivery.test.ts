import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../cli/local/seeded-random.ts';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import { splitDelivery } from '../../../functions/receiver/split-delivery.ts';
import { keysOfEnvelope } from '../../support/webhooks/event-keys.ts';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

function unknownFieldsOf(body: string): string[] {
  const extraction = extractEvents(body);
  if (!extraction.ok) throw new Error(`not an envelope: ${extraction.detail}`);
  return extraction.unknownFields.map((change) => `${change.entryId}:${change.field}`);
}

const sorted = (values: string[]) => [...values].sort();

// Text with non-ASCII (é, emoji), quotes and backslashes: the splitter must count UTF-8 bytes and skip
// escaped quotes correctly.
const textArb = fc.string({
  unit: fc.constantFrom('a', 'é', '😀', '"', '\\', ' ', '}', ']', ',', 'z'),
  maxLength: 40,
});
const idArb = fc.stringMatching(/^wamid\.[A-Za-z0-9]{4,12}$/);
// Placeholders become bare integer lexemes above 2^53 after serialisation (see `serialise`).
const bigIdArb = fc.bigInt({ min: 2n ** 53n + 1n, max: 2n ** 63n }).map((n) => `__BIG_${n}__`);

const messageArb = fc.record({
  from: fc.constant('16505551234'),
  id: idArb,
  timestamp: fc.constant('1749416383'),
  type: fc.constant('text'),
  text: fc.record({ body: textArb }),
});
const statusArb = fc.record(
  {
    id: idArb,
    status: fc.constantFrom('sent', 'delivered', 'read', 'failed'),
    timestamp: fc.constant('1749416383'),
    recipient_id: fc.constant('16505551234'),
    recipient_participant_id: fc.constant('447700900123'),
  },
  { requiredKeys: ['id', 'status', 'timestamp', 'recipient_id'] },
);
const errorArb = fc.record({ code: fc.integer({ min: 100, max: 200_000 }), title: textArb });

const messagesChangeArb = fc
  .record(
    {
      messages: fc.array(messageArb, { maxLength: 12 }),
      statuses: fc.array(statusArb, { maxLength: 12 }),
      errors: fc.array(errorArb, { maxLength: 3 }),
    },
    { requiredKeys: [] },
  )
  .chain((arrays) =>
    fc.shuffledSubarray(Object.keys(arrays), { minLength: Object.keys(arrays).length }).map((order) => ({
      field: 'messages',
      value: {
        messaging_product: 'whatsapp',
        metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
        contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
        // Random member order: the cut arrays may come in any order in the text.
        ...Object.fromEntries(order.map((name) => [name, arrays[name as keyof typeof arrays]])),
      },
    })),
  );

const templateChangeArb = fc.record({
  field: fc.constant('message_template_status_update'),
  value: fc.record({
    event: fc.constantFrom('APPROVED', 'REJECTED'),
    message_template_id: bigIdArb,
    message_template_name: textArb,
  }),
});

// `calls` may carry call events, business-initiated call states, or both, in either order.
const callsChangeArb = fc
  .record(
    {
      calls: fc.array(
        fc.record({
          id: idArb,
          event: fc.constantFrom('connect', 'terminate'),
          timestamp: fc.constant('1749416400'),
        }),
        { maxLength: 8 },
      ),
      statuses: fc.array(
        fc.record({
          id: idArb,
          timestamp: fc.constant('1749416401'),
          type: fc.constant('call'),
          status: fc.constantFrom('RINGING', 'ACCEPTED', 'REJECTED'),
          recipient_id: fc.constant('16505551234'),
        }),
        { maxLength: 8 },
      ),
    },
    { requiredKeys: [] },
  )
  .chain((arrays) =>
    fc.shuffledSubarray(Object.keys(arrays), { minLength: Object.keys(arrays).length }).map((order) => ({
      field: 'calls',
      value: {
        metadata: { phone_number_id: '106540352242922' },
        ...Object.fromEntries(order.map((name) => [name, arrays[name as keyof typeof arrays]])),
      },
    })),
  );

const unknownChangeArb = fc.record({
  field: fc.constant('some_future_field'),
  value: fc.record({ note: textArb }),
});

const changeArb = fc.oneof(
  { weight: 4, arbitrary: messagesChangeArb },
  { weight: 1, arbitrary: templateChangeArb },
  { weight: 1, arbitrary: callsChangeArb },
  { weight: 1, arbitrary: unknownChangeArb },
);

const entryArb = fc.record({
  id: fc.constantFrom('102290129340398', '104882371930562'),
  time: fc.constant(1749416383),
  changes: fc.array(changeArb, { minLength: 1, maxLength: 4 }),
});

const envelopeArb = fc.record({
  object: fc.constant('whatsapp_business_account'),
  entry: fc.array(entryArb, { maxLength: 4 }),
});

/** JSON with whitespace at random structural places (seeded), so compact and padded containers mix. */
function withRandomWhitespace(value: unknown, seed: number): string {
  const random = seededRandom(seed);
  const ws = () => [' ', '', '', '', '\n  ', '', '\t'][Math.floor(random() * 7)] ?? '';
  const write = (node: unknown): string => {
    if (Array.isArray(node))
      return `[${ws()}${node.map((item) => write(item)).join(`${ws()},${ws()}`)}${ws()}]`;
    if (node !== null && typeof node === 'object') {
      const members = Object.entries(node).map(
        ([name, item]) => `${JSON.stringify(name)}${ws()}:${ws()}${write(item)}`,
      );
      return `{${ws()}${members.join(`${ws()},${ws()}`)}${ws()}}`;
    }
    return JSON.stringify(node);
  };
  return write(value);
}

type Layout = 'compact' | 'indented' | number;

/** JSON text as Meta might send it (compact), or indented, or with random whitespace; optionally with every
 * non-ASCII character escaped. */
function serialise(value: unknown, layout: Layout | boolean, escapeUnicode: boolean): string {
  const shaped =
    typeof layout === 'number'
      ? withRandomWhitespace(value, layout)
      : JSON.stringify(value, null, layout === true || layout === 'indented' ? 2 : undefined);
  let text = shaped.replace(/"__BIG_(\d+)__"/g, '$1');
  if (escapeUnicode) {
    text = text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }
  return text;
}

describe('splitDelivery', () => {
  it('keeps every event exactly once, in order, in valid envelopes no larger than the limit', () => {
    fc.assert(
      fc.property(
        envelopeArb,
        fc.oneof(fc.constantFrom<Layout>('compact', 'indented'), fc.integer({ min: 1, max: 2 ** 31 })),
        fc.boolean(),
        fc.integer({ min: 200, max: 6000 }),
        (envelope, layout, escapeUnicode, maxBytes) => {
          const body = serialise(envelope, layout, escapeUnicode);
          expect(JSON.parse(body)).toBeTruthy();
          const { parts, oversized } = splitDelivery(body, maxBytes);

          for (const part of parts) expect(bytes(part)).toBeLessThanOrEqual(maxBytes);
          for (const piece of oversized) expect(bytes(piece)).toBeGreaterThan(maxBytes);

          const original = keysOfEnvelope(body);
          const fromParts = parts.flatMap(keysOfEnvelope);
          const fromOversized = oversized.flatMap(keysOfEnvelope);
          expect(sorted([...fromParts, ...fromOversized])).toEqual(sorted(original));
          if (oversized.length === 0) expect(fromParts).toEqual(original);
          expect(sorted([...parts, ...oversized].flatMap(unknownFieldsOf))).toEqual(
            sorted(unknownFieldsOf(body)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never leaves a part empty of entries', () => {
    fc.assert(
      fc.property(envelopeArb, fc.integer({ min: 200, max: 4000 }), (envelope, maxBytes) => {
        const { parts } = splitDelivery(serialise(envelope, false, false), maxBytes);
        for (const part of parts)
          expect((JSON.parse(part) as { entry: unknown[] }).entry.length).toBeGreaterThan(0);
      }),
    );
  });

  it('keeps metadata and contacts in every part of a split messages change', () => {
    const messages = Array.from({ length: 30 }, (_, i) => ({
      id: `wamid.m${i}`,
      type: 'text',
      text: { body: 'x'.repeat(50) },
    }));
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1',
          time: 2,
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: '106540352242922' },
                contacts: [{ wa_id: '16505551234' }],
                messages,
              },
            },
          ],
        },
      ],
    });
    const { parts, oversized } = splitDelivery(body, 1000);
    expect(oversized).toEqual([]);
    expect(parts.length).toBeGreaterThan(3);
    for (const part of parts) {
      const value = JSON.parse(part).entry[0].changes[0].value;
      expect(value.metadata).toEqual({ phone_number_id: '106540352242922' });
      expect(value.contacts).toEqual([{ wa_id: '16505551234' }]);
      expect(value.messaging_product).toBe('whatsapp');
    }
  });

  it('copies each event byte for byte: escapes and ids above 2^53 are not rewritten', () => {
    const item = '{"id":"wamid.A","type":"text","text":{"body":"caf\\u00e9 \\ud83d\\ude00"}}';
    const template =
      '{"field":"message_template_status_update","value":{"event":"APPROVED","message_template_id":1298845512337760123}}';
    const body = `{"object":"whatsapp_business_account","entry":[{"id":"1","time":2,"changes":[${template},{"field":"messages","value":{"messages":[${item},${item.replace('wamid.A', 'wamid.B')}]}}]}]}`;
    const { parts } = splitDelivery(body, 260);
    expect(parts.length).toBeGreaterThan(1);
    const joined = parts.join('\n');
    expect(joined).toContain(item);
    expect(joined).toContain('1298845512337760123');
    expect(parts.flatMap(keysOfEnvelope)).toEqual(keysOfEnvelope(body));
  });

  it('returns a single event larger than the limit as an oversized envelope of its own', () => {
    const big = { id: 'wamid.BIG', type: 'text', text: { body: 'y'.repeat(2000) } };
    const small = { id: 'wamid.SMALL', type: 'text', text: { body: 'hi' } };
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        { id: '1', time: 2, changes: [{ field: 'messages', value: { messages: [small, big, small] } }] },
      ],
    });
    const { parts, oversized } = splitDelivery(body, 1000);
    expect(oversized.map(keysOfEnvelope)).toEqual([['msg:wamid.BIG']]);
    expect(parts.flatMap(keysOfEnvelope)).toEqual(['msg:wamid.SMALL', 'msg:wamid.SMALL']);
  });
});
