/**
 * The real consumer (`functions/consumer.ts` in a child process under the local SQS event source) SIGKILLed
 * mid-batch three times during one run, at different stages, and restarted each time; a fourth worker then
 * runs to the end. SQS redelivers each killed worker's records after the visibility timeout and the next
 * worker takes their lapsed claims over.
 *
 * Every event must end effected and `done`; an event may be effected twice only if a kill caught it inside
 * the effect→complete window (effected by the killed worker, its claim still `processing`), and at most once
 * more per kill that caught it there. The events caught are counted, printed and capped (WINDOW_CAP_PER_KILL,
 * WINDOW_CAP); so are the doubles and the timings.
 */
import '../support/quiet-logs.ts';
import { afterAll, afterEach, expect, it, onTestFinished } from 'vitest';
import { seededRandom } from '../../cli/local/seeded-random.ts';
import { recordRunIfAsked, startRun } from '../../lab/docs/reliability-run-record.ts';
import { type ConsumerWorker, startConsumerWorker } from '../support/consumer-worker-process.ts';
import { createPipeline, type Pipeline, restoreEnvironment } from '../support/pipeline-fixture.ts';
import { waitFor } from '../support/wait-for.ts';
import { buildWorkload } from '../support/webhooks/delivery-workload.ts';
import { keysOfBody } from '../support/webhooks/event-keys.ts';

/** Visibility timeout 6 × 2 s = 12 s; leases end 0.5 s after a worker's 2 s deadline, long before. */
const FUNCTION_TIMEOUT_SECONDS = 2;
/**
 * Kill points, as effects journalled so far: right after the very first effect of the run (the first batch's
 * claims are taken, its effects just starting), then twice in full flow.
 */
const KILL_AFTER_EFFECTS = [1, 0.35, 0.65] as const;
const SETTLE_MS = 1_000;
/** Workers started for one kill point at most, should the kill land between two batches. */
const ATTEMPTS_PER_KILL_POINT = 3;
/** 5 records of 5 events an invocation, 2 pollers: a batch fits the 2 s timeout on a loaded 2-core machine. */
const BATCH_SIZE = 5;
const POLLERS = 2;
const DELIVERIES = 120;
const EVENTS_PER_DELIVERY = 5;
/**
 * Events one kill may catch between effect and completion. The consumer runs a batch's records in parallel
 * and each record's events in order, so at any instant at most one event per record it holds sits between
 * its effect and its `complete`; a worker holds at most POLLERS × BATCH_SIZE records (10, 1.7% of the
 * events). A consumer that completed later than right after each effect (per record, per batch) would pass it.
 */
const WINDOW_CAP_PER_KILL = POLLERS * BATCH_SIZE;
/**
 * For the run: one such worker per kill point (30 of 600 events, 5%). A kill point tried again because its
 * kill landed between two batches had no batch in flight at the signal, so that kill catches none.
 */
const WINDOW_CAP = KILL_AFTER_EFFECTS.length * WINDOW_CAP_PER_KILL;

let pipeline: Pipeline | undefined;
const workers: ConsumerWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.map((worker) => worker.kill()));
  await pipeline?.close();
  pipeline = undefined;
});
afterAll(() => restoreEnvironment());

interface KillRecord {
  readonly effectsBefore: number;
  readonly effectsAtKill: number;
  /** Claims left `processing` by this kill (not already `processing` at the previous one). */
  readonly newlyProcessing: number;
  /**
   * The effect→complete window this kill caught: keys effected by the killed worker (their effect count rose
   * since the previous kill, and no other worker ran in between) whose claim it left `processing`. A key an
   * earlier kill caught, still `processing` until SQS redelivers it, is not caught again unless effected again.
   */
  readonly window: ReadonlySet<string>;
  readonly invocations: string;
  readonly aliveMs: number;
}

