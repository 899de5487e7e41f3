/**
 * One measured drain: a fresh table, `concurrency` warm containers of one contestant, the records through the
 * in-memory event source, then every measure of the run (requests, capacity units, latency, CPU, log bytes,
 * invocations) and its effects checked against the events the records hold.
 */
import { randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import { median, percentile } from '../../../cli/tools/statistics.ts';
import { countStdoutBytes } from '../support/stdout-bytes.ts';
import { adminClient, type Container, type Contestant, deleteTable, EffectSink } from './contestants.ts';
import { drainQueue } from './in-memory-event-source.ts';

export interface DrainWorkload {
  readonly records: readonly SQSRecord[];
  /** The wamids a correct consumer effects exactly once. */
  readonly distinctWamids: ReadonlySet<string>;
  readonly batchSize: number;
}

export interface RunSettings {
  readonly dynamodbEndpoint: string;
  /** Warm containers running at once (Lambda's maxConcurrency). */
  readonly concurrency: number;
  readonly functionTimeoutMs: number;
}

export interface ConsumerRun {
  readonly contestant: string;
  readonly wallMs: number;
  readonly eventsPerSec: number;
  readonly requests: number;
  readonly requestsByOperation: Record<string, number>;
  /** Requests per input record. */
  readonly requestsPerEvent: number;
  /** Mean time a request of each operation took, as the client saw it. */
  readonly meanRequestMsByOperation: Record<string, number>;
  /** DynamoDB write and read units (`ReturnConsumedCapacity`, plus refused conditional writes). */
  readonly wru: number;
  readonly rru: number;
  /** The write units of refused conditional writes, counted by AWS's rule (DynamoDB reports none). */
  readonly failedConditionWru: number;
  readonly effects: number;
  /** Distinct events never effected, and events effected more than once (both 0 in strict runs). */
  readonly missingEffects: number;
  readonly repeatedEffects: number;
  /** CPU time of this Node process (the consumer and its SDK clients; DynamoDB Local runs elsewhere). */
  readonly nodeCpuMs: number;
  readonly invocations: number;
  readonly medianInvocationMs: number;
  readonly p90InvocationMs: number;
  /** Σ over invocations of the duration rounded up to the millisecond, as Lambda bills it. */
  readonly billedMs: number;
  /** Bytes the containers wrote to stdout: the log volume CloudWatch would ingest. */
  readonly logBytes: number;
  readonly failedInvocations: number;
  readonly redeliveries: number;
  /** The message ids of the records that came back, once per return. */
  readonly redeliveredIds: readonly string[];
}

export class EffectsMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EffectsMismatchError';
  }
}

const stdoutBytes = countStdoutBytes();

export async function runOnce(
  contestant: Contestant,
  workload: DrainWorkload,
  settings: RunSettings,
  options: {
    strict?: boolean;
    addedRoundTripMs?: number;
    /** Records drained first on the same table and containers, unmeasured (their effects included). */
    prime?: readonly SQSRecord[];
  } = {},
): Promise<ConsumerRun> {
  const admin = adminClient(settings.dynamodbEndpoint);
  const tableName = `bench-${contestant.name}-${randomUUID().slice(0, 8)}`;
  await contestant.createTable(admin, tableName);
  try {
    const sink = new EffectSink();
    const containers = Array.from({ length: settings.concurrency }, () =>
      contestant.createContainer({
        endpoint: settings.dynamodbEndpoint,
        tableName,
        sink,
        addedRoundTripMs: options.addedRoundTripMs ?? 0,
      }),
    );
    const drain = (records: readonly SQSRecord[]) =>
      drainQueue({
        records,
        containers: containers.map((container) => container.handler),
        batchSize: workload.batchSize,
        functionTimeoutMs: settings.functionTimeoutMs,
        maxReceives: 50,
      });
    if (options.prime !== undefined) {
      await drain(options.prime);
      for (const container of containers) {
        container.requests.reset();
        container.capacity.reset();
      }
    }
    // No forced GC between runs: a gc() from --expose-gc is a memory-reducing collection that throws away
    // compiled code, and doubled the CPU per event of the next run (a warm Lambda container keeps its JIT).
    const logBefore = stdoutBytes();
    const cpuBefore = process.cpuUsage();
    const drained = await drain(workload.records);
    const cpu = process.cpuUsage(cpuBefore);
    const logBytes = stdoutBytes() - logBefore;
    const missingEffects = [...workload.distinctWamids].filter((wamid) => !sink.has(wamid)).length;
    const repeatedEffects = sink.repeated().length;
    if (options.strict ?? true) checkEffects(contestant.name, sink, workload);
    const requestsByOperation = sumOver(containers, (container) => container.requests.counts());
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
    const capacity = containers.map((container) => container.capacity.total());
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
      wru: capacity.reduce((sum, c) => sum + c.wru, 0),
      rru: capacity.reduce((sum, c) => sum + c.rru, 0),
      failedConditionWru: capacity.reduce((sum, c) => sum + c.failedConditionWru, 0),
      effects: sink.total,
      missingEffects,
      repeatedEffects,
      nodeCpuMs: (cpu.user + cpu.system) / 1000,
      invocations: drained.invocations,
      medianInvocationMs: median(drained.invocationMs),
      p90InvocationMs: percentile(drained.invocationMs, 90),
      billedMs: drained.invocationMs.reduce((sum, ms) => sum + Math.ceil(ms), 0),
      logBytes,
      failedInvocations: drained.failedInvocations,
      redeliveries: drained.redeliveries,
      redeliveredIds: drained.redeliveredIds,
    };
  } finally {
    await deleteTable(admin, tableName);
    admin.destroy();
  }
}

function sumOver(
  containers: readonly Container[],
  counts: (container: Container) => Record<string, number>,
): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const container of containers) {
    for (const [operation, count] of Object.entries(counts(container))) {
      sums[operation] = (sums[operation] ?? 0) + count;
    }
  }
  return sums;
}

/** Exactly one effect per distinct event, or the comparison is meaningless: abort. */
function checkEffects(name: string, sink: EffectSink, workload: DrainWorkload): void {
  const missing = [...workload.distinctWamids].filter((wamid) => !sink.has(wamid)).length;
  const repeated = sink.repeated().length;
  if (missing > 0 || repeated > 0 || sink.total !== workload.distinctWamids.size) {
    throw new EffectsMismatchError(
      `${name}: ${sink.total} effects for ${workload.distinctWamids.size} distinct events (${missing} missing, ${repeated} repeated).`,
    );
  }
}
