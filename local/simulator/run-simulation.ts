/**
 * Drives a running local stack through an outage the way Meta would experience it, then checks that every
 * distinct event had exactly one side effect, and compares the queueing it measured with the M/M/c model.
 * See docs/simulator.md.
 *
 *   0 ─── live ───▶ outageStart ── outage (T s) ──▶ ── recovery ──▶ duration ── drain ──▶ verdict
 *
 * - live traffic: Poisson arrivals at λ deliveries/s, one event per delivery (as Meta sends live events);
 * - outage: the stack's fault switch makes `POST /webhook` fail (5xx), hang, or lose its answer after
 *   storing the events; Meta retries each failed delivery with decreasing frequency, sometimes re-batching
 *   several pending events into one body;
 * - when the outage ends, Meta also redelivers the events it had delivered just before the outage
 *   (at-least-once delivery: those arrive as duplicates).
 */

import type { StatsBucket, StatsSnapshot } from '../observe/pipeline-stats.ts';
import { seededRandom } from '../seeded-random.ts';
import { sendWebhook } from '../sender/send-webhook.ts';
import type { EffectsView } from '../stack/effects-journal.ts';
import type { Faults, WebhookFaultMode } from '../stack/fault-switch.ts';
import {
  allenCunneenWaitSeconds,
  meanWaitSeconds,
  recommendServers,
  type ServerRecommendation,
  utilisation,
} from './erlang-c.ts';
import { nextArrivalGapMs, type RetryPolicy, retryDelayMs } from './meta-retries.ts';
import { type SimulatedEvent, TrafficGenerator, webhookBody } from './traffic.ts';

export interface SimulationOptions {
  /** The local stack, e.g. `http://localhost:3000`. */
  readonly stackUrl: string;
  readonly appSecret: string;
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
  /** How long Meta waits for an answer before counting the delivery as failed. */
  readonly metaTimeoutMs: number;
  readonly retry: RetryPolicy;
  /** Events delivered this long before the outage are delivered again after it. */
  readonly redeliverWindowSeconds: number;
  /** Chance that retries falling due together travel in one body. */
  readonly rebatchProbability: number;
  readonly maxEventsPerBody: number;
  /** Target mean wait in the queue for the `maxConcurrency` recommendation. */
  readonly targetWaitMs: number;
  /** After the traffic stops, how long to wait for the last retries and the queue. */
  readonly drainTimeoutSeconds: number;
  readonly seed: number;
  readonly onInterval?: (row: IntervalRow) => void;
  readonly onProgress?: (progress: Progress) => void;
}

export type Phase = 'live' | 'outage' | 'recovery' | 'drain';

export interface Progress {
  readonly elapsedSeconds: number;
  readonly totalSeconds: number;
  readonly phase: Phase;
  readonly events: number;
  readonly deliveriesSent: number;
  readonly pendingRetries: number;
  readonly backlog: number | undefined;
  readonly effects: number | undefined;
}

export interface IntervalRow {
  readonly fromSecond: number;
  readonly toSecond: number;
  readonly phase: Phase;
  /** Deliveries Meta attempted in the interval (live, retries, redeliveries) and how they ended. */
  readonly deliveriesSent: number;
  readonly accepted: number;
  readonly failed: number;
  readonly retriesSent: number;
  readonly redeliveriesSent: number;
  /** λ in: events entering the queue per second (the receiver's EventsPerDelivery). */
  readonly eventsInPerSecond: number;
  /** Throughput: fresh events effected per second. */
  readonly effectsPerSecond: number;
  readonly duplicatesSkipped: number;
  readonly backlog: number | undefined;
  readonly dlq: number | undefined;
  /** Mean time records waited in the queue before a consumer started on them; undefined without records. */
  readonly meanWaitMs: number | undefined;
  /** ρ = λ·S/c with λ = events in per second and S the configured mean effect time (offered load). */
  readonly utilisation: number;
  /** Measured utilisation: time the c workers spent in invocations / (c × interval). */
  readonly busy: number;
  /** 100 × duplicates / (fresh + duplicates) per `Field`; undefined for a field not seen in the interval. */
  readonly duplicateRateByField: Readonly<Record<string, number | undefined>>;
}

export interface Verdict {
  readonly exactlyOnce: boolean;
  readonly distinctEvents: number;
  readonly effectedOnce: number;
  /** Events never effected (never accepted, or lost). */
  readonly missing: readonly string[];
  /** Events effected more than once. */
  readonly duplicated: readonly { key: string; count: number }[];
  /** The queue did not drain in time: missing effects may still be queued, not lost. */
  readonly inconclusive?: boolean;
}

