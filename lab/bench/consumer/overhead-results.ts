/**
 * The `consumerOverhead` part of lab/bench/results.json (docs/benchmarks.md, "Consumer overhead"): the consumer
 * Lambda's handler from its invocation to the handler's start, beside a bare conditional PutItem on the same
 * table, interleaved in one process. Pure, so that the unit tests can feed it made-up samples.
 */
import { median, percentile, round } from '../../../cli/tools/statistics.ts';

/** What ./overhead-worker.ts measured, in run order (ms). */
export interface ConsumerOverheadOutput {
  /** Invocation start → the handler's first line, one fresh message record per invocation. */
  readonly toHandlerMs: readonly number[];
  /** Invocation start → the handler's answer: claim, handler, completion, log line and metrics. */
  readonly invocationMs: readonly number[];
  /** One conditional PutItem of a fresh key (`attribute_not_exists`), the claim's round trip and nothing else. */
  readonly barePutMs: readonly number[];
  /** Unmeasured pairs run first. */
  readonly warmupPairs: number;
  /** The lane the consumer read, and whether it ran records in conversation order. */
  readonly lane: string;
  readonly ordered: boolean;
}

/** A series' median and spread (0.001 ms: the goal compares two medians plus 1 ms). */
export interface MsSpread {
  readonly medianMs: number;
  readonly p25Ms: number;
  readonly p75Ms: number;
}

export interface ConsumerOverheadResults {
  readonly invocations: number;
  readonly warmupPairs: number;
  readonly lane: string;
  readonly ordered: boolean;
  readonly toHandler: MsSpread;
  readonly barePut: MsSpread;
  readonly invocation: MsSpread;
  /** toHandler.medianMs − barePut.medianMs: what the consumer adds before the handler, beyond the claim's round trip. */
  readonly addedMs: number;
}

function spread(samples: readonly number[]): MsSpread {
  return {
    medianMs: round(median(samples), 3),
    p25Ms: round(percentile(samples, 25), 3),
    p75Ms: round(percentile(samples, 75), 3),
  };
}

export function summarizeConsumerOverhead(output: ConsumerOverheadOutput): ConsumerOverheadResults {
  if (output.toHandlerMs.length === 0 || output.barePutMs.length === 0) {
    throw new Error('The consumer overhead part measured no invocation or no bare PutItem.');
  }
  const toHandler = spread(output.toHandlerMs);
  const barePut = spread(output.barePutMs);
  return {
    invocations: output.toHandlerMs.length,
    warmupPairs: output.warmupPairs,
    lane: output.lane,
    ordered: output.ordered,
    toHandler,
    barePut,
    invocation: spread(output.invocationMs),
    addedMs: round(toHandler.medianMs - barePut.medianMs, 3),
  };
}
