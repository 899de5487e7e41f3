/**
 * Per subscriber and lane (contract/lanes.ts), what a person waiting for a reply would feel: how long records
 * waited before their handler (p50 and p99 of the consumer's `EventWaitTime` values of the last minute, read
 * back from its EMF output) and the age of the lane's oldest message (from the queue, sampled every second),
 * beside the lane's queue depths. Served in `/local/stats` under each subscriber's `lanes`.
 */
import type { LaneName } from 'whatsapp-webhook-dedup/contract/lanes';
import { percentileOfSorted } from '../../tools/statistics.ts';
import type { QueueSample } from './pipeline-stats.ts';

/** The span the wait percentiles cover. */
export const LANE_WAIT_WINDOW_MS = 60_000;

export interface LaneDescriptor {
  readonly subscriber: string;
  readonly lane: LaneName;
  /** A FIFO queue run in conversation order. */
  readonly ordered: boolean;
}

export interface LaneQueueSample extends QueueSample {
  /**
   * Sample time minus the oldest `SentTimestamp` among the lane queue's messages not yet deleted (waiting,
   * delayed or in flight), as CloudWatch's `ApproximateAgeOfOldestMessage` counts them; null when empty.
   */
  readonly oldestMessageAgeMs: number | null;
}

export interface LaneStatsSnapshot {
  readonly ordered: boolean;
  /** `EventWaitTime` values of the last minute. */
  readonly waitCount: number;
  /** Nearest-rank percentiles of those values; null without any. */
  readonly waitP50Ms: number | null;
  readonly waitP99Ms: number | null;
  /** The latest queue sample; undefined before the first. */
  readonly queue: LaneQueueSample | undefined;
  /**
   * When the last minute holds no wait: the figures of the last minute that did, and how long ago its latest
   * wait arrived, so that a quiet lane keeps showing what it last did. Undefined before any wait.
   */
  readonly lastActive: LastActiveWaits | undefined;
}

export interface LastActiveWaits {
  readonly waitCount: number;
  readonly waitP50Ms: number;
  readonly waitP99Ms: number;
  readonly ageMs: number;
}

interface LaneState {
  readonly ordered: boolean;
  /** Arrival time and value of each wait, oldest first. */
  readonly waits: { at: number; ms: number }[];
  queue: LaneQueueSample | undefined;
  /** The figures of the lane's waits when they last expired, and when the latest of them arrived. */
  last: (Omit<LastActiveWaits, 'ageMs'> & { readonly at: number }) | undefined;
}

export class LaneStats {
  readonly #lanes = new Map<string, Map<LaneName, LaneState>>();
  readonly #clock: () => number;

  constructor(lanes: readonly LaneDescriptor[], options: { clock?: () => number } = {}) {
    this.#clock = options.clock ?? Date.now;
    for (const { subscriber, lane, ordered } of lanes) {
      const ofSubscriber = this.#lanes.get(subscriber) ?? new Map<LaneName, LaneState>();
      ofSubscriber.set(lane, { ordered, waits: [], queue: undefined, last: undefined });
      this.#lanes.set(subscriber, ofSubscriber);
    }
  }

  /** `EventWaitTime` values (ms) a subscriber's lane emitted; ignored for an unknown lane. */
  addWaits(subscriber: string, lane: string, values: readonly number[]): void {
    const state = this.#lanes.get(subscriber)?.get(lane as LaneName);
    if (state === undefined) return;
    const at = this.#clock();
    for (const ms of values) if (Number.isFinite(ms)) state.waits.push({ at, ms });
    this.#forget(state, at);
  }

  addQueueSample(subscriber: string, lane: LaneName, sample: LaneQueueSample): void {
    const state = this.#lanes.get(subscriber)?.get(lane);
    if (state !== undefined) state.queue = sample;
  }

  /** Subscriber → lane → its statistics. */
  snapshot(): Record<string, Partial<Record<LaneName, LaneStatsSnapshot>>> {
    const now = this.#clock();
    const result: Record<string, Partial<Record<LaneName, LaneStatsSnapshot>>> = {};
    for (const [subscriber, lanes] of this.#lanes) {
      const ofSubscriber: Partial<Record<LaneName, LaneStatsSnapshot>> = {};
      for (const [lane, state] of lanes) {
        this.#forget(state, now);
        const empty = state.waits.length === 0;
        const current = empty ? undefined : figures(state.waits);
        const { last } = state;
        ofSubscriber[lane] = {
          ordered: state.ordered,
          waitCount: state.waits.length,
          waitP50Ms: current?.waitP50Ms ?? null,
          waitP99Ms: current?.waitP99Ms ?? null,
          queue: state.queue,
          lastActive:
            empty && last !== undefined
              ? {
                  waitCount: last.waitCount,
                  waitP50Ms: last.waitP50Ms,
                  waitP99Ms: last.waitP99Ms,
                  ageMs: now - last.at,
                }
              : undefined,
        };
      }
      result[subscriber] = ofSubscriber;
    }
    return result;
  }

  #forget(state: LaneState, now: number): void {
    const oldest = now - LANE_WAIT_WINDOW_MS;
    let drop = 0;
    while (drop < state.waits.length && (state.waits[drop] as { at: number }).at < oldest) drop++;
    if (drop === 0) return;
    // The lane goes quiet: keep what its last minute of waits looked like.
    if (drop === state.waits.length) {
      state.last = { ...figures(state.waits), at: (state.waits.at(-1) as { at: number }).at };
    }
    state.waits.splice(0, drop);
  }
}

/** Count and nearest-rank percentiles of a non-empty window of waits. */
function figures(waits: readonly { ms: number }[]): Omit<LastActiveWaits, 'ageMs'> {
  const sorted = Float64Array.from(waits, (w) => w.ms).sort();
  return {
    waitCount: sorted.length,
    waitP50Ms: percentileOfSorted(sorted, 50),
    waitP99Ms: percentileOfSorted(sorted, 99),
  };
}