export interface QueueingComparison {
  readonly windowSeconds: readonly [number, number];
  readonly records: number;
  readonly measuredMeanWaitMs: number | undefined;
  readonly measuredServiceMs: number | undefined;
  readonly measuredArrivalsPerSecond: number;
  /** Erlang C with the configured λ and S. */
  readonly predictedMeanWaitMs: number;
  /** Erlang C with the λ and S measured in the window. */
  readonly predictedFromMeasuredMs: number | undefined;
  /** Squared coefficient of variation of the measured service time (1 for exponential). */
  readonly measuredServiceCv2: number | undefined;
  /** Allen–Cunneen (M/G/c) with the measured λ, S and service variability. */
  readonly predictedMgcMs: number | undefined;
  readonly utilisation: number;
  readonly recommendation: (ServerRecommendation & { readonly targetWaitMs: number }) | undefined;
}

export interface SimulationResult {
  readonly runId: string;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly options: Omit<SimulationOptions, 'onInterval' | 'onProgress'>;
  readonly intervals: readonly IntervalRow[];
  /** Per-second stack statistics over the run (for the report's charts). */
  readonly series: readonly StatsBucket[];
  readonly totals: {
    readonly events: number;
    readonly deliveriesSent: number;
    readonly accepted: number;
    readonly failed: number;
    readonly retriesSent: number;
    readonly redeliveriesSent: number;
    readonly duplicatesSkipped: number;
    readonly duplicateRateByField: Readonly<Record<string, number>>;
  };
  readonly verdict: Verdict;
  readonly queueing: QueueingComparison;
}

interface EventState {
  readonly event: SimulatedEvent;
  acceptedAt: number | undefined;
}

interface PendingRetry {
  readonly events: EventState[];
  readonly retry: number;
  readonly dueAt: number;
}

type DeliveryKind = 'live' | 'retry' | 'redelivery';

