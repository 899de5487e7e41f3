/**
 * Fuzzing the receiver's whole orchestration (`receiveWebhook`, over an in-memory queue that never fails) and
 * the consumer's key derivation with fast-check, from a fixed seed:
 *
 * - any request (method, header names and values, signature right or wrong, body as text or bytes, random
 *   or real): no throw, no 5xx, and nothing stored unless the signature is right for these exact bytes;
 * - real bodies mutated (truncated, bits flipped, bytes inserted or cut, JSON spliced in, nested deep) and
 *   then signed correctly: 200, and either enqueued (and then usable by the consumer, with the same keys)
 *   or quarantined whole (and then unusable to the consumer too), never both, never neither;
 * - `extractEvents` never throws, for any JSON, any envelope-shaped JSON, any bytes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  eventItemArrays,
  extractEvents,
  extractEventsFromEnvelope,
  KNOWN_FIELDS,
} from '../../functions/events/extract-events.ts';
import { stringifyWebhookJson } from '../../functions/events/parse-json.ts';
import type { JsonObject } from '../../functions/events/types.ts';
import {
  type ReceiverDependencies,
  receiveWebhook,
  type WebhookRequest,
} from '../../functions/receiver/receive-webhook.ts';
import { signBody } from '../../functions/receiver/signature.ts';
import { recordRunIfAsked, startRun } from '../../lab/docs/reliability-run-record.ts';
import { DEFAULT_SUBSCRIBERS, RecordingQueues } from '../support/recording-queues.ts';
import { buildBodies, layout, taggedSpecs } from '../support/webhooks/webhook-arbitraries.ts';

const SEED = 20_261_130;
const SECRETS = ['fuzz-app-secret', 'fuzz-rotated-app-secret'] as const;
const VERIFY_TOKEN = 'fuzz-verify-token';
const ENVELOPE_REASONS = ['invalid-json', 'not-whatsapp-envelope'];
const REQUEST_RUNS = 1_000;
const MUTATION_RUNS = 400;
const JSON_VALUE_RUNS = 1_000;
const BYTES_RUNS = 500;

/**
 * docs/reliability.md shows the recorded runs (npm run docs:runs): each test's report line, recorded after all
 * four tests passed (a filtered or failed run is not).
 */
const TESTS_IN_FILE = 4;
const recording = startRun();
const reportLines: string[] = [];
const summary: Record<string, number> = {};
let testsPassed = 0;
/** Prints the test's line and keeps it, with its counts, for the record. */
function report(line: string, counts: Record<string, number>): void {
  console.info(line);
  reportLines.push(line);
  Object.assign(summary, counts);
  onTestFinished(({ task }) => {
    if (task.result?.state === 'pass') testsPassed++;
  });
}
afterAll(() => {
  if (testsPassed === TESTS_IN_FILE)
    recordRunIfAsked('receiver-fuzz', recording.finish(reportLines, summary));
});

