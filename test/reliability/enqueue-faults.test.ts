/**
 * The REAL receiver handler (its own SQS client, built from the environment) while SQS `SendMessageBatch`
 * fails at the wire: HTTP 500s, throttling, dropped connections, or batches in which only some entries are
 * stored. The delivery is large enough to be split into several queue messages, so a partial store is
 * possible. Whatever fails, the receiver must not acknowledge a delivery it has not wholly stored (it
 * answers 503 so that Meta retries), and Meta's retry, once SQS is healthy, must be accepted and every event
 * processed exactly once end to end, the parts stored by the failed attempt included.
 */
import '../support/quiet-logs.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { inboundMessages, messagesBody } from '../../cli/meta-traffic/webhook-bodies.ts';
import { ENV } from '../../contract/environment.ts';
import { decodeSubscriberQueues, encodeSubscriberQueues } from '../../contract/subscribers.ts';
import { recordRunIfAsked, startRun } from '../../lab/docs/reliability-run-record.ts';
import { createPipeline, type Pipeline, restoreEnvironment } from '../support/pipeline-fixture.ts';
import { type SqsBatchFault, type SqsFaultProxy, startSqsFaultProxy } from '../support/sqs-fault-proxy.ts';
import { messageKey } from '../support/webhooks/delivery-workload.ts';
import { keysOfBody } from '../support/webhooks/event-keys.ts';

/** A queue message of at most 4 KiB: the 40-message delivery below becomes several parts. */
const MAXIMUM_MESSAGE_SIZE_BYTES = 4096;
const MESSAGES_PER_DELIVERY = 40;

/** The faults exercised, each reporting one line; the transient case below reports none. */
const FAULTS: readonly [SqsBatchFault, string][] = [
  ['server-error', 'HTTP 500 InternalError'],
  ['throttled', 'HTTP 400 ThrottlingException'],
  ['connection-reset', 'a dropped connection'],
  ['partial', 'SQS failing midway: 2 parts stored, the others refused in 200 batch answers'],
];
const TESTS_IN_FILE = FAULTS.length + 1;

/**
 * docs/reliability.md shows the recorded runs (npm run docs:runs): the file's report, recorded after every one
 * of its tests passed (a filtered or failed run is not).
 */
const recording = startRun();
const reports = new Map<
  SqsBatchFault,
  { line: string; failedCalls: number; stored: number; runEarly: number }
>();
let testsPassed = 0;
const countIfPassed = () =>
  onTestFinished(({ task }) => {
    if (task.result?.state === 'pass') testsPassed++;
  });

let proxy: SqsFaultProxy;
let pipeline: Pipeline | undefined;
beforeAll(async () => {
  proxy = await startSqsFaultProxy();
  // The SDK warns once per call that the queue URL's host (the proxy) is not its configured endpoint.
  const warn = console.warn.bind(console);
  vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    if (!String(args[0]).includes('differs from SQSClient resolved endpoint')) warn(...args);
  });
});
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
  proxy.fault = 'none';
  proxy.faultedCallsLeft = Number.POSITIVE_INFINITY;
  proxy.partialStoreLimit = 2;
  Object.assign(proxy.stats, { batchCalls: 0, faultedCalls: 0, entriesStored: 0, entriesFailed: 0 });
});
afterAll(async () => {
  await proxy.stop();
  vi.restoreAllMocks();
  restoreEnvironment();
  if (testsPassed !== TESTS_IN_FILE) return;
  const cases = FAULTS.map(([fault]) => reports.get(fault)).filter((r) => r !== undefined);
  const failedCalls = cases.map((r) => r.failedCalls);
  const partial = reports.get('partial');
  recordRunIfAsked(
    'enqueue-faults',
    recording.finish(
      cases.map((r) => r.line),
      {
        fewestFailedCalls: Math.min(...failedCalls),
        mostFailedCalls: Math.max(...failedCalls),
        partialPartsStored: partial?.stored ?? 0,
        partialEventsRunEarly: partial?.runEarly ?? 0,
      },
    ),
  );
});

async function pipelineBehindProxy(label: string): Promise<Pipeline> {
  const p = await createPipeline(
    label,
    { maximumMessageSizeBytes: MAXIMUM_MESSAGE_SIZE_BYTES },
    {},
    {
      receiverEnv: (env) => ({
        [ENV.subscriberQueues]: encodeSubscriberQueues(
          decodeSubscriberQueues(env[ENV.subscriberQueues] as string).map((queue) => ({
            ...queue,
            queueUrl: proxy.queueUrl(queue.queueUrl),
          })),
        ),
        [ENV.quarantineQueueUrl]: proxy.queueUrl(env[ENV.quarantineQueueUrl] as string),
      }),
    },
  );
  pipeline = p;
  return p;
}

