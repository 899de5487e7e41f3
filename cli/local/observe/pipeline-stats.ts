/**
 * What the local stack knows about its own pipeline, per second: the consumer's and receiver's metrics
 * (read back from their EMF output), the queue depths, how long records waited in the queue, and the
 * duplicates skipped most recently. Served as `GET /local/stats` to the dashboard and the outage drill.
 */
import {
  ANSWER_CLASS_DIMENSION,
  ConsumerFieldMetric,
  ConsumerMetric,
  FIELD_DIMENSION,
  FORWARD_ANSWERS_METRIC,
  PHONE_NUMBER_DIMENSION,
  ReceiverMetric,
  SQS_DEDUPLICATED_SENDS_METRIC,
} from 'whatsapp-webhook-dedup/contract/metric-names';
import type { InvocationReport } from '../sqs-event-source.ts';
import type { MetricPoint } from './emf.ts';

export interface FieldCounts {
  fresh: number;
  /** Duplicates of a done event plus duplicates of one still in flight. */
  duplicate: number;
  duplicateInFlight: number;
  handlerErrors: number;
}

export interface QueueSample {
  /** Visible messages waiting for a consumer (ApproximateNumberOfMessages). */
  readonly backlog: number;
  /** Received and not yet deleted (ApproximateNumberOfMessagesNotVisible). */
  readonly inFlight: number;
  readonly dlq: number;
  /** The pipeline's quarantine queue (visible + in flight); absent from a single subscriber's sample. */
  readonly quarantine?: number;
}

export interface StatsBucket {
  /** Epoch seconds at the start of this second. */
  readonly t: number;
  readonly byField: Record<string, FieldCounts>;
  /** Receiver and consumer metrics without a `Field` dimension, by name. */
  readonly counters: Record<string, number>;
  /** Records handed to the consumer this second, and their summed wait in the queue (ms). */
  records: number;
  waitMsSum: number;
  /** Consumer invocations that ended this second, and their summed duration (ms). */
  invocations: number;
  invocationMsSum: number;
  /** Sum of squared durations, for the variance of the service time. */
  invocationMsSquaredSum: number;
  queue?: QueueSample;
}

export interface DuplicateSighting {
  readonly key: string;
  /** The subscriber whose consumer skipped it. */
  readonly subscriber?: string;
  readonly field?: string;
  /** Epoch ms. */
  readonly at: number;
  readonly inFlight: boolean;
}

export interface StatsSnapshot {
  readonly now: number;
  readonly startedAt: number;
  readonly totals: {
    readonly byField: Record<string, FieldCounts & { duplicateRate: number }>;
    readonly counters: Record<string, number>;
    readonly records: number;
    readonly meanWaitMs: number;
    readonly invocations: number;
    readonly meanInvocationMs: number;
    /** Repeats the message lane's FIFO queue absorbed before any claim saw them (SQS_DEDUPLICATED_SENDS_METRIC). */
    readonly absorbedByQueue: number;
  };
  readonly queue: QueueSample | undefined;
  /** One bucket per second, oldest first; seconds without activity are filled in. */
  readonly series: readonly StatsBucket[];
  readonly recentDuplicates: readonly DuplicateSighting[];
}

const FIELD_METRICS: Record<string, keyof FieldCounts | undefined> = {
  [ConsumerFieldMetric.EventsFresh]: 'fresh',
  [ConsumerFieldMetric.EventsDuplicate]: 'duplicate',
  [ConsumerFieldMetric.EventsDuplicateInFlight]: 'duplicateInFlight',
  [ConsumerFieldMetric.HandlerErrors]: 'handlerErrors',
};

const KNOWN_COUNTERS = new Set<string>([
  ...Object.values(ConsumerMetric),
  ...Object.values(ReceiverMetric),
  ...Object.values(ConsumerFieldMetric),
  SQS_DEDUPLICATED_SENDS_METRIC,
  FORWARD_ANSWERS_METRIC,
]);