function dependencies(queue: RecordingQueues): ReceiverDependencies {
  const ignore = () => undefined;
  return {
    secrets: { origin: 'fuzz', load: async () => ({ appSecrets: SECRETS, verifyToken: VERIFY_TOKEN }) },
    subscribers: DEFAULT_SUBSCRIBERS,
    fanOut: queue,
    quarantine: queue,
    metrics: { addMetric: ignore },
    logger: { info: ignore, warn: ignore, error: ignore },
    clock: () => Date.UTC(2026, 10, 30),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Bodies

const FIXTURES_DIR = new URL('../fixtures/webhooks/', import.meta.url);
const fixtureBodies = readdirSync(FIXTURES_DIR)
  .filter((name) => name.endsWith('.json'))
  .map((name) => readFileSync(new URL(name, FIXTURES_DIR)));

/** A real webhook body: a captured fixture, or events generated and laid out at random. */
const webhookBody: fc.Arbitrary<Buffer> = fc.oneof(
  fc.constantFrom(...fixtureBodies),
  taggedSpecs({ minLength: 1, maxLength: 6 }).chain((specs) =>
    layout(specs.length, 1).map(({ order, placements }) =>
      Buffer.from(stringifyWebhookJson(buildBodies(specs, order, placements)[0] as JsonObject), 'utf8'),
    ),
  ),
);

const deeplyNested = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

type Mutation = (body: Buffer) => Buffer;
const mutation: fc.Arbitrary<{ name: string; apply: Mutation }> = fc.oneof(
  fc
    .nat()
    .map((cut) => ({ name: 'truncate', apply: (b: Buffer) => b.subarray(0, cut % Math.max(1, b.length)) })),
  fc
    .array(fc.record({ at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }), { minLength: 1, maxLength: 4 })
    .map((flips) => ({
      name: 'bit flips',
      apply: (b: Buffer) => {
        const copy = Buffer.from(b);
        for (const { at, bit } of flips) {
          const index = at % Math.max(1, copy.length);
          copy[index] = (copy[index] ?? 0) ^ (1 << bit);
        }
        return copy;
      },
    })),
  fc.record({ at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 24 }) }).map(({ at, bytes }) => ({
    name: 'insert bytes',
    apply: (b: Buffer) => {
      const index = at % (b.length + 1);
      return Buffer.concat([b.subarray(0, index), bytes, b.subarray(index)]);
    },
  })),
  fc.record({ at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }).map(({ at, length }) => ({
    name: 'cut bytes',
    apply: (b: Buffer) => {
      const index = at % Math.max(1, b.length);
      return Buffer.concat([b.subarray(0, index), b.subarray(index + length)]);
    },
  })),
  fc
    .record({ at: fc.nat(), length: fc.nat({ max: 40 }), json: fc.json({ maxDepth: 3 }) })
    .map(({ at, length, json }) => ({
      name: 'splice JSON',
      apply: (b: Buffer) => {
        const index = at % (b.length + 1);
        return Buffer.concat([b.subarray(0, index), Buffer.from(json), b.subarray(index + length)]);
      },
    })),
  fc.jsonValue({ maxDepth: 4 }).map((entry) => ({
    name: 'random entry',
    apply: () => Buffer.from(JSON.stringify({ object: 'whatsapp_business_account', entry })),
  })),
  fc.integer({ min: 1_000, max: 60_000 }).map((depth) => ({
    name: 'nested deep',
    apply: (b: Buffer) => Buffer.from(deeplyNested(depth, b.toString('utf8'))),
  })),
  fc.integer({ min: 1_000, max: 60_000 }).map((depth) => ({
    name: 'deep key part',
    apply: () =>
      Buffer.from(
        `{"object":"whatsapp_business_account","entry":[{"id":"1","time":1,"changes":[{"field":"messages",` +
          `"value":{"messages":[{"id":${deeplyNested(depth, '123456789012345678901')},"type":"text"}]}}]}]}`,
      ),
  })),
);

const anyBody: fc.Arbitrary<Buffer> = fc.oneof(
  webhookBody,
  fc.uint8Array({ maxLength: 1_024 }).map((bytes) => Buffer.from(bytes)),
  fc.string({ unit: 'binary', maxLength: 256 }).map((text) => Buffer.from(text, 'utf8')),
  fc.json({ maxDepth: 4 }).map((text) => Buffer.from(text, 'utf8')),
  fc.tuple(webhookBody, mutation).map(([body, m]) => m.apply(body)),
);

// ---------------------------------------------------------------------------------------------------------
// Requests

type SignatureKind =
  | 'valid'
  | 'valid, second secret'
  | 'upper-case hex'
  | 'valid, padded with spaces'
  | 'wrong secret'
  | 'signed other bytes'
  | 'random text'
  | 'random hex'
  | 'no sha256= prefix'
  | 'hex cut short'
  | 'empty'
  | 'missing';

const VALID_KINDS = new Set<SignatureKind>(['valid', 'valid, second secret', 'valid, padded with spaces']);

