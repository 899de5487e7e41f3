/**
 * A consumer killed mid-batch (SIGKILL), then a new one: SQS redelivers the killed worker's messages after the
 * visibility timeout, the new worker takes the lapsed claims over. Every event must be effected at least once,
 * and only events inside the effect→complete window (effect journalled, claim still `processing` at the
 * kill) may be effected twice; those are counted, printed and capped (WINDOW_CAP). See docs/consumer.md.
 */
import { availableParallelism, loadavg } from 'node:os';
import { afterAll, afterEach, expect, it } from 'vitest';
import { envelope, inboundMessages, messagesChange } from '../../../cli/meta-traffic/webhook-bodies.ts';
import {
  appendKillRun,
  KILL_RUNS_PATH,
  type KillRun,
  killTestLine,
} from '../../../lab/docs/kill-run-record.ts';
import { type ConsumerWorker, startConsumerWorker } from '../../support/consumer-worker-process.ts';
import {
  createPipeline,
  type Pipeline,
  readEffects,
  restoreEnvironment,
} from '../../support/pipeline-fixture.ts';
import { waitFor } from '../../support/wait-for.ts';
import { messageKey } from '../../support/webhooks/delivery-workload.ts';
import { keysOfBody } from '../../support/webhooks/event-keys.ts';

const DELIVERIES = 60;
const EVENTS_PER_DELIVERY = 3;
/** Early, within A's first invocations: far from the moment A's own records would come back to it. */
const KILL_AFTER_EFFECTS = 20;
/**
 * Visibility timeout = 6 × this = 12 s: longer than worker A lives after its first receive, so A never gets
 * its own records back (which would make A take over its own claims and blur what the kill did), short
 * enough for the test to stay in seconds.
 */
const FUNCTION_TIMEOUT_SECONDS = 2;
/** Worker A's event source: the consumer worker's defaults, spelled out because WINDOW_CAP rests on them. */
const POLLERS = 2;
const BATCH_SIZE = 10;
/**
 * Events the kill may catch between effect and completion. The consumer runs a batch's records in parallel
 * and each record's events in order, so at any instant at most one event per record it holds sits between
 * its effect and its `complete`; worker A holds at most POLLERS × BATCH_SIZE records: 20 of 180 events.
 */
const WINDOW_CAP = POLLERS * BATCH_SIZE;

let pipeline: Pipeline | undefined;
const workers: ConsumerWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.map((worker) => worker.kill()));
  await pipeline?.close();
});
afterAll(() => restoreEnvironment());

function startWorker(p: Pipeline): ConsumerWorker {
  const worker = startConsumerWorker(p, {
    functionTimeoutSeconds: FUNCTION_TIMEOUT_SECONDS,
    pollers: POLLERS,
    batchSize: BATCH_SIZE,
  });
  workers.push(worker);
  return worker;
}

function total(effects: Map<string, number>): number {
  return [...effects.values()].reduce((sum, n) => sum + n, 0);
}

const phases: string[] = [];
const mark = (label: string, since: number) => phases.push(`${label} ${Date.now() - since} ms`);

