/**
 * Drives a running local stack through an outage the way Meta would experience it, then checks that every
 * distinct event had exactly one side effect, and compares the queueing it measured with the M/M/c model.
 * See docs/outage-drill.md.
 *
 *   0 ─── live ───▶ outageStart ── outage (T s) ──▶ ── recovery ──▶ duration ── drain ──▶ verdict
 *
 * - live traffic: Poisson arrivals at λ deliveries/s, one event per delivery (as Meta sends live events);
 * - outage: the stack's fault switch makes `POST /webhook` fail (5xx), hang, or lose its answer after
 *   storing the events; Meta retries each failed delivery with decreasing frequency, sometimes re-batching
 *   several pending events into one body;
 * - when the outage ends, Meta also redelivers the events it had delivered just before the outage
 *   (at-least-once delivery: those arrive as duplicates).
 *
 * The phases below run in that order and share one {@link Run}: what each reads and changes is in it.
 */

import type { StatsBucket } from '../local/observe/pipeline-stats.ts';
import { seededRandom } from '../local/seeded-random.ts';
import type { Faults, WebhookFaultMode } from '../local/stack/fault-switch.ts';
import { LocalStackClient } from '../local/stack/local-stack-client.ts';
import { nextArrivalGapMs } from '../meta-traffic/retries.ts';
import { duplicateRate, sumBuckets } from './bucket-sums.ts';
import { IntervalRecorder, type IntervalRow, type Progress } from './interval-recorder.ts';
import { type DeliveryCounts, type MetaBehaviour, MetaDeliveries } from './meta-deliveries.ts';
import { PhaseClock } from './phase-clock.ts';
import { compareWithModel, type QueueingComparison } from './queueing-comparison.ts';
import { ScheduledActions } from './scheduled-actions.ts';
import { TrafficGenerator } from './traffic.ts';
import { judgeSubscribers, type Verdict } from './verdict.ts';

export interface DrillOptions extends MetaBehaviour {
  /** The local stack, e.g. `http://localhost:3000`. */
  readonly stackUrl: string;
  /** λ: new live deliveries per second. */
  readonly ratePerSecond: number;
  /** S: mean duration of the side effect (exponentially distributed), ms. */
  readonly effectMeanMs: number;
  /** c: consumer workers the stack runs (its `maxConcurrency`). */
  readonly workers: number;
  readonly durationSeconds: number;
  readonly outageStartSeconds: number;
  readonly outageSeconds: number;
  readonly outageMode: Exclude<WebhookFaultMode, 'up'>;
  readonly intervalSeconds: number;
  /** Target mean wait in the queue for the `maxConcurrency` recommendation. */
  readonly targetWaitMs: number;
  /** After the traffic stops, how long to wait for the last retries and the queue. */
  readonly drainTimeoutSeconds: number;
  readonly seed: number;
  readonly onInterval?: (row: IntervalRow) => void;
  readonly onProgress?: (progress: Progress) => void;
}

export interface DrillResult {
  readonly runId: string;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly options: Omit<DrillOptions, 'onInterval' | 'onProgress'>;
  readonly intervals: readonly IntervalRow[];
  /** Per-second stack statistics over the run (for the report's charts). */
  readonly series: readonly StatsBucket[];
  readonly totals: DeliveryCounts & {
    readonly events: number;
    readonly duplicatesSkipped: number;
    readonly duplicateRateByField: Readonly<Record<string, number>>;
  };
  readonly verdict: Verdict;
  readonly queueing: QueueingComparison;
}

/** Everything the phases share, created once by {@link setUp}. */
interface Run {
  readonly options: DrillOptions;
  readonly runId: string;
  readonly random: () => number;
  readonly stack: LocalStackClient;
  /** The stack's faults before the run, restored after it. */
  readonly previousFaults: Faults;
  readonly clock: PhaseClock;
  readonly traffic: TrafficGenerator;
  readonly scheduled: ScheduledActions;
  readonly deliveries: MetaDeliveries;
  readonly recorder: IntervalRecorder;
}

export async function runDrill(options: DrillOptions): Promise<DrillResult> {
  const run = await setUp(options);
  let drained: boolean;
  try {
    drained = await driveTraffic(run);
  } finally {
    await run.stack.setFaults(run.previousFaults).catch(() => undefined);
  }
  return conclude(run, drained);
}

/** Setup: the seeded randomness, the stack's effect time, and the run's shared state. */
async function setUp(options: DrillOptions): Promise<Run> {
  const random = seededRandom(options.seed);
  const runId = `${Date.now().toString(36)}${Math.floor(random() * 1e6).toString(36)}`;
  const traffic = new TrafficGenerator({ runId, random });
  const stack = new LocalStackClient(options.stackUrl);
  const previousFaults = await stack.faults();
  await stack.setFaults({
    webhook: { mode: 'up' },
    effect: { delayMs: options.effectMeanMs, distribution: 'exponential' },
  });
  const clock = new PhaseClock(Date.now(), options);
  const scheduled = new ScheduledActions();
  const deliveries = new MetaDeliveries(stack, options, random, scheduled);
  const recorder = new IntervalRecorder(stack, clock, deliveries, options);
  return { options, runId, random, stack, previousFaults, clock, traffic, scheduled, deliveries, recorder };
}

