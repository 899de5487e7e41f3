import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { LosslessNumber, parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import {
  eventItemArrays,
  extractEvents,
  extractEventsFromEnvelope,
  KNOWN_FIELDS,
} from '../../../functions/events/extract-events.ts';
import { parseWebhookJson, stringifyWebhookJson } from '../../../functions/events/parse-json.ts';
import type { JsonObject } from '../../../functions/events/types.ts';
import { keysOfEnvelope } from '../../support/webhooks/event-keys.ts';
import { writeJson } from '../../support/webhooks/json-writer.ts';
import {
  buildBodies,
  layout,
  soloBody,
  taggedSpecs,
  wamid,
} from '../../support/webhooks/webhook-arbitraries.ts';

const FIXTURES = resolve(import.meta.dirname, '../../fixtures/webhooks');

/** Keys of the events of several bodies, grouped by the `_tag` of the generated event they came from. */
function keysByTag(bodies: readonly JsonObject[]): Map<number, string[]> {
  const byTag = new Map<number, string[]>();
  for (const body of bodies) {
    const extraction = extractEvents(stringifyWebhookJson(body));
    if (!extraction.ok) throw new Error(`expected a webhook envelope: ${extraction.reason}`);
    for (const event of extraction.events) {
      const tag = event.payload._tag as number;
      byTag.set(tag, [...(byTag.get(tag) ?? []), event.key]);
    }
  }
  return byTag;
}

const validFixtureBodies = readdirSync(FIXTURES)
  .filter((file) => file.endsWith('.json'))
  .map((file) => readFileSync(join(FIXTURES, file), 'utf8'))
  .filter((text) => extractEvents(text).ok);

const spelling = fc.record({
  seed: fc.integer(),
  asciiEscapeRate: fc.constantFrom(0, 0.1, 1),
  escapeNonAscii: fc.boolean(),
  escapeSlash: fc.boolean(),
  whitespace: fc.constantFrom([''], [' '], ['', ' ', '\n', '\t', '\r\n', '    ']),
});

describe('property (a): splitting or re-batching never changes an event key', () => {
  it('every event keeps its solo key in any bodies, entries, changes and order', () => {
    fc.assert(
      fc.property(
        taggedSpecs({ minLength: 1, maxLength: 25 }).chain((specs) =>
          fc.record({ specs: fc.constant(specs), layout: layout(specs.length, 4) }),
        ),
        ({ specs, layout: { order, placements } }) => {
          const byTag = keysByTag(buildBodies(specs, order, placements));
          expect(byTag.size).toBe(specs.length);
          specs.forEach((spec, tag) => {
            expect(byTag.get(tag)).toEqual(keysOfEnvelope(soloBody(spec)));
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a body split on eventItemArrays boundaries yields the same keys, in the same order', () => {
    fc.assert(
      fc.property(
        taggedSpecs({ minLength: 1, maxLength: 25 }),
        fc.integer({ min: 1, max: 5 }),
        (specs, pieces) => {
          const order = specs.map((_, index) => index);
          const [body] = buildBodies(
            specs,
            order,
            order.map(() => ({ body: 0, entrySlot: 0, changeSlot: 0 })),
          );
          const whole = keysOfEnvelope(stringifyWebhookJson(body as JsonObject));
          // Split every splittable array of every change into `pieces` slices, each slice its own body.
          const split: JsonObject[] = [];
          for (const entry of (body as { entry: JsonObject[] }).entry) {
            for (const change of entry.changes as JsonObject[]) {
              const value = change.value as JsonObject;
              const arrays = eventItemArrays(change.field as string).filter((name) =>
                Array.isArray(value[name]),
              );
              if (arrays.length === 0) {
                split.push({ object: 'whatsapp_business_account', entry: [{ ...entry, changes: [change] }] });
                continue;
              }
              for (const name of arrays) {
                const items = value[name] as JsonObject[];
                const size = Math.ceil(items.length / pieces);
                for (let start = 0; start < items.length; start += size) {
                  const rest = Object.fromEntries(
                    Object.entries(value).filter(
                      ([key]) => !eventItemArrays(change.field as string).includes(key),
                    ),
                  );
                  const piece: JsonObject = {
                    field: change.field as string,
                    value: { ...rest, [name]: items.slice(start, start + size) },
                  };
                  split.push({
                    object: 'whatsapp_business_account',
                    entry: [{ ...entry, changes: [piece] }],
                  });
                }
              }
            }
          }
          expect(split.flatMap((piece) => keysOfEnvelope(stringifyWebhookJson(piece)))).toEqual(whole);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('property (b): re-serialising with other whitespace or escaping never changes keys', () => {
  it('holds for every fixture', () => {
    fc.assert(
      fc.property(fc.constantFrom(...validFixtureBodies), spelling, (text, style) => {
        const parsed = parseWebhookJson(text);
        if (!parsed.ok) throw new Error('fixture must parse');
        expect(keysOfEnvelope(writeJson(parsed.body, style))).toEqual(keysOfEnvelope(text));
      }),
      { numRuns: 300 },
    );
  });

  it('holds for generated bodies with arbitrary text and large template ids', () => {
    fc.assert(
      fc.property(taggedSpecs({ minLength: 1, maxLength: 15 }), spelling, (specs, style) => {
        const order = specs.map((_, index) => index);
        const [body] = buildBodies(
          specs,
          order,
          order.map(() => ({ body: 0, entrySlot: 0, changeSlot: 0 })),
        );
        const compact = stringifyWebhookJson(body as JsonObject);
        const respelled = writeJson(body, style);
        expect(keysOfEnvelope(respelled)).toEqual(keysOfEnvelope(compact));
        expect(keysOfEnvelope(new TextEncoder().encode(respelled))).toEqual(keysOfEnvelope(compact));
      }),
      { numRuns: 200 },
    );
  });

  it('escaping every non-ASCII character and every slash keeps the keys of the escaped-unicode fixture', () => {
    const text = readFileSync(join(FIXTURES, 'escaped-unicode.json'), 'utf8');
    const parsed = parseWebhookJson(text);
    if (!parsed.ok) throw new Error('fixture must parse');
    const allEscaped = writeJson(parsed.body, {
      seed: 1,
      asciiEscapeRate: 0,
      escapeNonAscii: true,
      escapeSlash: true,
      whitespace: [''],
    });
    expect(allEscaped).toMatch(/^[\x20-\x7e]*$/);
    expect(keysOfEnvelope(allEscaped)).toEqual(keysOfEnvelope(text));
  });
});

describe('property (c): two different wamids never share a key', () => {
  const event = fc.record({
    asStatus: fc.boolean(),
    status: fc.stringMatching(/^[a-z]{1,10}$/),
    participant: fc.option(fc.stringMatching(/^[0-9]{6,15}$/), { nil: undefined }),
  });

  // Real wamids of one conversation share long prefixes: pair random ids with near-identical ones.
  const wamidPair = fc
    .oneof(
      fc.tuple(wamid, wamid),
      fc
        .tuple(wamid, fc.stringMatching(/^[A-Za-z0-9+/=_-]{1,8}$/))
        .map(([id, tail]) => [id, id + tail] as const),
      fc.tuple(wamid, fc.nat(), fc.constantFrom('A', 'Q', 'g', 'w', '+', '/', '=')).map(([id, at, char]) => {
        const index = 6 + (at % (id.length - 6));
        return [id, id.slice(0, index) + char + id.slice(index + 1)] as const;
      }),
    )
    .filter(([idA, idB]) => idA !== idB);

  it('holds for any mix of messages and statuses, in one body or in two', () => {
    fc.assert(
      fc.property(wamidPair, event, event, ([idA, idB], a, b) => {
        const item = (id: string, spec: typeof a) =>
          spec.asStatus
            ? { statuses: [{ id, status: spec.status, recipient_participant_id: spec.participant }] }
            : { messages: [{ id, type: 'text' }] };
        const body = (...values: object[]) =>
          JSON.stringify({
            object: 'whatsapp_business_account',
            entry: [{ id: '1', changes: values.map((value) => ({ field: 'messages', value })) }],
          });
        const together = keysOfEnvelope(body(item(idA, a), item(idB, b)));
        expect(together).toHaveLength(2);
        expect(together[0]).not.toBe(together[1]);
        const [alone] = keysOfEnvelope(body(item(idA, a)));
        expect(keysOfEnvelope(body(item(idB, b)))).not.toContain(alone);
      }),
      { numRuns: 500 },
    );
  });
});

describe('property (d): the parser never throws', () => {
  it('parses any JSON value exactly as JSON.parse does and extracts without throwing', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        const parsed = parseWebhookJson(text);
        expect(parsed).toEqual({ ok: true, body: JSON.parse(text) });
        expect(() => extractEventsFromEnvelope(value)).not.toThrow();
        expect(extractEvents(text).ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('accepts exactly the strings JSON.parse accepts, and never throws on any string', () => {
    const nearlyJson = fc
      .tuple(
        fc.jsonValue().map((value) => JSON.stringify(value)),
        fc.nat(),
        fc.string({ maxLength: 3 }),
      )
      .map(([text, at, noise]) => {
        const cut = at % (text.length + 1);
        return text.slice(0, cut) + noise + text.slice(cut + 1);
      });
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), nearlyJson), (text) => {
        let nativeOk = true;
        try {
          JSON.parse(text);
        } catch {
          nativeOk = false;
        }
        const parsed = parseWebhookJson(text);
        expect(parsed.ok).toBe(nativeOk);
        if (!parsed.ok) expect(parsed.reason).toBe('invalid-json');
        expect(() => extractEvents(text)).not.toThrow();
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps every number lexeme exactly, however strings with quotes and backslashes surround it', () => {
    const lexeme = fc.oneof(
      fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
      fc
        .tuple(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.stringMatching(/^[0-9]{1,6}$/))
        .map(([whole, fraction]) => `${whole}.${fraction}`),
      fc.constantFrom('-0', '1e3', '1E+3', '2.5e-7', '0', '-1', '1.0', '100', '9007199254740993'),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((number) => JSON.stringify(number)),
    );
    const trickyText = fc.string({
      unit: fc.constantFrom('\\', '"', 'a', '1', '/', 'é', '\n', '-', '9', '🚀'),
    });
    const member = fc
      .tuple(trickyText, lexeme, fc.boolean())
      .map(([text, number, asKey]) =>
        asKey ? `{${JSON.stringify(text)}:${number}}` : `${JSON.stringify(text)},${number}`,
      );
    // The rule of the brief, applied by the plain lossless parser: the oracle for both parsing paths.
    const oracle = (text: string) =>
      parse(text, null, {
        parseNumber: (raw: string) => (String(Number(raw)) === raw ? Number(raw) : new LosslessNumber(raw)),
        onDuplicateKey: ({ newValue }) => newValue,
      });
    fc.assert(
      fc.property(fc.array(member, { maxLength: 12 }), (members) => {
        const text = `[${members.join(',')}]`;
        const parsed = parseWebhookJson(text);
        if (!parsed.ok) throw new Error(`generated JSON must parse: ${parsed.detail}`);
        expect(parsed.body).toEqual(oracle(text));
        expect(stringifyWebhookJson(parsed.body)).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });

  it('never throws on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const parsed = parseWebhookJson(bytes);
        expect(typeof parsed.ok).toBe('boolean');
        expect(() => extractEvents(bytes)).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });

  it('extracts from any envelope with arbitrary inner parts without throwing', () => {
    const arrayNames = [...new Set(KNOWN_FIELDS.flatMap((field) => eventItemArrays(field)))];
    const innerValue = fc.oneof(
      fc.jsonValue(),
      fc.dictionary(fc.constantFrom(...arrayNames, 'metadata', 'id', 'event', 'status'), fc.jsonValue()),
      fc.dictionary(
        fc.constantFrom(...arrayNames),
        fc.array(
          fc.oneof(fc.jsonValue(), fc.dictionary(fc.constantFrom('id', 'status', 'code'), fc.jsonValue())),
        ),
      ),
    );
    const change = fc.oneof(
      fc.jsonValue(),
      fc.record(
        { field: fc.oneof(fc.constantFrom(...KNOWN_FIELDS), fc.jsonValue()), value: innerValue },
        { requiredKeys: [] },
      ),
    );
    const entry = fc.oneof(
      fc.jsonValue(),
      fc.record(
        { id: fc.jsonValue(), time: fc.jsonValue(), changes: fc.oneof(fc.jsonValue(), fc.array(change)) },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 4 }), (entries) => {
        const body = { object: 'whatsapp_business_account', entry: entries };
        const fromValue = extractEventsFromEnvelope(body);
        expect(fromValue.ok).toBe(true);
        const fromText = extractEvents(JSON.stringify(body));
        expect(fromText.ok).toBe(true);
        if (!fromValue.ok || !fromText.ok) return;
        expect(fromText.events.map((event) => event.key)).toEqual(fromValue.events.map((event) => event.key));
        for (const event of fromValue.events) {
          expect(typeof event.key).toBe('string');
          expect(event.key.startsWith(event.kind === 'management' ? `${event.field}:` : '')).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('property (e): a body repeating an event yields its key once per repeat', () => {
  it('holds wherever the copies sit in the body', () => {
    fc.assert(
      fc.property(
        taggedSpecs({ minLength: 1, maxLength: 10 }).chain((specs) =>
          fc
            .record({ repeated: fc.nat(specs.length - 1), copies: fc.integer({ min: 2, max: 4 }) })
            .chain(({ repeated, copies }) => {
              const withCopies = [...specs, ...Array.from({ length: copies - 1 }, () => specs[repeated])];
              return fc.record({
                specs: fc.constant(withCopies as typeof specs),
                repeated: fc.constant(repeated),
                copies: fc.constant(copies),
                layout: layout(withCopies.length, 1),
              });
            }),
        ),
        ({ specs, repeated, copies, layout: { order, placements } }) => {
          const bodies = buildBodies(specs, order, placements);
          expect(bodies).toHaveLength(1);
          const keys = keysByTag(bodies).get(repeated) ?? [];
          const solo = keysOfEnvelope(soloBody(specs[repeated] as (typeof specs)[number]));
          expect(keys).toEqual(Array.from({ length: copies }, () => solo[0]));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('property (f): only the statuses of `messages` are message statuses', () => {
  it('a `calls` status is a `calls` management event, wherever it sits beside other events', () => {
    fc.assert(
      fc.property(
        taggedSpecs({ minLength: 1, maxLength: 25 }).chain((specs) =>
          fc.record({ specs: fc.constant(specs), layout: layout(specs.length, 2) }),
        ),
        ({ specs, layout: { order, placements } }) => {
          for (const body of buildBodies(specs, order, placements)) {
            const extraction = extractEvents(stringifyWebhookJson(body));
            if (!extraction.ok) throw new Error(`expected a webhook envelope: ${extraction.reason}`);
            for (const event of extraction.events) {
              const spec = specs[event.payload._tag as number];
              const isMessageStatus = spec?.field === 'messages' && spec.array === 'statuses';
              expect(event.kind === 'status').toBe(isMessageStatus);
              if (spec?.field === 'calls') {
                expect(event).toMatchObject({ field: 'calls', kind: 'management', metricField: 'calls' });
                const item: JsonObject = spec.item;
                const value = spec.array === 'statuses' ? item.status : item.event;
                expect(event.key).toBe(
                  `calls:${spec.entryId}:${String(item.timestamp)}:${String(item.id)}:${String(value)}`,
                );
              }
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