export async function runSimulation(options: SimulationOptions): Promise<SimulationResult> {
  const random = seededRandom(options.seed);
  const runId = `${Date.now().toString(36)}${Math.floor(random() * 1e6).toString(36)}`;
  const traffic = new TrafficGenerator({ runId, random });
  const stack = new StackApi(options.stackUrl);
  const events: EventState[] = [];
  const pendingRetries: PendingRetry[] = [];
  const inFlight = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  const intervals: IntervalRow[] = [];
  const totals = { deliveriesSent: 0, accepted: 0, failed: 0, retriesSent: 0, redeliveriesSent: 0 };
  let window = { deliveriesSent: 0, accepted: 0, failed: 0, retriesSent: 0, redeliveriesSent: 0 };
  let lastStats: StatsSnapshot | undefined;
  let lastEffects: number | undefined;
  let drained = false;

  const previousFaults = await stack.faults();
  await stack.setFaults({
    webhook: { mode: 'up' },
    effect: { delayMs: options.effectMeanMs, distribution: 'exponential' },
  });

  const startedAt = Date.now();
  const elapsed = () => (Date.now() - startedAt) / 1000;
  const outageEnd = options.outageStartSeconds + options.outageSeconds;
  let draining = false;
  const phase = (at = Date.now()): Phase => {
    const t = (at - startedAt) / 1000;
    if (draining || t >= options.durationSeconds) return 'drain';
    if (t < options.outageStartSeconds) return 'live';
    return t < outageEnd ? 'outage' : 'recovery';
  };
  const later = (ms: number, action: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      action();
    }, ms);
    timers.add(timer);
  };

  function deliver(batch: EventState[], kind: DeliveryKind, retry = 0): void {
    totals.deliveriesSent++;
    window.deliveriesSent++;
    if (kind === 'retry') {
      totals.retriesSent++;
      window.retriesSent++;
    }
    if (kind === 'redelivery') {
      totals.redeliveriesSent++;
      window.redeliveriesSent++;
    }
    const body = Buffer.from(webhookBody(batch.map((s) => s.event)));
    const attempt = sendWebhook(body, {
      url: `${options.stackUrl}/webhook`,
      appSecret: options.appSecret,
      timeoutMs: options.metaTimeoutMs,
    }).then(
      (result) => result.status >= 200 && result.status < 300,
      () => false,
    );
    const settled = attempt.then((ok) => {
      if (ok) {
        totals.accepted++;
        window.accepted++;
        for (const state of batch) state.acceptedAt ??= Date.now();
        return;
      }
      totals.failed++;
      window.failed++;
      const next = retry + 1;
      pendingRetries.push({
        events: batch,
        retry: next,
        dueAt: Date.now() + retryDelayMs(next, options.retry, random),
      });
    });
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
  }

  /** Sends the retries that fell due; some travel together in one body, as Meta may re-batch them. */
  function sendDueRetries(): void {
    const now = Date.now();
    const due = pendingRetries.filter((r) => r.dueAt <= now);
    if (due.length === 0) return;
    for (const r of due) pendingRetries.splice(pendingRetries.indexOf(r), 1);
    let group: PendingRetry[] = [];
    const flush = () => {
      if (group.length === 0) return;
      deliver(
        group.flatMap((r) => r.events),
        'retry',
        Math.max(...group.map((r) => r.retry)),
      );
      group = [];
    };
    for (const r of due) {
      const size = group.reduce((n, g) => n + g.events.length, 0);
      if (
        group.length > 0 &&
        (random() >= options.rebatchProbability || size + r.events.length > options.maxEventsPerBody)
      ) {
        flush();
      }
      group.push(r);
    }
    flush();
  }

  function redeliverRecent(outageStartedAt: number): void {
    const from = outageStartedAt - options.redeliverWindowSeconds * 1000;
    const recent = events.filter(
      (s) => s.acceptedAt !== undefined && s.acceptedAt >= from && s.acceptedAt <= outageStartedAt,
    );
    for (let i = 0; i < recent.length; i += options.maxEventsPerBody) {
      const batch = recent.slice(i, i + options.maxEventsPerBody);
      later(random() * 2_000, () => deliver(batch, 'redelivery'));
    }
  }

  async function closeInterval(fromMs: number, toMs: number, rowPhase: Phase): Promise<void> {
    const stats = await stack.stats(Math.floor(fromMs / 1000));
    lastStats = stats;
    const buckets = stats.series.filter((b) => b.t * 1000 >= fromMs - 999 && b.t * 1000 < toMs);
    const seconds = Math.max(0.001, (toMs - fromMs) / 1000);
    const sum = sumBuckets(buckets);
    const eventsIn = sum.counters.EventsPerDelivery ?? 0;
    const lastQueue = [...buckets].reverse().find((b) => b.queue)?.queue ?? stats.queue;
    const row: IntervalRow = {
      fromSecond: Math.round((fromMs - startedAt) / 1000),
      toSecond: Math.round((toMs - startedAt) / 1000),
      phase: rowPhase,
      ...window,
      eventsInPerSecond: eventsIn / seconds,
      effectsPerSecond: sum.fresh / seconds,
      duplicatesSkipped: sum.duplicate,
      backlog: lastQueue?.backlog,
      dlq: lastQueue?.dlq,
      meanWaitMs: sum.records === 0 ? undefined : sum.waitMsSum / sum.records,
      utilisation: ((eventsIn / seconds) * (options.effectMeanMs / 1000)) / options.workers,
      busy: sum.invocationMsSum / (options.workers * seconds * 1000),
      duplicateRateByField: Object.fromEntries(
        Object.entries(sum.byField).map(([field, c]) => [field, rate(c.fresh, c.duplicate)]),
      ),
    };
    window = { deliveriesSent: 0, accepted: 0, failed: 0, retriesSent: 0, redeliveriesSent: 0 };
    intervals.push(row);
    options.onInterval?.(row);
  }

  const report = () =>
    options.onProgress?.({
      elapsedSeconds: Math.min(elapsed(), options.durationSeconds),
      totalSeconds: options.durationSeconds,
      phase: phase(),
      events: events.length,
      deliveriesSent: totals.deliveriesSent,
      pendingRetries: pendingRetries.length,
      backlog: lastStats?.queue?.backlog,
      effects: lastEffects,
    });

  try {
    // The outage: switch the faults on and off, and redeliver what Meta sent just before it.
    later(options.outageStartSeconds * 1000, () => {
      const outageStartedAt = Date.now();
      void stack.setFaults({ webhook: { mode: options.outageMode } });
      later(options.outageSeconds * 1000, () => {
        void stack.setFaults({ webhook: { mode: 'up' } }).then(() => redeliverRecent(outageStartedAt));
      });
    });

    const retryTicker = setInterval(sendDueRetries, 100);
    const progressTicker = setInterval(report, 250);
    let intervalStart = startedAt;
    const intervalTicker = setInterval(() => {
      const now = Date.now();
      const rowPhase = phase((intervalStart + now) / 2);
      void closeInterval(intervalStart, now, rowPhase);
      intervalStart = now;
      void stack.effectsTotal().then((total) => {
        lastEffects = total;
      });
    }, options.intervalSeconds * 1000);

    try {
      // Live traffic: Poisson arrivals until the end of the traffic period.
      const trafficEnd = startedAt + options.durationSeconds * 1000;
      let nextArrival = startedAt + nextArrivalGapMs(options.ratePerSecond, random);
      while (nextArrival < trafficEnd) {
        await sleep(nextArrival - Date.now());
        const state: EventState = { event: traffic.next(), acceptedAt: undefined };
        events.push(state);
        deliver([state], 'live');
        nextArrival += nextArrivalGapMs(options.ratePerSecond, random);
      }
      await sleep(trafficEnd - Date.now());

      // Drain: Meta keeps retrying until every delivery got its 200; then the queue empties.
      draining = true;
      const retriesDeadline = Date.now() + options.drainTimeoutSeconds * 1000;
      while (
        (pendingRetries.length > 0 || inFlight.size > 0 || timers.size > 0) &&
        Date.now() < retriesDeadline
      ) {
        await sleep(100);
      }
      drained = await waitForQueue(stack, options.drainTimeoutSeconds * 1000);
    } finally {
      clearInterval(retryTicker);
      clearInterval(intervalTicker);
      clearInterval(progressTicker);
      for (const timer of timers) clearTimeout(timer);
    }
    // A last partial interval of under a second would only add noise to the per-second rates.
    if (Date.now() - intervalStart >= 1_000) await closeInterval(intervalStart, Date.now(), 'drain');
    lastEffects = await stack.effectsTotal();
    report();
  } finally {
    await stack.setFaults(previousFaults).catch(() => undefined);
  }

  const finishedAt = Date.now();
  const effects = await stack.effects();
  const finalStats = await stack.stats(Math.floor(startedAt / 1000));
  const verdict: Verdict = drained
    ? judge(events, effects)
    : { ...judge(events, effects), exactlyOnce: false, inconclusive: true };
  const all = sumBuckets(finalStats.series);
  return {
    runId,
    startedAt,
    finishedAt,
    options: withoutCallbacks(options),
    intervals,
    series: finalStats.series,
    totals: {
      events: events.length,
      ...totals,
      duplicatesSkipped: all.duplicate,
      duplicateRateByField: Object.fromEntries(
        Object.entries(all.byField).map(([field, c]) => [field, rate(c.fresh, c.duplicate) ?? 0]),
      ),
    },
    verdict,
    queueing: compareWithModel(options, startedAt, finalStats.series, events),
  };
}