it('effects every event after a SIGKILL mid-batch, twice only inside the effect→complete window', async () => {
  pipeline = await createPipeline('killed', {
    consumerTimeoutSeconds: FUNCTION_TIMEOUT_SECONDS,
    leaseMarginMs: 500,
  });
  const p = pipeline;
  // The killed worker's records come back after the visibility timeout; its leases (invocation deadline +
  // 0.5 s) have lapsed long before, so worker B takes those claims over.
  expect(p.settings.visibilityTimeoutSeconds).toBe(6 * FUNCTION_TIMEOUT_SECONDS);

  const t0 = Date.now();
  const loadAtStart = loadavg()[0] as number;
  const messages = inboundMessages(DELIVERIES * EVENTS_PER_DELIVERY, 'kill');
  // Expected keys from the generator's ids; the extractor under test must derive the same, body by body.
  const keys = messages.map(messageKey);
  expect(new Set(keys).size).toBe(DELIVERIES * EVENTS_PER_DELIVERY);
  const bodies = Array.from({ length: DELIVERIES }, (_, d) =>
    envelope([messagesChange(messages.slice(d * EVENTS_PER_DELIVERY, (d + 1) * EVENTS_PER_DELIVERY))]),
  );
  expect(bodies.flatMap(keysOfBody)).toEqual(keys);
  let accepted = 0;
  for (let i = 0; i < DELIVERIES; i += 25) {
    const answers = await Promise.all(bodies.slice(i, i + 25).map((body) => p.post(body)));
    accepted += answers.filter((answer) => answer.statusCode === 200).length;
  }
  expect(accepted).toBe(DELIVERIES);
  expect(await p.queueDepth()).toBe(DELIVERIES);
  mark('seeded', t0);

  // Worker A: killed once it has effected KILL_AFTER_EFFECTS events.
  const a = startWorker(p);
  let firstEffectAt: number | undefined;
  await waitFor(
    () => {
      const effected = total(readEffects(p.journalPath));
      if (effected > 0) firstEffectAt ??= Date.now();
      return effected >= KILL_AFTER_EFFECTS;
    },
    30_000,
    () => `worker A effected ${total(readEffects(p.journalPath))} events; stderr: ${a.stderr()}`,
  );
  mark('A killed', t0);
  a.child.kill('SIGKILL');
  const killedAfterMs = Date.now() - (firstEffectAt ?? Date.now());
  await a.exited;
  expect(a.child.signalCode).toBe('SIGKILL');
  // A write that was already on the wire when the signal landed is still applied by DynamoDB: let such
  // requests settle before reading what the kill left behind.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const effectedByA = readEffects(p.journalPath);
  const claimsAtKill = await p.claims();
  const processingAtKill = new Set(
    [...claimsAtKill].filter(([, state]) => state === 'processing').map(([pk]) => pk),
  );
  const inWindow = new Set([...effectedByA.keys()].filter((key) => processingAtKill.has(key)));
  expect(total(effectedByA)).toBeLessThan(keys.length);
  // Precondition of the exactness check below: A was killed before any of its records could come back to it.
  expect(killedAfterMs).toBeLessThan(p.settings.visibilityTimeoutSeconds * 1000);

  // Worker B: a fresh process; it gets the rest at once and A's in-flight records after the visibility timeout.
  const b = startWorker(p);
  // On a loaded machine B's batches can time out too and come back only a visibility timeout (12 s) later:
  // leave room for a few such rounds.
  await waitFor(
    async () => keys.every((key) => readEffects(p.journalPath).has(key)) && (await p.queueDepth()) === 0,
    60_000,
    () =>
      `${keys.filter((key) => !readEffects(p.journalPath).has(key)).length} events never effected; stderr: ${b.stderr()}`,
  );
  mark('B done', t0);
  b.child.kill('SIGTERM');
  await b.exited;

  const effects = readEffects(p.journalPath);
  const twice = [...effects].filter(([, count]) => count > 1).map(([key]) => key);
  const run: KillRun = {
    recordedAt: new Date().toISOString(),
    machine: { cores: availableParallelism(), loadAverage: [loadAtStart, loadavg()[0] as number] },
    events: keys.length,
    killedAfterEffects: total(effectedByA),
    claimsLeftProcessing: processingAtKill.size,
    inWindow: inWindow.size,
    windowCap: WINDOW_CAP,
    effectedTwice: twice.length,
    killedAfterFirstEffectMs: killedAfterMs,
    wallSeconds: (Date.now() - t0) / 1000,
  };
  console.info(
    `${killTestLine(run)} (A killed ${killedAfterMs} ms after its first effect; ` +
      `A invocations: ${a.invocationOutcomes()}; B invocations: ${b.invocationOutcomes()}; ` +
      `${phases.join(', ')})`,
  );

  // At least once: every event.
  const keySet = new Set(keys);
  expect(keys.filter((key) => !effects.has(key))).toEqual([]);
  expect([...effects.keys()].filter((key) => !keySet.has(key))).toEqual([]);
  // Exactly once outside the window: one kill, so at most one extra effect, and only for a claim the killed
  // worker left `processing` after its effect was journalled.
  let checked = 0;
  const beyondWindow: string[] = [];
  for (const key of keys) {
    checked++;
    const count = effects.get(key) ?? 0;
    if (count > 1 + (inWindow.has(key) ? 1 : 0)) beyondWindow.push(`${key} effected ${count}×`);
  }
  expect(checked).toBe(DELIVERIES * EVENTS_PER_DELIVERY);
  expect(beyondWindow).toEqual([]);
  expect(inWindow.size).toBeLessThanOrEqual(WINDOW_CAP);

  // Every claim ends done.
  const claims = await p.claims();
  expect(Object.fromEntries(claims)).toEqual(Object.fromEntries(keys.map((key) => [key, 'done'])));
  // docs/consumer.md shows the recorded runs (npm run docs:runs); only a run that passed is recorded.
  if (process.env.KILL_TEST_RECORD === '1')
    appendKillRun(new URL(`../../../${KILL_RUNS_PATH}`, import.meta.url), run);
}, 120_000);
