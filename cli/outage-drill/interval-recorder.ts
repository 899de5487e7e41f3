/**
 * What the run looks like while it runs: one row per reporting interval (Meta's deliveries, the stack's
 * throughput, queue and duplicates) and a progress snapshot, both handed to the caller's callbacks.
 */
import type { StatsSnapshot } from '../local/observe/pipeline-stats.ts';
import type { LocalStackClient } from '../local/stack/local-stack-client.ts';
import { duplicateRate, sumBuckets } from './bucket-sums.ts';
import type { MetaDeliveries } from './meta-deliveries.ts';
import type { Phase, PhaseClock } from './phase-clock.ts';

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

export interface RecorderOptions {
  /** S: the configured mean effect time, ms. */
  readonly effectMeanMs: number;
  /** c: consumer workers. */
  readonly workers: number;
  readonly durationSeconds: number;
  readonly onInterval?: (row: IntervalRow) => void;
  readonly onProgress?: (progress: Progress) => void;
}

export class IntervalRecorder {
  readonly rows: IntervalRow[] = [];
  readonly #stack: LocalStackClient;
  readonly #clock: PhaseClock;
  readonly #deliveries: MetaDeliveries;
  readonly #options: RecorderOptions;
  #intervalStart: number;
  #lastStats: StatsSnapshot | undefined;
  #lastEffects: number | undefined;

  constructor(
    stack: LocalStackClient,
    clock: PhaseClock,
    deliveries: MetaDeliveries,
    options: RecorderOptions,
  ) {
    this.#stack = stack;
    this.#clock = clock;
    this.#deliveries = deliveries;
    this.#options = options;
    this.#intervalStart = clock.startedAt;
  }

  /** Closes the running interval (its phase: the one at its midpoint) and starts the next. */
  nextInterval(): void {
    const now = Date.now();
    const phase = this.#clock.phaseAt((this.#intervalStart + now) / 2);
    void this.#closeInterval(this.#intervalStart, now, phase);
    this.#intervalStart = now;
    void this.#stack.effects().then((effects) => {
      this.#lastEffects = effects.total;
    });
  }

  /** The drain's last interval, unless it ran under a second (its per-second rates would only add noise). */
  async closeLastInterval(): Promise<void> {
    if (Date.now() - this.#intervalStart >= 1_000) {
      await this.#closeInterval(this.#intervalStart, Date.now(), 'drain');
    }
    this.#lastEffects = (await this.#stack.effects()).total;
  }

  reportProgress(): void {
    this.#options.onProgress?.({
      elapsedSeconds: Math.min(this.#clock.elapsedSeconds(), this.#options.durationSeconds),
      totalSeconds: this.#options.durationSeconds,
      phase: this.#clock.phaseAt(),
      events: this.#deliveries.events.length,
      deliveriesSent: this.#deliveries.totals.deliveriesSent,
      pendingRetries: this.#deliveries.pendingRetries,
      backlog: this.#lastStats?.queue?.backlog,
      effects: this.#lastEffects,
    });
  }

  async #closeInterval(fromMs: number, toMs: number, phase: Phase): Promise<void> {
    const stats = await this.#stack.stats(Math.floor(fromMs / 1000));
    this.#lastStats = stats;
    const buckets = stats.series.filter((b) => b.t * 1000 >= fromMs - 999 && b.t * 1000 < toMs);
    const seconds = Math.max(0.001, (toMs - fromMs) / 1000);
    const sum = sumBuckets(buckets);
    const eventsIn = sum.counters.EventsPerDelivery ?? 0;
    const lastQueue = [...buckets].reverse().find((b) => b.queue)?.queue ?? stats.queue;
    const { effectMeanMs, workers } = this.#options;
    const row: IntervalRow = {
      fromSecond: Math.round((fromMs - this.#clock.startedAt) / 1000),
      toSecond: Math.round((toMs - this.#clock.startedAt) / 1000),
      phase,
      ...this.#deliveries.takeIntervalCounts(),
      eventsInPerSecond: eventsIn / seconds,
      effectsPerSecond: sum.fresh / seconds,
      duplicatesSkipped: sum.duplicate,
      backlog: lastQueue?.backlog,
      dlq: lastQueue?.dlq,
      meanWaitMs: sum.records === 0 ? undefined : sum.waitMsSum / sum.records,
      utilisation: ((eventsIn / seconds) * (effectMeanMs / 1000)) / workers,
      busy: sum.invocationMsSum / (workers * seconds * 1000),
      duplicateRateByField: Object.fromEntries(
        Object.entries(sum.byField).map(([field, c]) => [field, duplicateRate(c.fresh, c.duplicate)]),
      ),
    };
    this.rows.push(row);
    this.#options.onInterval?.(row);
  }
}