/**
 * Waits until the stack's queue is empty, for as long as the backlog keeps shrinking: a slow machine gets
 * more time, a stuck consumer does not. True when drained.
 */
async function waitForQueue(stack: StackApi, stallTimeoutMs: number): Promise<boolean> {
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

/** Every event of this run must have been effected exactly once. */
export function judge(events: readonly { event: { key: string } }[], effects: EffectsView): Verdict {
  const counts = new Map(effects.effects.map((e) => [e.key, e.count]));
  const keys = [...new Set(events.map((s) => s.event.key))];
  const missing = keys.filter((key) => (counts.get(key) ?? 0) === 0);
  const duplicated = keys
    .filter((key) => (counts.get(key) ?? 0) > 1)
    .map((key) => ({ key, count: counts.get(key) as number }));
  return {
    exactlyOnce: missing.length === 0 && duplicated.length === 0,
    distinctEvents: keys.length,
    effectedOnce: keys.length - missing.length - duplicated.length,
    missing,
    duplicated,
  };
}

/**
 * The steady part of the live phase (after a short warm-up, before the outage) against Erlang C: the
 * measured mean wait, and the prediction from the configured and from the measured λ and S.
 */
function compareWithModel(
  options: SimulationOptions,
  startedAt: number,
  series: readonly StatsBucket[],
  events: readonly EventState[],
): QueueingComparison {
  const warmUp = Math.min(5, options.outageStartSeconds * 0.2);
  const from = startedAt + warmUp * 1000;
  const to = startedAt + options.outageStartSeconds * 1000;
  const seconds = Math.max(0.001, (to - from) / 1000);
  const sum = sumBuckets(series.filter((b) => b.t * 1000 >= from && b.t * 1000 + 1000 <= to));
  const arrivals = events.filter(
    (s) => s.acceptedAt !== undefined && s.acceptedAt >= from && s.acceptedAt < to,
  );
  const measuredArrivalsPerSecond = arrivals.length / seconds;
  const measuredServiceMs = sum.invocations === 0 ? undefined : sum.invocationMsSum / sum.invocations;
  const measuredServiceCv2 =
    measuredServiceMs === undefined || sum.invocations < 2
      ? undefined
      : Math.max(0, sum.invocationMsSquaredSum / sum.invocations - measuredServiceMs ** 2) /
        measuredServiceMs ** 2;
  const nominal = {
    arrivalRatePerSecond: options.ratePerSecond,
    meanServiceSeconds: options.effectMeanMs / 1000,
    servers: options.workers,
  };
  const measuredModel =
    measuredServiceMs === undefined
      ? undefined
      : {
          arrivalRatePerSecond: measuredArrivalsPerSecond,
          meanServiceSeconds: measuredServiceMs / 1000,
          servers: options.workers,
        };
  let recommendation: QueueingComparison['recommendation'];
  try {
    const basis = measuredModel ?? nominal;
    recommendation = {
      ...recommendServers(basis.arrivalRatePerSecond, basis.meanServiceSeconds, options.targetWaitMs / 1000),
      targetWaitMs: options.targetWaitMs,
    };
  } catch {
    recommendation = undefined;
  }
  return {
    windowSeconds: [warmUp, options.outageStartSeconds],
    records: sum.records,
    measuredMeanWaitMs: sum.records === 0 ? undefined : sum.waitMsSum / sum.records,
    measuredServiceMs,
    measuredArrivalsPerSecond,
    predictedMeanWaitMs: meanWaitSeconds(nominal) * 1000,
    predictedFromMeasuredMs: measuredModel === undefined ? undefined : meanWaitSeconds(measuredModel) * 1000,
    measuredServiceCv2,
    predictedMgcMs:
      measuredModel === undefined || measuredServiceCv2 === undefined
        ? undefined
        : allenCunneenWaitSeconds(measuredModel, measuredServiceCv2) * 1000,
    utilisation: utilisation(nominal),
    recommendation,
  };
}

function sumBuckets(buckets: readonly StatsBucket[]) {
  const byField: Record<string, { fresh: number; duplicate: number }> = {};
  const counters: Record<string, number> = {};
  let fresh = 0;
  let duplicate = 0;
  let records = 0;
  let waitMsSum = 0;
  let invocations = 0;
  let invocationMsSum = 0;
  let invocationMsSquaredSum = 0;
  for (const bucket of buckets) {
    for (const [field, counts] of Object.entries(bucket.byField)) {
      const target = byField[field] ?? { fresh: 0, duplicate: 0 };
      target.fresh += counts.fresh;
      target.duplicate += counts.duplicate;
      byField[field] = target;
      fresh += counts.fresh;
      duplicate += counts.duplicate;
    }
    for (const [name, value] of Object.entries(bucket.counters))
      counters[name] = (counters[name] ?? 0) + value;
    records += bucket.records;
    waitMsSum += bucket.waitMsSum;
    invocations += bucket.invocations;
    invocationMsSum += bucket.invocationMsSum;
    invocationMsSquaredSum += bucket.invocationMsSquaredSum ?? 0;
  }
  return {
    byField,
    counters,
    fresh,
    duplicate,
    records,
    waitMsSum,
    invocations,
    invocationMsSum,
    invocationMsSquaredSum,
  };
}

function rate(fresh: number, duplicate: number): number | undefined {
  return fresh + duplicate === 0 ? undefined : (100 * duplicate) / (fresh + duplicate);
}

function withoutCallbacks(options: SimulationOptions): SimulationResult['options'] {
  const { onInterval: _i, onProgress: _p, ...rest } = options;
  return rest;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** The `/local/*` endpoints the simulator uses. */
class StackApi {
  constructor(readonly url: string) {}

  async #json<T>(path: string, init?: RequestInit): Promise<T> {
    const response = await fetch(`${this.url}${path}`, { ...init, signal: AbortSignal.timeout(130_000) });
    if (!response.ok)
      throw new Error(
        `${init?.method ?? 'GET'} ${path} answered ${response.status}: ${await response.text()}`,
      );
    return (await response.json()) as T;
  }

  faults(): Promise<Faults> {
    return this.#json('/local/faults');
  }

  setFaults(patch: unknown): Promise<Faults> {
    return this.#json('/local/faults', { method: 'POST', body: JSON.stringify(patch) });
  }

  stats(sinceSeconds: number): Promise<StatsSnapshot> {
    return this.#json(`/local/stats?since=${sinceSeconds}`);
  }

  effects(): Promise<EffectsView> {
    return this.#json('/local/effects');
  }

  async effectsTotal(): Promise<number> {
    return (await this.effects()).total;
  }

  async waitUntilDrained(timeoutMs: number): Promise<boolean> {
    const response = await fetch(`${this.url}/local/drained?timeoutMs=${Math.round(timeoutMs)}`, {
      signal: AbortSignal.timeout(timeoutMs + 10_000),
    });
    await response.arrayBuffer();
    return response.ok;
  }
}