/** A delivery and its keys, from the generator's message ids (cross-checked against the extractor). */
function delivery(label: string): { body: string; keys: string[] } {
  const messages = inboundMessages(MESSAGES_PER_DELIVERY, label);
  const body = messagesBody(messages);
  expect(Buffer.byteLength(body)).toBeGreaterThan(2 * MAXIMUM_MESSAGE_SIZE_BYTES);
  const keys = messages.map(messageKey);
  expect(new Set(keys).size).toBe(MESSAGES_PER_DELIVERY);
  expect(keysOfBody(body)).toEqual(keys);
  return { body, keys };
}

function expectEachKeyOnceAndDone(effects: Map<string, number>, claims: Map<string, string>, keys: string[]) {
  expect(keys).toHaveLength(MESSAGES_PER_DELIVERY);
  expect(Object.fromEntries(effects)).toEqual(Object.fromEntries(keys.map((key) => [key, 1])));
  expect(Object.fromEntries(claims)).toEqual(Object.fromEntries(keys.map((key) => [key, 'done'])));
}

describe('SendMessageBatch failing under the real receiver', () => {
  it.each<[SqsBatchFault, string]>(FAULTS)(
    '%s (%s): 503 with no false acknowledgement, then Meta’s retry runs every event once',
    async (fault) => {
      countIfPassed();
      const p = await pipelineBehindProxy(`enqueue-${fault}`);
      const { body, keys } = delivery(`enq${fault.slice(0, 4)}`);
      // One consumer for the whole test: a stopped event source's aborted long poll could still be handed
      // messages by the emulator, which would hide them for a visibility timeout.
      const consumer = await p.startConsumer();
      proxy.fault = fault;

      const failed = await p.post(body);
      const failedCalls = proxy.stats.faultedCalls;
      // Every call of the receiver's retry budget failed, or left some part unstored: not acknowledged.
      expect(failed.statusCode).toBe(503);
      expect(proxy.stats.faultedCalls).toBeGreaterThan(1);
      const storedByFailedAttempt = proxy.stats.entriesStored;
      if (fault === 'partial') {
        // Some parts did reach the queue: stored, but never acknowledged to Meta.
        expect(storedByFailedAttempt).toBeGreaterThan(0);
      } else {
        expect(storedByFailedAttempt).toBe(0);
      }
      await consumer.waitUntilDrained({ timeoutMs: 20_000 });
      const effectedBeforeRetry = p.effects().size;
      expect(effectedBeforeRetry).toBeLessThan(keys.length);
      if (fault !== 'partial') expect(effectedBeforeRetry).toBe(0);

      // SQS healthy again; Meta retries the same bytes with the same signature.
      proxy.fault = 'none';
      expect((await p.post(body)).statusCode).toBe(200);
      const storedByRetry = proxy.stats.entriesStored - storedByFailedAttempt;
      await consumer.waitUntilDrained({ timeoutMs: 20_000 });

      expectEachKeyOnceAndDone(p.effects(), await p.claims(), keys);
      expect(await p.drainDeadLetters()).toEqual([]);
      const line =
        `enqueue fault ${fault}: 503 after ${failedCalls} failed SendMessageBatch calls, ` +
        `${storedByFailedAttempt} parts stored unacknowledged (${effectedBeforeRetry} events run from them); ` +
        `retry 200 (${storedByRetry} parts stored); ${keys.length} events effected once each`;
      console.info(line);
      reports.set(fault, { line, failedCalls, stored: storedByFailedAttempt, runEarly: effectedBeforeRetry });
    },
  );

  it('answers 200 without Meta’s help when SQS recovers within the retry budget', async () => {
    countIfPassed();
    const p = await pipelineBehindProxy('enqueue-transient');
    const { body, keys } = delivery('enqtransient');
    const consumer = await p.startConsumer();
    proxy.fault = 'throttled';
    proxy.faultedCallsLeft = 2;

    expect((await p.post(body)).statusCode).toBe(200);
    expect(proxy.stats.faultedCalls).toBe(2);
    await consumer.waitUntilDrained({ timeoutMs: 20_000 });
    expectEachKeyOnceAndDone(p.effects(), await p.claims(), keys);
  });
});
