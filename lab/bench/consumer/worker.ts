/**
 * Child process of `npm run bench`: ours vs Powertools (and the contract floor) on the same records and
 * DynamoDB Local, warm-up first, then rounds of one run each, a fresh table per run. Ours runs in the middle
 * of every round, so that each of its comparisons (with Powertools, with the floor) is a pair of adjacent runs;
 * the order flips from round to round. Rounds go on past `runs` until the interval of the median speedup lies
 * within ±`targetHalfWidth` of it, or `maxRuns`, or `maxSeconds`.
 */
import { serveWorker } from '../support/worker-process.ts';
import type { ContestantName } from './contestant-names.ts';
import {
  type Contestant,
  contractFloor,
  ours,
  POWERTOOLS_ALL_WAMIDS_KEY,
  powertools,
  powertoolsKeyedOn,
  powertoolsPerMessage,
} from './contestants.ts';
import { buildRebatchedWorkload } from './rebatched-probe.ts';
import { narrowEnough, roundOrder } from './rounds.ts';
import { type ConsumerRun, runOnce } from './run-once.ts';
import { buildConsumerWorkload, type DuplicateKind } from './workload.ts';

export { type ConsumerRun, EffectsMismatchError } from './run-once.ts';

export interface ConsumerBenchInput {
  readonly dynamodbEndpoint: string;
  readonly records: number;
  readonly duplicateRatio: number;
  readonly batchSize: number;
  /** Warm containers running at once (Lambda's maxConcurrency). */
  readonly concurrency: number;
  /** Measured runs per contestant, at least. */
  readonly runs: number;
  /** At most; rounds stop earlier once the speedup's interval is narrow enough. */
  readonly maxRuns: number;
  /** No round starts after this many seconds of measured rounds (once `runs` are done). */
  readonly maxSeconds: number;
  /** Relative half-width of the speedup's 95% interval at which rounds stop, e.g. 0.05. */
  readonly targetHalfWidth: number;
  readonly warmupRecords: number;
  /** Unmeasured runs of each contestant before the measured pairs. */
  readonly warmupRounds: number;
  readonly functionTimeoutMs: number;
  /** Rounds run again with {@link addedRoundTripMs} on every request, after the main rounds. */
  readonly roundTripRuns: number;
  /** Network added to every DynamoDB request in those rounds: AWS-like latency. */
  readonly addedRoundTripMs: number;
  /** Run one contestant only (profiling). */
  readonly only?: ContestantName;
}

export interface RebatchedProbeResult {
  readonly records: number;
  readonly distinctEvents: number;
  readonly ours: { readonly effects: number; readonly missing: number; readonly repeated: number };
  readonly powertools: { readonly effects: number; readonly missing: number; readonly repeated: number };
  /** Powertools around the per-message function, keyed on the message id. */
  readonly powertoolsPerMessage: {
    readonly effects: number;
    readonly missing: number;
    readonly repeated: number;
  };
  /** Powertools keyed on the list of all the body's wamids. */
  readonly powertoolsAllWamids: {
    readonly effects: number;
    readonly missing: number;
    readonly repeated: number;
  };
}

export interface ConsumerBenchOutput {
  readonly rebatchedProbe: RebatchedProbeResult;
  /** The rounds with an added round trip per request. */
  readonly roundTripRuns: ConsumerRun[];
  readonly events: number;
  readonly distinctEvents: number;
  readonly duplicates: Record<DuplicateKind, number>;
  readonly runs: ConsumerRun[];
}

serveWorker<ConsumerBenchInput, ConsumerBenchOutput>(async (input, progress) => {
  const workload = buildConsumerWorkload({
    records: input.records,
    duplicateRatio: input.duplicateRatio,
    batchSize: input.batchSize,
  });
  const warmup = buildConsumerWorkload({
    records: input.warmupRecords,
    duplicateRatio: input.duplicateRatio,
    batchSize: input.batchSize,
    seed: 7,
    serialOffset: 1_000_000,
  });
  const contestants = [powertools, ours, contractFloor].filter(
    (c) => input.only === undefined || c.name === input.only,
  );
  // DynamoDB Local's JVM and V8 both need several thousand requests before their speed settles.
  for (let round = 1; round <= input.warmupRounds; round++) {
    for (const contestant of contestants) {
      const run = await runOnce(contestant, warmup, input);
      progress(
        `consumer warm-up ${round}/${input.warmupRounds} ${contestant.name}: ${run.wallMs.toFixed(0)} ms`,
      );
    }
  }
  const rounds = async (
    count: { min: number; max: number; maxSeconds: number },
    label: string,
    addedRoundTripMs: number,
  ) => {
    const runs: ConsumerRun[] = [];
    const speedups: number[] = [];
    const started = Date.now();
    for (let i = 0; i < count.max; i++) {
      if (i >= count.min) {
        if (narrowEnough(speedups, input.targetHalfWidth)) break;
        if (Date.now() - started > count.maxSeconds * 1000) break;
      }
      const round: Record<string, ConsumerRun> = {};
      for (const contestant of roundOrder(contestants, i)) {
        const run = await runOnce(contestant, workload, input, { addedRoundTripMs });
        runs.push(run);
        round[contestant.name] = run;
        progress(
          `consumer ${label} ${i + 1} ${contestant.name}: ${run.eventsPerSec.toFixed(0)} events/s, ` +
            `${run.requestsPerEvent.toFixed(3)} requests/event, ${run.redeliveries} redeliveries`,
        );
      }
      if (round.ours && round.powertools)
        speedups.push(round.ours.eventsPerSec / round.powertools.eventsPerSec);
    }
    return runs;
  };
  const runs = await rounds({ min: input.runs, max: input.maxRuns, maxSeconds: input.maxSeconds }, 'run', 0);
  const roundTripRuns = await rounds(
    { min: input.roundTripRuns, max: input.roundTripRuns, maxSeconds: 0 },
    `run +${input.addedRoundTripMs} ms/request`,
    input.addedRoundTripMs,
  );
  const probe = buildRebatchedWorkload();
  const probeContestants = {
    ours,
    powertools,
    powertoolsPerMessage,
    powertoolsAllWamids: powertoolsKeyedOn(POWERTOOLS_ALL_WAMIDS_KEY, 'powertoolsAllWamids'),
  } as const;
  const probeRuns: Partial<Record<keyof typeof probeContestants, ConsumerRun>> = {};
  for (const [label, contestant] of Object.entries(probeContestants) as [
    keyof typeof probeContestants,
    Contestant,
  ][]) {
    const run = await runOnce(contestant, { ...probe, batchSize: input.batchSize }, input, {
      strict: false,
    });
    probeRuns[label] = run;
    progress(
      `consumer re-batched probe ${label}: ${run.effects} effects for ${probe.distinctWamids.size} events, ${run.missingEffects} missing, ${run.repeatedEffects} repeated`,
    );
  }
  const probeOf = (label: keyof typeof probeContestants) => {
    const run = probeRuns[label] as ConsumerRun;
    return { effects: run.effects, missing: run.missingEffects, repeated: run.repeatedEffects };
  };
  return {
    rebatchedProbe: {
      records: probe.records.length,
      distinctEvents: probe.distinctWamids.size,
      ours: probeOf('ours'),
      powertools: probeOf('powertools'),
      powertoolsPerMessage: probeOf('powertoolsPerMessage'),
      powertoolsAllWamids: probeOf('powertoolsAllWamids'),
    },
    events: workload.records.length,
    distinctEvents: workload.distinctWamids.size,
    duplicates: { ...workload.duplicates },
    runs,
    roundTripRuns,
  };
});
