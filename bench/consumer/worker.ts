/**
 * Child process of `npm run bench`: ours vs Powertools (and the contract floor) on the same records and
 * DynamoDB Local, warm-up first, then rounds of one run each in rotating order (each contestant goes first in
 * turn), a fresh table per run.
 */
import { randomUUID } from 'node:crypto';
import { median, percentile } from '../support/stats.ts';
import { serveWorker } from '../support/worker-process.ts';
import type { ContestantName } from './contestant-names.ts';
import {
  adminClient,
  type Contestant,
  contractFloor,
  deleteTable,
  EffectSink,
  ours,
  POWERTOOLS_ALL_WAMIDS_KEY,
  powertools,
  powertoolsKeyedOn,
} from './contestants.ts';
import { drainQueue } from './in-memory-event-source.ts';
import { buildRebatchedWorkload } from './rebatched-probe.ts';
import { buildConsumerWorkload, type ConsumerWorkload, type DuplicateKind } from './workload.ts';

export interface ConsumerBenchInput {
  readonly dynamodbEndpoint: string;
  readonly records: number;
  readonly duplicateRatio: number;
  readonly batchSize: number;
  /** Warm containers running at once (Lambda's maxConcurrency). */
  readonly concurrency: number;
  /** Measured runs per contestant. */
  readonly runs: number;
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

export interface ConsumerRun {
  readonly contestant: ContestantName;
  readonly wallMs: number;
  readonly eventsPerSec: number;
  readonly requests: number;
  readonly requestsByOperation: Record<string, number>;
  readonly requestsPerEvent: number;
  /** Mean time a request of each operation took, as the client saw it. */
  readonly meanRequestMsByOperation: Record<string, number>;
  readonly effects: number;
  /** Distinct events never effected, and events effected more than once (both 0 in timed runs). */
  readonly missingEffects: number;
  readonly repeatedEffects: number;
  /** CPU time of this Node process (the consumer and its SDK clients; DynamoDB Local runs elsewhere). */
  readonly nodeCpuMs: number;
  readonly invocations: number;
  readonly medianInvocationMs: number;
  readonly p90InvocationMs: number;
  readonly failedInvocations: number;
  readonly redeliveries: number;
}

export interface RebatchedProbeResult {
  readonly records: number;
  readonly distinctEvents: number;
  readonly ours: { readonly effects: number; readonly missing: number; readonly repeated: number };
  readonly powertools: { readonly effects: number; readonly missing: number; readonly repeated: number };
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

export class EffectsMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EffectsMismatchError';
  }
}

interface DrainWorkload {
  readonly records: ConsumerWorkload['records'];
  readonly distinctWamids: ReadonlySet<string>;
  readonly batchSize: number;
}

