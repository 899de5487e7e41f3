/**
 * The local stack's statistics with several subscribers: everything summed over the pipeline (the shape of
 * `/local/stats` with one subscriber, which the dashboard's charts and the outage drill read), and each
 * subscriber's own totals, queue depths and skipped duplicates beside it.
 */
import type { LaneName } from 'whatsapp-webhook-dedup/contract/lanes';
import type { InvocationReport } from '../sqs-event-source.ts';
import type { MetricPoint } from './emf.ts';
import type { LaneStatsSnapshot } from './lane-stats.ts';
import {
  type DuplicateSighting,
  PipelineStats,
  type QueueSample,
  type StatsSnapshot,
} from './pipeline-stats.ts';

export interface SubscriberStatsSnapshot {
  /** Side effects its handlers completed (the local stack's effects journal). */
  readonly effects: number;
  readonly totals: StatsSnapshot['totals'];
  /** Both lanes summed. */
  readonly queue: QueueSample | undefined;
  readonly recentDuplicates: readonly DuplicateSighting[];
  /** Each lane's waits, oldest message age and queue: `status` always, `message` with a message lane. */
  readonly lanes: Partial<Record<LaneName, LaneStatsSnapshot>>;
}

export interface LocalStatsSnapshot extends StatsSnapshot {
  /** Subscriber name → its own statistics, in the configured order. */
  readonly subscribers: Readonly<Record<string, SubscriberStatsSnapshot>>;
}

export class SubscriberStats {
  readonly #pipeline: PipelineStats;
  readonly #bySubscriber: ReadonlyMap<string, PipelineStats>;
  readonly #clock: () => number;
  readonly #effectsOf: (subscriber: string) => number;
  readonly #lanes: () => Readonly<Record<string, Partial<Record<LaneName, LaneStatsSnapshot>>>>;

  constructor(
    subscriberNames: readonly string[],
    options: ConstructorParameters<typeof PipelineStats>[0] & {
      /** A subscriber's effect count so far. */
      readonly effectsOf?: (subscriber: string) => number;
      /** Subscriber → lane → its statistics (a `LaneStats` snapshot). */
      readonly lanes?: () => Readonly<Record<string, Partial<Record<LaneName, LaneStatsSnapshot>>>>;
    } = {},
  ) {
    this.#clock = options.clock ?? Date.now;
    this.#effectsOf = options.effectsOf ?? (() => 0);
    this.#lanes = options.lanes ?? (() => ({}));
    this.#pipeline = new PipelineStats(options);
    this.#bySubscriber = new Map(subscriberNames.map((name) => [name, new PipelineStats(options)]));
  }

  /** A receiver metric (no subscriber), or one subscriber's consumer metric. */
  addMetric(point: MetricPoint, subscriber: string | undefined): void {
    this.#pipeline.addMetric(point);
    if (subscriber !== undefined) this.#bySubscriber.get(subscriber)?.addMetric(point);
  }

  addDuplicate(sighting: DuplicateSighting): void {
    this.#pipeline.addDuplicate(sighting);
    if (sighting.subscriber !== undefined)
      this.#bySubscriber.get(sighting.subscriber)?.addDuplicate(sighting);
  }

  addInvocation(report: InvocationReport, subscriber: string): void {
    this.#pipeline.addInvocation(report);
    this.#bySubscriber.get(subscriber)?.addInvocation(report);
  }

  /** Each subscriber's queue and DLQ, and the quarantine queue: the pipeline's sample is their sum. */
  addQueueSamples(samples: Readonly<Record<string, QueueSample>>, quarantine: number): void {
    let backlog = 0;
    let inFlight = 0;
    let dlq = 0;
    for (const [name, sample] of Object.entries(samples)) {
      this.#bySubscriber.get(name)?.addQueueSample(sample);
      backlog += sample.backlog;
      inFlight += sample.inFlight;
      dlq += sample.dlq;
    }
    this.#pipeline.addQueueSample({ backlog, inFlight, dlq, quarantine });
  }

  snapshot(sinceSeconds?: number): LocalStatsSnapshot {
    const subscribers: Record<string, SubscriberStatsSnapshot> = {};
    const lanes = this.#lanes();
    for (const [name, stats] of this.#bySubscriber) {
      // The per-second series stays pipeline-wide: a subscriber's totals need only the latest second.
      const { totals, queue, recentDuplicates } = stats.snapshot(Math.floor(this.#clock() / 1000));
      subscribers[name] = {
        effects: this.#effectsOf(name),
        totals,
        queue,
        recentDuplicates,
        lanes: lanes[name] ?? {},
      };
    }
    return { ...this.#pipeline.snapshot(sinceSeconds), subscribers };
  }
}
