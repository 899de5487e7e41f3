/**
 * The `conversations` part of lab/bench/results.json (docs/benchmarks.md, "Conversations"), from the journal
 * lines of ./journal-handlers.ts and the times the bench POSTed: pure, so that the unit tests can feed it
 * made-up journals.
 */
import { median, percentile, round } from '../../../cli/tools/statistics.ts';

/** A key's handler run, from its `S` and `E` lines (epoch ms). */
export interface HandlerRun {
  readonly startMs: number;
  /** Undefined while the handler runs. */
  readonly endMs?: number;
  /** `S` lines of the key: more than 1 is a repeated handler call. */
  readonly starts: number;
}

/** Folds journal lines (`S <key> <ms>` / `E <key> <ms>`) into each key's first run. */
export function foldJournal(
  lines: Iterable<string>,
  runs = new Map<string, HandlerRun>(),
): Map<string, HandlerRun> {
  for (const line of lines) {
    const [kind, key, ms] = line.split(' ');
    const at = Number(ms);
    if (key === undefined || !Number.isFinite(at)) continue;
    const run = runs.get(key);
    if (kind === 'S') {
      runs.set(key, run === undefined ? { startMs: at, starts: 1 } : { ...run, starts: run.starts + 1 });
    } else if (kind === 'E' && run !== undefined && run.endMs === undefined) {
      runs.set(key, { ...run, endMs: at });
    }
  }
  return runs;
}

/** Milliseconds, their median and spread, as the pages show them. */
export interface LatencySummary {
  /** Every sample, in run order (0.01 ms): what the goals are judged on. */
  readonly samplesMs: number[];
  readonly medianMs: number;
  readonly p25Ms: number;
  readonly p75Ms: number;
  readonly minMs: number;
  readonly maxMs: number;
}

export function summarizeLatencies(samples: readonly number[]): LatencySummary {
  return {
    samplesMs: samples.map((sample) => round(sample, 2)),
    medianMs: round(median(samples), 1),
    p25Ms: round(percentile(samples, 25), 1),
    p75Ms: round(percentile(samples, 75), 1),
    minMs: round(Math.min(...samples), 1),
    maxMs: round(Math.max(...samples), 1),
  };
}

export interface ReplyLatencyResults {
  readonly runs: number;
  /** The local stack with its defaults: POST → handler start of a lone inbound message. */
  readonly ours: LatencySummary;
  /** The same receiver, queues and pollers, the handler called with no claim (./pass-through-consumer.ts, run by npm start itself). */
  readonly floor: LatencySummary;
  /** ours.medianMs / floor.medianMs, for reading; the goal divides the samples' medians. */
  readonly ratio: number;
  /** The same waits from the POST's 200: the queue, poller and consumer alone, without the receiver. */
  readonly oursAfterAnswer: LatencySummary;
  readonly floorAfterAnswer: LatencySummary;
}

export interface StormResults {
  readonly statuses: number;
  /** Statuses POSTed per second, as sent (the target is `targetPerSec`). */
  readonly statusesPerSec: number;
  readonly targetPerSec: number;
  readonly statusHandlerMs: number;
  /** POSTs answered otherwise than 200, statuses and live messages. */
  readonly non200: number;
  /** The status POSTs' answer times (the receiver under the storm). */
  readonly statusAckP50Ms: number;
  readonly statusAckMaxMs: number;
  /** Status handlers started by the time the last live message's had. */
  readonly statusesHandledByLastLive: number;
  readonly live: LatencySummary & { readonly p99Ms: number; readonly count: number };
  /** Live messages that reached no handler before the bench gave up on them. */
  readonly liveMissing: number;
  /** live p99 / the reply-latency median of the same stack. */
  readonly ratioToLoneMedian: number;
  /** The live messages' waits from their POST's 200 (the lanes' part, without the receiver's queueing). */
  readonly liveAfterAnswer: LatencySummary;
}

export interface OrderResults {
  readonly pairs: number;
  /** The gap asked between a pair's two POSTs, and the median gap sent (the second waits for the first's 200). */
  readonly gapMs: number;
  readonly medianGapSentMs: number;
  readonly maxHandlerMs: number;
  readonly seed: number;
  /** Pairs whose second message's handler started before the first's had finished. */
  readonly inversions: number;
  /** Pairs judged: both handlers ran. */
  readonly judged: number;
  /** Messages whose handler never started (their pairs are left unjudged). */
  readonly missing: number;
  /** Keys whose handler started more than once. */
  readonly repeated: number;
}

export interface ConversationsResults {
  readonly replyLatency: ReplyLatencyResults;
  readonly storm: StormResults;
  readonly order: OrderResults;
  /** The message and status lanes' settings the local stack reported (`/local/info`). */
  readonly lanes: Record<string, unknown>;
  readonly machine: {
    readonly cpus: number;
    readonly loadAverageAtStart: number[];
    readonly loadAverageAtEnd: number[];
  };
  readonly durationSeconds: number;
  readonly finishedAt: string;
}

/** One sent message: its key and when its POST started (epoch ms). */
export interface Sent {
  readonly key: string;
  readonly postedAtMs: number;
}

/** POST → handler start of each sent message that reached its handler; the others are counted missing. */
export function waits(
  sent: readonly Sent[],
  runs: ReadonlyMap<string, HandlerRun>,
): { waitsMs: number[]; missing: number } {
  const waitsMs: number[] = [];
  let missing = 0;
  for (const { key, postedAtMs } of sent) {
    const run = runs.get(key);
    if (run === undefined) missing++;
    else waitsMs.push(run.startMs - postedAtMs);
  }
  return { waitsMs, missing };
}

export interface SentPair {
  readonly first: Sent;
  readonly second: Sent;
}

export function judgeOrder(
  pairs: readonly SentPair[],
  runs: ReadonlyMap<string, HandlerRun>,
): Pick<OrderResults, 'inversions' | 'judged' | 'missing' | 'repeated'> & { medianGapSentMs: number } {
  let inversions = 0;
  let judged = 0;
  let missing = 0;
  let repeated = 0;
  for (const { first, second } of pairs) {
    const a = runs.get(first.key);
    const b = runs.get(second.key);
    missing += (a === undefined ? 1 : 0) + (b === undefined ? 1 : 0);
    repeated += (a !== undefined && a.starts > 1 ? 1 : 0) + (b !== undefined && b.starts > 1 ? 1 : 0);
    if (a === undefined || b === undefined) continue;
    judged++;
    // A first handler that never finished is overtaken by any second one that started.
    if (a.endMs === undefined || b.startMs < a.endMs) inversions++;
  }
  return {
    inversions,
    judged,
    missing,
    repeated,
    medianGapSentMs: round(median(pairs.map((pair) => pair.second.postedAtMs - pair.first.postedAtMs)), 1),
  };
}