async function runOnce(
  contestant: Contestant,
  workload: DrainWorkload,
  input: ConsumerBenchInput,
  options: { strict?: boolean; addedRoundTripMs?: number } = {},
): Promise<ConsumerRun> {
  const admin = adminClient(input.dynamodbEndpoint);
  const tableName = `bench-${contestant.name}-${randomUUID().slice(0, 8)}`;
  await contestant.createTable(admin, tableName);
  try {
    const sink = new EffectSink();
    const containers = Array.from({ length: input.concurrency }, () =>
      contestant.createContainer({
        endpoint: input.dynamodbEndpoint,
        tableName,
        sink,
        addedRoundTripMs: options.addedRoundTripMs ?? 0,
      }),
    );
    // No forced GC between runs: a gc() from --expose-gc is a memory-reducing collection that throws away
    // compiled code, and doubled the CPU per event of the next run (a warm Lambda container keeps its JIT).
    const cpuBefore = process.cpuUsage();
    const drained = await drainQueue({
      records: workload.records,
      containers: containers.map((container) => container.handler),
      batchSize: workload.batchSize,
      functionTimeoutMs: input.functionTimeoutMs,
      maxReceives: 50,
    });
    const cpu = process.cpuUsage(cpuBefore);
    const missingEffects = [...workload.distinctWamids].filter((wamid) => !sink.has(wamid)).length;
    const repeatedEffects = sink.repeated().length;
    if (options.strict ?? true) checkEffects(contestant.name, sink, workload);
    const requestsByOperation: Record<string, number> = {};
    for (const container of containers) {
      for (const [operation, count] of Object.entries(container.requests.counts())) {
        requestsByOperation[operation] = (requestsByOperation[operation] ?? 0) + count;
      }
    }
    const latencyByOperation: Record<string, number> = {};
    for (const operation of Object.keys(requestsByOperation)) {
      let totalMs = 0;
      let count = 0;
      for (const container of containers) {
        const entry = container.latency.totals()[operation];
        totalMs += entry?.totalMs ?? 0;
        count += entry?.count ?? 0;
      }
      latencyByOperation[operation] = count === 0 ? 0 : totalMs / count;
    }
    const requests = Object.values(requestsByOperation).reduce((sum, count) => sum + count, 0);
    const events = workload.records.length;
    return {
      contestant: contestant.name,
      wallMs: drained.wallMs,
      eventsPerSec: events / (drained.wallMs / 1000),
      requests,
      requestsByOperation,
      requestsPerEvent: requests / events,
      meanRequestMsByOperation: latencyByOperation,
      effects: sink.total,
      missingEffects,
      repeatedEffects,
      nodeCpuMs: (cpu.user + cpu.system) / 1000,
      invocations: drained.invocations,
      medianInvocationMs: median(drained.invocationMs),
      p90InvocationMs: percentile(drained.invocationMs, 90),
      failedInvocations: drained.failedInvocations,
      redeliveries: drained.redeliveries,
    };
  } finally {
    await deleteTable(admin, tableName);
    admin.destroy();
  }
}

/** Exactly one effect per distinct event, or the comparison is meaningless: abort. */
function checkEffects(name: ContestantName, sink: EffectSink, workload: DrainWorkload): void {
  const missing = [...workload.distinctWamids].filter((wamid) => !sink.has(wamid)).length;
  const repeated = sink.repeated().length;
  if (missing > 0 || repeated > 0 || sink.total !== workload.distinctWamids.size) {
    throw new EffectsMismatchError(
      `${name}: ${sink.total} effects for ${workload.distinctWamids.size} distinct events (${missing} missing, ${repeated} repeated).`,
    );
  }
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
  const contestants = [ours, powertools, contractFloor].filter(
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
  const rounds = async (count: number, label: string, addedRoundTripMs: number) => {
    const runs: ConsumerRun[] = [];
    for (let i = 0; i < count; i++) {
      const shift = i % contestants.length;
      for (const contestant of [...contestants.slice(shift), ...contestants.slice(0, shift)]) {
        const run = await runOnce(contestant, workload, input, { addedRoundTripMs });
        runs.push(run);
        progress(
          `consumer ${label} ${i + 1}/${count} ${contestant.name}: ${run.eventsPerSec.toFixed(0)} events/s, ` +
            `${run.requestsPerEvent.toFixed(3)} requests/event, ${run.redeliveries} redeliveries`,
        );
      }
    }
    return runs;
  };
  const runs = await rounds(input.runs, 'run', 0);
  const roundTripRuns = await rounds(
    input.roundTripRuns,
    `run +${input.addedRoundTripMs} ms/request`,
    input.addedRoundTripMs,
  );
  const probe = buildRebatchedWorkload();
  const probeContestants = {
    ours,
    powertools,
    powertoolsAllWamids: powertoolsKeyedOn(POWERTOOLS_ALL_WAMIDS_KEY),
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
      powertoolsAllWamids: probeOf('powertoolsAllWamids'),
    },
    events: workload.records.length,
    distinctEvents: workload.distinctWamids.size,
    duplicates: { ...workload.duplicates },
    runs,
    roundTripRuns,
  };
});