/** Live traffic with the outage inside it, then the drain; true when the queue drained. */
async function driveTraffic(run: Run): Promise<boolean> {
  scheduleOutage(run);
  const tickers = [
    setInterval(() => run.deliveries.sendDueRetries(), 100),
    setInterval(() => run.recorder.reportProgress(), 250),
    setInterval(() => run.recorder.nextInterval(), run.options.intervalSeconds * 1000),
  ];
  let drained: boolean;
  try {
    await sendLiveTraffic(run);
    drained = await drain(run);
  } finally {
    for (const ticker of tickers) clearInterval(ticker);
    run.scheduled.cancelAll();
  }
  await run.recorder.closeLastInterval();
  run.recorder.reportProgress();
  return drained;
}

/** Outage: the fault switch on at outageStart, off T s later; then Meta redelivers what it sent just before. */
function scheduleOutage({ options, stack, scheduled, deliveries }: Run): void {
  scheduled.after(options.outageStartSeconds * 1000, () => {
    const outageStartedAt = Date.now();
    void stack.setFaults({ webhook: { mode: options.outageMode } });
    scheduled.after(options.outageSeconds * 1000, () => {
      void stack
        .setFaults({ webhook: { mode: 'up' } })
        .then(() => deliveries.redeliverRecent(outageStartedAt));
    });
  });
}

/** Live traffic: Poisson arrivals, one new event per delivery, until the end of the traffic period. */
async function sendLiveTraffic({ options, random, clock, traffic, deliveries }: Run): Promise<void> {
  const trafficEnd = clock.startedAt + options.durationSeconds * 1000;
  let nextArrival = clock.startedAt + nextArrivalGapMs(options.ratePerSecond, random);
  while (nextArrival < trafficEnd) {
    await sleep(nextArrival - Date.now());
    deliveries.sendLive(traffic.next());
    nextArrival += nextArrivalGapMs(options.ratePerSecond, random);
  }
  await sleep(trafficEnd - Date.now());
}

/** Drain: Meta keeps retrying until every delivery got its 200; then the queue empties. */
async function drain({ options, clock, scheduled, deliveries, stack }: Run): Promise<boolean> {
  clock.startDraining();
  const retriesDeadline = Date.now() + options.drainTimeoutSeconds * 1000;
  while ((!deliveries.settled || scheduled.pending > 0) && Date.now() < retriesDeadline) {
    await sleep(100);
  }
  return waitForQueue(stack, options.drainTimeoutSeconds * 1000);
}

/**
 * Waits until the stack's queue is empty, for as long as the backlog keeps shrinking: a slow machine gets
 * more time, a stuck consumer does not. True when drained.
 */
async function waitForQueue(stack: LocalStackClient, stallTimeoutMs: number): Promise<boolean> {
  const hardDeadline = Date.now() + 10 * 60_000;
  let smallest = Number.POSITIVE_INFINITY;
  let lastProgress = Date.now();
  while (Date.now() < hardDeadline) {
    if (await stack.waitUntilDrained(5_000)) return true;
    const queue = (await stack.stats(Math.floor(Date.now() / 1000))).queue;
    const depth = queue === undefined ? Number.POSITIVE_INFINITY : queue.backlog + queue.inFlight;
    if (depth < smallest) {
      smallest = depth;
      lastProgress = Date.now();
    } else if (Date.now() - lastProgress > stallTimeoutMs) {
      return false;
    }
  }
  return false;
}

/** Verdict: each subscriber's effects against the events it should have, the totals, and the queueing against the model. */
async function conclude(run: Run, drained: boolean): Promise<DrillResult> {
  const { options, clock, deliveries, stack } = run;
  const finishedAt = Date.now();
  const [effects, info] = await Promise.all([stack.effects(), stack.info()]);
  const finalStats = await stack.stats(Math.floor(clock.startedAt / 1000));
  const judged = judgeSubscribers(
    deliveries.events,
    info.subscribers.map((subscriber) => ({
      ...subscriber,
      effects: effects.subscribers[subscriber.name] ?? { total: 0, effects: [] },
    })),
  );
  const verdict: Verdict = drained ? judged : { ...judged, exactlyOnce: false, inconclusive: true };
  const all = sumBuckets(finalStats.series);
  const { onInterval: _i, onProgress: _p, ...optionsWithoutCallbacks } = options;
  return {
    runId: run.runId,
    startedAt: clock.startedAt,
    finishedAt,
    options: optionsWithoutCallbacks,
    intervals: run.recorder.rows,
    series: finalStats.series,
    totals: {
      events: deliveries.events.length,
      ...deliveries.totals,
      duplicatesSkipped: all.duplicate,
      duplicateRateByField: Object.fromEntries(
        Object.entries(all.byField).map(([field, c]) => [field, duplicateRate(c.fresh, c.duplicate) ?? 0]),
      ),
    },
    verdict,
    queueing: compareWithModel(options, clock.startedAt, finalStats.series, deliveries.events),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