function signatureHeader(kind: SignatureKind, body: Buffer | string, noise: string): string | undefined {
  const hex = (secret: string, bytes: Buffer | string = body) =>
    signBody(bytes, secret).slice('sha256='.length);
  switch (kind) {
    case 'valid':
      return `sha256=${hex(SECRETS[0])}`;
    case 'valid, second secret':
      return `sha256=${hex(SECRETS[1])}`;
    case 'upper-case hex':
      // The right digest, not as Meta spells it: refused as malformed (docs/receiver.md, Signature rules).
      return `sha256=${hex(SECRETS[0]).toUpperCase()}`;
    case 'valid, padded with spaces':
      return `  sha256=${hex(SECRETS[1])} `;
    case 'wrong secret':
      return `sha256=${hex(`${SECRETS[0]}x`)}`;
    case 'signed other bytes':
      return `sha256=${hex(SECRETS[0], `${typeof body === 'string' ? body : body.toString('latin1')}.`)}`;
    case 'random text':
      return noise;
    case 'random hex':
      return `sha256=${Buffer.from(noise.padEnd(32, '0').slice(0, 32), 'latin1').toString('hex')}`;
    case 'no sha256= prefix':
      return hex(SECRETS[0]);
    case 'hex cut short':
      return `sha256=${hex(SECRETS[0]).slice(0, 63)}`;
    case 'empty':
      return '';
    case 'missing':
      return undefined;
  }
}

