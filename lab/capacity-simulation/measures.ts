/** What a scenario run measured, and the summaries the report prints (percentiles, backlog peaks, drains). */

import { percentile } from '../../cli/tools/statistics.ts';

/** Waits of one lane (ms), kept whole: a run's few million fit a Float64Array. */
export class LaneSeries {
  #values = new Float64Array(1024);
  #length = 0;

  add(value: number): void {
    if (this.#length === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#length++] = value;
  }

  get count(): number {
    return this.#length;
  }

  /** The nearest-rank percentile; 0 for no wait. */
  percentile(p: number): number {
    return this.#length === 0 ? 0 : percentile(this.#values.subarray(0, this.#length), p);
  }
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
  readonly ackLatencies: readonly number[];
  readonly waits: { readonly message: LaneSeries; readonly status: LaneSeries };
  /** Message-lane waits per business number. */
  readonly waitsByNumber: ReadonlyMap<number, LaneSeries>;
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
