/** What a scenario run measured, and the summaries the report prints (percentiles, backlog peaks, drains). */

import { build, type Histogram } from 'hdr-histogram-js';

/**
 * Latencies of one series (ms: a lane's waits, the POSTs' acknowledgements) in an HDR histogram, whose memory
 * grows with the logarithm of the largest latency and not with their count (a full steady run records millions).
 * Virtual time is whole milliseconds, and at four significant digits every value below 32,768 ms has a bucket
 * of its own: percentiles up there are the samples' own nearest-rank ones; above, within 1/16,384 of them.
 */
export class LatencySeries {
  readonly #histogram: Histogram = build({ numberOfSignificantValueDigits: 4 });

  add(ms: number): void {
    this.#histogram.recordValue(Math.round(ms));
  }

  get count(): number {
    return this.#histogram.totalCount;
  }

  /** The nearest-rank percentile; 0 for none. */
  percentile(p: number): number {
    return this.count === 0 ? 0 : this.#histogram.getValueAtPercentile(p);
  }

  /** One series of every sample of these (a set of numbers' waits, say). */
  static merged(series: readonly LatencySeries[]): LatencySeries {
    const all = new LatencySeries();
    for (const one of series) all.#histogram.add(one.#histogram);
    return all;
  }
}

/** One business number's statuses in the status lane. */
export interface NumberStatuses {
  /** From the first acceptance of each status to its handler's start. */
  readonly waits: LatencySeries;
  /** Its messages in the status lane's queue (visible or in flight) at once, at most. */
  peakBacklog: number;
  /** When its last status was first accepted (virtual ms from the start): its traffic's end, as the lane sees it. */
  lastAcceptedMs: number;
  /** When its status backlog first emptied after that (virtual ms from the start); undefined: it never did. */
  drainedMs: number | undefined;
}

export interface ScenarioMeasures {
  readonly scenario: string;
  readonly seed: number;
  readonly virtualMs: number;
  readonly wallMs: number;
  readonly instants: number;
  /** Every update accepted, every queue empty when the run ended. */
  readonly drained: boolean;
  readonly sender: {
    readonly posts: number;
    readonly accepted: number;
    readonly throttled429: number;
    readonly serverErrors: number;
    readonly retries: number;
    readonly resends: number;
    readonly pending: number;
  };
  /** The acknowledgement latency of every POST answered 200. */
  readonly ackLatencies: LatencySeries;
  readonly waits: { readonly message: LatencySeries; readonly status: LatencySeries };
  /** Message-lane waits per business number. */
  readonly waitsByNumber: ReadonlyMap<number, LatencySeries>;
  /**
   * The status lane per business number (per MessageGroupId: the receiver sends a number's statuses with its
   * phone_number_id as their group): waits, backlog and its drain.
   */
  readonly statusesByNumber: ReadonlyMap<number, NumberStatuses>;
  /** Each lane's messages not yet deleted, every second. */
  readonly backlog: { readonly message: readonly number[]; readonly status: readonly number[] };
  readonly dynamoDb: {
    readonly writes: number;
    readonly reads: number;
    readonly throttledAttempts: number;
    readonly throttledCalls: number;
    readonly throttledByPartition: number;
    readonly warmWriteUnits: number;
  };
  readonly deadLetters: {
    readonly statusLane: number;
    readonly messageLane: number;
    readonly quarantined: number;
  };
  readonly fifoDeduplicated: number;
  /** Updates accepted (200) more than once: Meta's re-sends, and retries of POSTs that had been stored. */
  readonly duplicateAcceptances: number;
  readonly effects: {
    readonly keys: number;
    readonly effected: number;
    readonly missing: number;
    readonly repeated: number;
    readonly violations: number;
    /** Messages still in the lanes' queues (visible or in flight) when the run stopped. */
    readonly queuedAtEnd: number;
  };
  /** The exactly-once bookkeeping (event-book.ts): what it held, and the checks that it dropped nothing early. */
  readonly bookkeeping: {
    /** Event keys with a live record at once, at most: what its memory follows. */
    readonly peakLiveEvents: number;
    readonly liveEventsAtEnd: number;
    /** Effects of keys already folded: counted as violations; 0 when no record was dropped early. */
    readonly lateEffects: number;
    /** Claim-table items of no followed event once every record was folded: 0 when none was forgotten. */
    readonly unaccountedItems: number;
  };
  readonly lambda: {
    readonly peak: number;
    readonly receiverPeak: number;
    readonly statusPeak: number;
    readonly messagePeak: number;
    readonly throttles: number;
    readonly receiverInvocations: number;
    readonly receiverMs: number;
    readonly consumerInvocations: number;
    readonly consumerMs: number;
    readonly statusInvocations: number;
    readonly messageInvocations: number;
    readonly statusRecords: number;
    readonly messageRecords: number;
    /** Virtual ms each lane's invocations took, in all. */
    readonly statusMs: number;
    readonly messageMs: number;
  };
  readonly sqsRequests: { readonly standard: number; readonly fifo: number };
  readonly trafficMs: number;
}

/** The largest backlog, and the seconds from it until the backlog fell to a tenth of it (undefined: never). */
export function backlogPeak(series: readonly number[]): { peak: number; drainSeconds: number | undefined } {
  let peak = 0;
  let at = 0;
  series.forEach((value, index) => {
    if (value > peak) {
      peak = value;
      at = index;
    }
  });
  if (peak === 0) return { peak, drainSeconds: 0 };
  for (let index = at; index < series.length; index++) {
    if ((series[index] as number) <= peak / 10) return { peak, drainSeconds: index - at };
  }
  return { peak, drainSeconds: undefined };
}