const request = fc.record({
  method: fc.oneof(
    fc.constantFrom('POST', 'POST', 'POST', 'post', 'GET', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'),
    fc.string({ maxLength: 8 }),
  ),
  body: anyBody,
  asText: fc.boolean(),
  signature: fc.constantFrom<SignatureKind>(
    'valid',
    'valid',
    'valid, second secret',
    'upper-case hex',
    'valid, padded with spaces',
    'wrong secret',
    'signed other bytes',
    'random text',
    'random hex',
    'no sha256= prefix',
    'hex cut short',
    'empty',
    'missing',
  ),
  headerName: fc.constantFrom('x-hub-signature-256', 'X-Hub-Signature-256', 'X-HUB-SIGNATURE-256'),
  noise: fc.string({ maxLength: 80 }),
  otherHeaders: fc.dictionary(
    fc.string({ minLength: 1, maxLength: 20 }).filter((name) => name.toLowerCase() !== 'x-hub-signature-256'),
    fc.string({ maxLength: 40 }),
    { maxKeys: 4 },
  ),
  query: fc.dictionary(
    fc.string({ maxLength: 12 }),
    fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
    {
      maxKeys: 3,
    },
  ),
  maximumBodyBytes: fc.constantFrom(1_024, 4_096, 256 * 1024 - 256),
});

describe('receiver fuzzing', () => {
  it('never throws, never answers 5xx, and stores nothing without a valid signature, for any request', async () => {
    const outcomes = { accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        // API Gateway hands the body over as text (decoded as UTF-8) or as the bytes themselves.
        const body = r.asText ? r.body.toString('utf8') : r.body;
        const header = signatureHeader(r.signature, body, r.noise);
        const headers: Record<string, string | undefined> = { ...r.otherHeaders };
        if (header !== undefined) headers[r.headerName] = header;
        const queue = new RecordingQueues(r.maximumBodyBytes);
        const webhookRequest: WebhookRequest = {
          method: r.method,
          path: '/webhook',
          query: r.query,
          headers,
          body,
          requestId: 'fuzz',
        };

        const response = await receiveWebhook(webhookRequest, dependencies(queue));

        expect(response.statusCode).toBeLessThan(500);
        const method = r.method.toUpperCase();
        if (method === 'POST' && VALID_KINDS.has(r.signature)) {
          outcomes.accepted++;
          expect(response.statusCode).toBe(200);
          // A signed empty body is acknowledged with nothing to keep (SQS refuses an empty message).
          expect(queue.touched).toBe(Buffer.byteLength(body) > 0);
        } else {
          outcomes.refused++;
          expect(queue.touched).toBe(false);
          if (method === 'POST') expect(response.statusCode).toBe(401);
          else if (method === 'GET') expect([200, 400, 403]).toContain(response.statusCode);
          else expect(response.statusCode).toBe(405);
        }
      }),
      { seed: SEED, numRuns: REQUEST_RUNS },
    );
    report(`fuzzed requests: ${outcomes.accepted} signed POSTs accepted, ${outcomes.refused} refused`, {
      requests: outcomes.accepted + outcomes.refused,
      requestsAccepted: outcomes.accepted,
      requestsRefused: outcomes.refused,
    });
    // Every run was checked, and both outcomes were reached.
    expect(outcomes.accepted + outcomes.refused).toBe(REQUEST_RUNS);
    expect(outcomes.accepted).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);
  }, 120_000);

  it('answers a correctly signed mutated body 200 and either enqueues it usable or quarantines it whole', async () => {
    const seen = new Map<string, { enqueued: number; quarantined: number }>();
    let emptyBodies = 0;
    let keysCompared = 0;
    await fc.assert(
      fc.asyncProperty(
        webhookBody,
        mutation,
        fc.constantFrom(...SECRETS),
        fc.boolean(),
        async (original, m, secret, asText) => {
          const mutated = m.apply(original);
          // As text, the receiver sees (and Meta would have signed) the UTF-8 encoding of the decoded text.
          const body = asText ? mutated.toString('utf8') : mutated;
          const bytes = Buffer.from(body);
          const queue = new RecordingQueues();
          const response = await receiveWebhook(
            {
              method: 'POST',
              path: '/webhook',
              query: {},
              headers: { 'x-hub-signature-256': signBody(body, secret) },
              body,
              requestId: 'fuzz-mutated',
            },
            dependencies(queue),
          );

          expect(response.statusCode).toBe(200);
          const tally = seen.get(m.name) ?? { enqueued: 0, quarantined: 0 };
          seen.set(m.name, tally);
          if (bytes.length === 0) {
            emptyBodies++;
            expect(queue.touched).toBe(false);
            return;
          }
          const consumerView = extractEvents(bytes);
          const enqueued = queue.storedFor('default');
          if (enqueued.length > 0) {
            tally.enqueued++;
            expect(enqueued).toHaveLength(1);
            expect(queue.quarantined.filter((q) => ENVELOPE_REASONS.includes(q.reason))).toEqual([]);
            const parts = (enqueued[0] ?? []).map((part) => extractEvents(part));
            // What the receiver accepted, the consumer can use, and derives the same keys from: a body nested
            // past the consumer's lossless parser (MAX_LOSSLESS_NESTING) is refused by readDelivery, whatever
            // its numbers, so none is enqueued for the consumer to refuse.
            expect(parts.every((part) => part.ok)).toBe(true);
            expect(consumerView.ok).toBe(true);
            const keysOf = (e: typeof consumerView) => (e.ok ? e.events.map((event) => event.key) : []);
            expect(parts.flatMap(keysOf)).toEqual(keysOf(consumerView));
            keysCompared++;
          } else {
            tally.quarantined++;
            expect(queue.quarantined).toHaveLength(1);
            const [quarantined] = queue.quarantined;
            expect(ENVELOPE_REASONS).toContain(quarantined?.reason);
            // Whole and exact: an operator can replay it.
            expect(quarantined?.raw.equals(bytes)).toBe(true);
            expect(consumerView.ok).toBe(false);
          }
        },
      ),
      { seed: SEED + 1, numRuns: MUTATION_RUNS },
    );
    // The mutations did reach both outcomes.
    const totals = [...seen.values()].reduce(
      (sum, t) => ({ enqueued: sum.enqueued + t.enqueued, quarantined: sum.quarantined + t.quarantined }),
      { enqueued: 0, quarantined: 0 },
    );
    report(
      `signed mutations: ${[...seen].map(([name, t]) => `${name} ${t.enqueued}/${t.quarantined}`).join(', ')} ` +
        `(enqueued/quarantined); keys compared ${keysCompared}; empty bodies ${emptyBodies}`,
      {
        mutatedBodies: totals.enqueued + totals.quarantined + emptyBodies,
        mutationsEnqueued: totals.enqueued,
        mutationsQuarantined: totals.quarantined,
        emptyBodies,
      },
    );
    // Every run was checked, and the mutations did reach both outcomes.
    expect(totals.enqueued + totals.quarantined + emptyBodies).toBe(MUTATION_RUNS);
    expect(keysCompared).toBe(totals.enqueued);
    expect(keysCompared).toBeGreaterThan(0);
    expect(totals.quarantined).toBeGreaterThan(0);
  }, 120_000);
});