it('effects every event after three SIGKILLs mid-batch, a second time only inside the effect→complete window', async () => {
  const startedAt = Date.now();
  const recording = startRun();
  const p = await createPipeline('kills', {
    consumerTimeoutSeconds: FUNCTION_TIMEOUT_SECONDS,
    leaseMarginMs: 500,
  });
  pipeline = p;
  // 120 deliveries of 2 messages + 3 statuses = 600 events.
  const workload = buildWorkload({
    label: 'kil',
    deliveries: DELIVERIES,
    messagesPerDelivery: 2,
    statusesPerDelivery: EVENTS_PER_DELIVERY - 2,
    repeatShare: 0,
    random: seededRandom(611),
  });
  const keys = workload.keys;
  expect(keys).toHaveLength(DELIVERIES * EVENTS_PER_DELIVERY);
  // The extractor under test derives exactly the generator's keys, body by body, in order.
  expect(workload.deliveries.map(keysOfBody)).toEqual(workload.keysOf);
  let accepted = 0;
  for (let i = 0; i < workload.deliveries.length; i += 20) {
    const answers = await Promise.all(workload.deliveries.slice(i, i + 20).map((body) => p.post(body)));
    accepted += answers.filter((answer) => answer.statusCode === 200).length;
  }
  expect(accepted).toBe(DELIVERIES);

  const totalEffects = () => [...p.effects().values()].reduce((sum, n) => sum + n, 0);
  const processingKeys = async () =>
    new Set([...(await p.claims())].filter(([, state]) => state === 'processing').map(([pk]) => pk));
  const kills: KillRecord[] = [];
  let processingBefore = new Set<string>();
  /** Effects per key at the previous kill (after its settle): what earlier workers did. */
  let effectsBeforeWorker = new Map<string, number>();
  const killOnce = async (point: number): Promise<KillRecord> => {
    const target = point >= 1 ? point : Math.round(keys.length * point);
    const effectsBefore = totalEffects();
    const worker = startConsumerWorker(p, {
      functionTimeoutSeconds: FUNCTION_TIMEOUT_SECONDS,
      batchSize: BATCH_SIZE,
      pollers: POLLERS,
    });
    workers.push(worker);
    const bornAt = Date.now();
    // Past the kill point, the signal waits for a batch in flight (a poll can land between two invocations).
    await waitFor(
      async () =>
        totalEffects() >= Math.max(target, effectsBefore + 1) &&
        [...(await processingKeys())].some((pk) => !processingBefore.has(pk)),
      60_000,
      () => `${totalEffects()} effects, waiting for ${target}; worker stderr: ${worker.stderr()}`,
    );
    await worker.kill();
    expect(worker.child.signalCode).toBe('SIGKILL');
    const aliveMs = Date.now() - bornAt;
    // A write already on the wire when the signal landed is still applied: let such writes settle first.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const effects = p.effects();
    const processing = await processingKeys();
    const window = new Set(
      [...effects]
        .filter(([key, count]) => processing.has(key) && count > (effectsBeforeWorker.get(key) ?? 0))
        .map(([key]) => key),
    );
    const kill: KillRecord = {
      effectsBefore,
      effectsAtKill: [...effects.values()].reduce((sum, n) => sum + n, 0),
      newlyProcessing: [...processing].filter((pk) => !processingBefore.has(pk)).length,
      window,
      invocations: worker.invocationOutcomes(),
      aliveMs,
    };
    processingBefore = processing;
    effectsBeforeWorker = effects;
    return kill;
  };
  for (const point of KILL_AFTER_EFFECTS) {
    // The check before the signal and the signal itself are not atomic: a batch can finish in between and
    // leave nothing half done. Such a kill still counts for the window bookkeeping, and the point is tried
    // again with a new worker.
    for (let attempt = 1; attempt <= ATTEMPTS_PER_KILL_POINT; attempt++) {
      const kill = await killOnce(point);
      kills.push(kill);
      if (kill.newlyProcessing > 0) break;
    }
  }

  const last = startConsumerWorker(p, {
    functionTimeoutSeconds: FUNCTION_TIMEOUT_SECONDS,
    batchSize: BATCH_SIZE,
    pollers: POLLERS,
  });
  workers.push(last);
  await waitFor(
    async () => keys.every((key) => p.effects().has(key)) && (await p.queueDepth()) === 0,
    90_000,
    () =>
      `${keys.filter((key) => !p.effects().has(key)).length} events never effected; stderr: ${last.stderr()}`,
  );
  await last.child.kill('SIGTERM');
  await last.exited;

  const effects = p.effects();
  const claims = await p.claims();
  const doubles = [...effects].filter(([, count]) => count > 1);
  const windowHits = (key: string) => kills.filter((kill) => kill.window.has(key)).length;
  const windowUnion = new Set(kills.flatMap((kill) => [...kill.window]));
  const caughtInWindow = kills.reduce((sum, kill) => sum + kill.window.size, 0);
  const reportLines = [
    `SIGKILL run: ${keys.length} events in ${workload.deliveries.length} deliveries, ${kills.length} kills, ` +
      `${Math.round((Date.now() - startedAt) / 1000)} s`,
    ...kills.map(
      (kill, i) =>
        `  kill ${i + 1}: after ${kill.effectsAtKill - kill.effectsBefore} effects of its own ` +
        `(${kill.effectsAtKill} in all, worker alive ${kill.aliveMs} ms), ${kill.newlyProcessing} claims left processing, ` +
        `${kill.window.size} caught in the effect→complete window (cap ${WINDOW_CAP_PER_KILL}); ` +
        `invocations ${kill.invocations}`,
    ),
    `  last worker: invocations ${last.invocationOutcomes()}`,
    `  effects ${[...effects.values()].reduce((sum, n) => sum + n, 0)} for ${effects.size} keys; ` +
      `doubles ${doubles.length} (window caught ${caughtInWindow} times on ${windowUnion.size} keys, cap ${WINDOW_CAP})`,
  ];
  console.info(reportLines.join('\n'));

  // Each kill point got a kill mid-batch: one that left claims of its own held and not completed.
  expect(kills.filter((kill) => kill.newlyProcessing > 0)).toHaveLength(KILL_AFTER_EFFECTS.length);
  // At least once, and every claim done.
  const keySet = new Set(keys);
  expect(keys.filter((key) => !effects.has(key))).toEqual([]);
  expect([...effects.keys()].filter((key) => !keySet.has(key))).toEqual([]);
  expect(keys.filter((key) => claims.get(key) !== 'done')).toEqual([]);
  // Exactly once outside the window; inside it, at most one extra effect per kill that caught the event there.
  let checked = 0;
  const beyondWindow: string[] = [];
  for (const key of keys) {
    checked++;
    const count = effects.get(key) ?? 0;
    if (count > 1 + windowHits(key))
      beyondWindow.push(`${key} effected ${count}×, caught ${windowHits(key)}×`);
  }
  expect(checked).toBe(DELIVERIES * EVENTS_PER_DELIVERY);
  expect(beyondWindow).toEqual([]);
  // The window stays narrow: one event per record in flight at a kill, at most.
  expect(kills.filter((kill) => kill.window.size > WINDOW_CAP_PER_KILL)).toEqual([]);
  expect(caughtInWindow).toBeLessThanOrEqual(WINDOW_CAP);
  // docs/reliability.md shows the recorded runs (npm run docs:runs); only a run that passed is recorded.
  const run = recording.finish(reportLines, { caughtInWindow, doubles: doubles.length });
  onTestFinished(({ task }) => {
    if (task.result?.state === 'pass') recordRunIfAsked('consumer-kills', run);
  });
}, 200_000);