export class PipelineStats {
  readonly #windowSeconds: number;
  readonly #recentLimit: number;
  readonly #clock: () => number;
  readonly #startedAt: number;
  readonly #buckets = new Map<number, StatsBucket>();
  readonly #totals = {
    byField: {} as Record<string, FieldCounts>,
    counters: {} as Record<string, number>,
    records: 0,
    waitMsSum: 0,
    invocations: 0,
    invocationMsSum: 0,
  };
  readonly #recent: DuplicateSighting[] = [];
  #queue: QueueSample | undefined;

  constructor(options: { windowSeconds?: number; recentDuplicates?: number; clock?: () => number } = {}) {
    this.#windowSeconds = options.windowSeconds ?? 600;
    this.#recentLimit = options.recentDuplicates ?? 50;
    this.#clock = options.clock ?? Date.now;
    this.#startedAt = this.#clock();
  }

  addMetric(point: MetricPoint): void {
    // A declared number's repeat of counts its fields already hold (docs/design.md §13): counted once, there.
    if (!KNOWN_COUNTERS.has(point.name) || point.dimensions[PHONE_NUMBER_DIMENSION] !== undefined) return;
    const bucket = this.#bucket(point.timestamp);
    const field = point.dimensions[FIELD_DIMENSION];
    const fieldCount = FIELD_METRICS[point.name];
    if (field !== undefined && fieldCount !== undefined) {
      for (const target of [bucket.byField, this.#totals.byField]) {
        const counts = target[field] ?? emptyCounts();
        target[field] = counts;
        counts[fieldCount] += point.value;
        if (fieldCount === 'duplicateInFlight') counts.duplicate += point.value;
      }
    }
    // A forward subscriber's answers are counted by class: `ForwardAnswers/2xx`, `ForwardAnswers/5xx`, …
    const qualifier = field ?? point.dimensions[ANSWER_CLASS_DIMENSION];
    const counterName = qualifier === undefined ? point.name : `${point.name}/${qualifier}`;
    for (const target of [bucket.counters, this.#totals.counters]) {
      target[counterName] = (target[counterName] ?? 0) + point.value;
    }
  }

  addDuplicate(sighting: DuplicateSighting): void {
    this.#recent.push(sighting);
    if (this.#recent.length > this.#recentLimit)
      this.#recent.splice(0, this.#recent.length - this.#recentLimit);
  }

  addInvocation(report: InvocationReport): void {
    const started = this.#bucket(report.startedAt);
    for (const record of report.records) {
      const wait = Math.max(0, report.startedAt - Number(record.attributes.SentTimestamp));
      started.records++;
      started.waitMsSum += wait;
      this.#totals.records++;
      this.#totals.waitMsSum += wait;
    }
    const ended = this.#bucket(report.startedAt + report.durationMs);
    ended.invocations++;
    ended.invocationMsSum += report.durationMs;
    ended.invocationMsSquaredSum += report.durationMs ** 2;
    this.#totals.invocations++;
    this.#totals.invocationMsSum += report.durationMs;
  }

  addQueueSample(sample: QueueSample): void {
    this.#queue = sample;
    this.#bucket(this.#clock()).queue = sample;
  }

  snapshot(sinceSeconds?: number): StatsSnapshot {
    const now = this.#clock();
    const nowSecond = Math.floor(now / 1000);
    const first = Math.max(
      Math.floor(this.#startedAt / 1000),
      nowSecond - this.#windowSeconds + 1,
      sinceSeconds ?? Number.NEGATIVE_INFINITY,
    );
    const series: StatsBucket[] = [];
    for (let t = first; t <= nowSecond; t++) series.push(this.#buckets.get(t) ?? emptyBucket(t));
    const byField: Record<string, FieldCounts & { duplicateRate: number }> = {};
    for (const [field, counts] of Object.entries(this.#totals.byField)) {
      byField[field] = { ...counts, duplicateRate: duplicateRate(counts) };
    }
    const totals = this.#totals;
    return {
      now,
      startedAt: this.#startedAt,
      totals: {
        byField,
        counters: { ...totals.counters },
        records: totals.records,
        meanWaitMs: totals.records === 0 ? 0 : totals.waitMsSum / totals.records,
        invocations: totals.invocations,
        meanInvocationMs: totals.invocations === 0 ? 0 : totals.invocationMsSum / totals.invocations,
        absorbedByQueue: totals.counters[SQS_DEDUPLICATED_SENDS_METRIC] ?? 0,
      },
      queue: this.#queue,
      series,
      recentDuplicates: [...this.#recent].reverse(),
    };
  }

  #bucket(epochMs: number): StatsBucket {
    const t = Math.floor(epochMs / 1000);
    let bucket = this.#buckets.get(t);
    if (bucket === undefined) {
      bucket = emptyBucket(t);
      this.#buckets.set(t, bucket);
      const oldest = Math.floor(this.#clock() / 1000) - this.#windowSeconds;
      for (const key of this.#buckets.keys()) if (key < oldest) this.#buckets.delete(key);
    }
    return bucket;
  }
}

/** 100 × duplicates / (fresh + duplicates), docs/design.md §5; 0 when nothing was seen. */
export function duplicateRate(counts: Pick<FieldCounts, 'fresh' | 'duplicate'>): number {
  const seen = counts.fresh + counts.duplicate;
  return seen === 0 ? 0 : (100 * counts.duplicate) / seen;
}

function emptyCounts(): FieldCounts {
  return { fresh: 0, duplicate: 0, duplicateInFlight: 0, handlerErrors: 0 };
}

/** A second with nothing in it. */
export function emptyBucket(t: number): StatsBucket {
  return {
    t,
    byField: {},
    counters: {},
    records: 0,
    waitMsSum: 0,
    invocations: 0,
    invocationMsSum: 0,
    invocationMsSquaredSum: 0,
  };
}