describe('key derivation fuzzing', () => {
  const envelopeLike = fc.record({
    object: fc.oneof(fc.constant('whatsapp_business_account'), fc.jsonValue({ maxDepth: 1 })),
    entry: fc.oneof(
      fc.array(
        fc.record(
          {
            id: fc.jsonValue({ maxDepth: 2 }),
            time: fc.jsonValue({ maxDepth: 1 }),
            changes: fc.oneof(
              fc.array(
                fc.record(
                  {
                    field: fc.oneof(fc.constantFrom(...KNOWN_FIELDS), fc.jsonValue({ maxDepth: 1 })),
                    value: fc.oneof(
                      fc.jsonValue({ maxDepth: 3 }),
                      fc.dictionary(
                        fc.constantFrom(
                          'messages',
                          'statuses',
                          'errors',
                          'metadata',
                          ...KNOWN_FIELDS.flatMap((field) => eventItemArrays(field)),
                        ),
                        fc.jsonValue({ maxDepth: 3 }),
                        { maxKeys: 4 },
                      ),
                    ),
                  },
                  { requiredKeys: [] },
                ),
                { maxLength: 4 },
              ),
              fc.jsonValue({ maxDepth: 2 }),
            ),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
      fc.jsonValue({ maxDepth: 2 }),
    ),
  });

  it('never throws for any JSON value, parsed or as text', () => {
    let runs = 0;
    let keysChecked = 0;
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 5 }), envelopeLike), (value) => {
        runs++;
        const fromValue = extractEventsFromEnvelope(value);
        const fromText = extractEvents(JSON.stringify(value));
        expect(typeof fromValue.ok).toBe('boolean');
        expect(fromText.ok).toBe(fromValue.ok);
        for (const extraction of [fromValue, fromText]) {
          if (!extraction.ok) continue;
          for (const event of extraction.events) {
            keysChecked++;
            expect(event.key).toEqual(expect.any(String));
          }
        }
      }),
      { seed: SEED + 2, numRuns: JSON_VALUE_RUNS },
    );
    report(`fuzzed JSON values: ${runs} runs, ${keysChecked} event keys checked`, {
      jsonValues: runs,
      jsonKeysChecked: keysChecked,
    });
    expect(runs).toBe(JSON_VALUE_RUNS);
    expect(keysChecked).toBeGreaterThan(0);
  });

  it('never throws for any bytes or text, and judges bytes and their text alike', () => {
    let runs = 0;
    let textsCompared = 0;
    let keysCompared = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 2_048 }).map((bytes) => Buffer.from(bytes)),
          fc.tuple(webhookBody, mutation).map(([body, m]) => m.apply(body)),
        ),
        (bytes) => {
          runs++;
          const fromBytes = extractEvents(bytes);
          expect(typeof fromBytes.ok).toBe('boolean');
          const text = bytes.toString('utf8');
          if (Buffer.from(text, 'utf8').equals(bytes)) {
            textsCompared++;
            const fromText = extractEvents(text);
            expect(fromText.ok).toBe(fromBytes.ok);
            if (fromText.ok && fromBytes.ok) {
              keysCompared++;
              expect(fromText.events.map((e) => e.key)).toEqual(fromBytes.events.map((e) => e.key));
            }
          }
        },
      ),
      { seed: SEED + 3, numRuns: BYTES_RUNS },
    );
    report(
      `fuzzed bytes: ${runs} runs, ${textsCompared} compared as text, ${keysCompared} key lists compared`,
      {
        byteStrings: runs,
        bytesComparedAsText: textsCompared,
      },
    );
    expect(runs).toBe(BYTES_RUNS);
    expect(textsCompared).toBeGreaterThan(0);
    expect(keysCompared).toBeGreaterThan(0);
  });
});
