/** The shape of lab/bench/results.json, from the parts' raw measurements. */

import { median, medianInterval, round } from '../../cli/tools/statistics.ts';
import type { BotMixResults } from './bot-mix-results.ts';
import type { BuiltBundle, BundleInit } from './bundles/lambda-bundles.ts';
import type { ConsumerOverheadResults } from './consumer/overhead-results.ts';
import type { ConsumerBenchOutput, ConsumerRun, RebatchedProbeResult } from './consumer/worker.ts';
import type { ConversationsResults } from './conversations/conversations-results.ts';
import type { EndToEndResult } from './end-to-end/end-to-end.ts';
import type {
  PairedSamples,
  ReceiverArchiveResult,
  ReceiverBenchOutput,
  ReceiverFanOutResult,
} from './receiver/worker.ts';
import type { StormIsolationResults } from './storm/storm-isolation.ts';

export interface ContestantSummary {
  /** Median over the measured runs. */
  readonly eventsPerSec: number;
  readonly requestsPerEvent: number;
  /** DynamoDB write and read units per record, from `ReturnConsumedCapacity` (lab/bench/support/consumed-capacity.ts). */
  readonly wruPerEvent: number;
  readonly rruPerEvent: number;
  readonly effects: number;
  readonly eventsPerSecRuns: number[];
  readonly eventsPerSecMin: number;
  readonly eventsPerSecMax: number;
  /** Median requests of each DynamoDB operation per run. */
  readonly requestsByOperation: Record<string, number>;
  readonly meanRequestMsByOperation: Record<string, number>;
  /** Node CPU time per event (the consumer and its SDK; DynamoDB Local excluded). */
  readonly nodeCpuMsPerEvent: number;
  /** Records handed back by batchItemFailures and delivered again, per run (median). */
  readonly redeliveries: number;
  readonly failedInvocations: number;
  readonly invocations: number;
  /** One batch, as Lambda would bill it (median over runs of each run's median and p90). */
  readonly medianInvocationMs: number;
  readonly p90InvocationMs: number;
}

export interface ConsumerResults {
  readonly events: number;
  readonly duplicateRatio: number;
  readonly ours: ContestantSummary;
  readonly powertools: ContestantSummary;
  /** docs/design.md §2's requests alone (see `contractFloor` in lab/bench/consumer/contestants.ts). */
  readonly contractFloor: ContestantSummary;
  /**
   * Median over the alternating pairs of ours/Powertools events per second. Each pair runs back to back, so
   * a change in the machine's load between pairs cancels out (other processes shared this machine).
   */
  readonly speedup: number;
  /** ours/Powertools events per second within each pair, in run order. */
  readonly pairedSpeedups: number[];
  /** Distribution-free interval of the median speedup (order statistics, at least 95% where n >= 6). */
  readonly speedupInterval: RatioInterval;
  /** Whether that interval lies within ±5% of the median: enough rounds for the speedup to be read. */
  readonly speedupWithin5Percent: boolean;
  /** ours.eventsPerSec / powertools.eventsPerSec: the ratio of the medians, for reference. */
  readonly speedupOfMedians: number;
  /**
   * Median over the rounds of contract floor / Powertools events per second: the most any consumer writing
   * what docs/design.md §2 prescribes could show against Powertools on this machine.
   */
  readonly speedupCeiling: number;
  readonly speedupCeilingInterval: RatioInterval;
  /** Median over the rounds of ours / contract floor events per second: how close ours comes to that bound. */
  readonly shareOfFloor: number;
  readonly shareOfFloorInterval: RatioInterval;
  /** Powertools' Node CPU per event / ours: steadier than wall time on a shared machine. */
  readonly cpuPerEventRatio: number;
  readonly distinctEvents: number;
  readonly duplicates: Record<string, number>;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly runsPerContestant: number;
  /** Untimed: multi-event bodies regrouped on retry, where a per-body key and per-event keys disagree. */
  readonly rebatchedProbe: RebatchedProbeResult;
  /** The same rounds with an AWS-like round trip added to every DynamoDB request. */
  readonly withAddedRoundTrip?: RoundTripResults;
}

export interface RoundTripSummary {
  readonly eventsPerSec: number;
  readonly medianInvocationMs: number;
  readonly invocations: number;
  readonly nodeCpuMsPerEvent: number;
}

export interface RoundTripResults {
  readonly addedRoundTripMs: number;
  readonly runsPerContestant: number;
  readonly ours: RoundTripSummary;
  readonly powertools: RoundTripSummary;
  readonly contractFloor: RoundTripSummary;
  /** Median over the rounds of ours / Powertools events per second. */
  readonly speedup: number;
  /** Median over the rounds of contract floor / Powertools events per second. */
  readonly speedupCeiling: number;
  /**
   * Median over the rounds of ours / contract floor events per second: with a round trip per request the
   * consumers wait on DynamoDB rather than share the machine's CPU with it, as in Lambda.
   */
  readonly shareOfFloor: number;
}

export interface RatioInterval {
  readonly low: number;
  readonly high: number;
  readonly confidence: number;
}

function interval(samples: readonly number[]): RatioInterval {
  const { low, high, confidence } = medianInterval(samples);
  return { low: round(low), high: round(high), confidence: round(confidence) };
}

type RunsOf = (name: ConsumerRun['contestant']) => ConsumerRun[];

function runsOf(runs: readonly ConsumerRun[]): RunsOf {
  return (name) => runs.filter((run) => run.contestant === name);
}

/** One contestant's events/s over another's, within each round (runs of a round are back to back). */
function perRound(
  of: RunsOf,
  numerator: ConsumerRun['contestant'],
  denominator: ConsumerRun['contestant'],
): number[] {
  return of(numerator).map((run, i) =>
    round(run.eventsPerSec / (of(denominator)[i] as ConsumerRun).eventsPerSec),
  );
}

export function summarizeConsumer(
  output: ConsumerBenchOutput,
  settings: { duplicateRatio: number; batchSize: number; concurrency: number; addedRoundTripMs?: number },
): ConsumerResults {
  const of = runsOf(output.runs);
  const ours = summarizeContestant(of('ours'), output.events);
  const powertools = summarizeContestant(of('powertools'), output.events);
  const contractFloor = summarizeContestant(of('contractFloor'), output.events);
  const pairedSpeedups = perRound(of, 'ours', 'powertools');
  const ceilings = perRound(of, 'contractFloor', 'powertools');
  const shares = perRound(of, 'ours', 'contractFloor');
  const speedup = round(median(pairedSpeedups));
  const speedupInterval = interval(pairedSpeedups);
  if (ours.effects !== powertools.effects || ours.effects !== contractFloor.effects) {
    throw new Error(
      `Effects differ: ours ${ours.effects}, Powertools ${powertools.effects}, contract floor ${contractFloor.effects}.`,
    );
  }
  return {
    events: output.events,
    duplicateRatio: settings.duplicateRatio,
    ours,
    powertools,
    contractFloor,
    speedup,
    pairedSpeedups,
    speedupInterval,
    speedupWithin5Percent:
      speedupInterval.confidence >= 0.95 &&
      speedupInterval.low >= speedup * 0.95 &&
      speedupInterval.high <= speedup * 1.05,
    speedupOfMedians: round(ours.eventsPerSec / powertools.eventsPerSec),
    speedupCeiling: round(median(ceilings)),
    speedupCeilingInterval: interval(ceilings),
    shareOfFloor: round(median(shares)),
    shareOfFloorInterval: interval(shares),
    cpuPerEventRatio: round(powertools.nodeCpuMsPerEvent / ours.nodeCpuMsPerEvent),
    distinctEvents: output.distinctEvents,
    duplicates: output.duplicates,
    batchSize: settings.batchSize,
    concurrency: settings.concurrency,
    runsPerContestant: of('ours').length,
    rebatchedProbe: output.rebatchedProbe,
    ...(output.roundTripRuns.length > 0
      ? { withAddedRoundTrip: summarizeRoundTrip(output, settings.addedRoundTripMs ?? 0) }
      : {}),
  };
}

function summarizeRoundTrip(output: ConsumerBenchOutput, addedRoundTripMs: number): RoundTripResults {
  const of = runsOf(output.roundTripRuns);
  const summary = (name: ConsumerRun['contestant']): RoundTripSummary => {
    const runs = of(name);
    return {
      eventsPerSec: round(median(runs.map((run) => run.eventsPerSec)), 1),
      medianInvocationMs: round(median(runs.map((run) => run.medianInvocationMs)), 1),
      invocations: median(runs.map((run) => run.invocations)),
      nodeCpuMsPerEvent: round(median(runs.map((run) => run.nodeCpuMs / output.events))),
    };
  };
  return {
    addedRoundTripMs,
    runsPerContestant: of('ours').length,
    ours: summary('ours'),
    powertools: summary('powertools'),
    contractFloor: summary('contractFloor'),
    speedup: round(median(perRound(of, 'ours', 'powertools'))),
    speedupCeiling: round(median(perRound(of, 'contractFloor', 'powertools'))),
    shareOfFloor: round(median(perRound(of, 'ours', 'contractFloor'))),
  };
}

function summarizeContestant(runs: readonly ConsumerRun[], events: number): ContestantSummary {
  const effects = new Set(runs.map((run) => run.effects));
  if (effects.size !== 1) throw new Error(`Effects differ between runs: ${[...effects].join(', ')}.`);
  const operations = new Set(runs.flatMap((run) => Object.keys(run.requestsByOperation)));
  const perOperation = (pick: (run: ConsumerRun, operation: string) => number, digits: number) =>
    Object.fromEntries(
      [...operations]
        .sort()
        .map((operation) => [operation, round(median(runs.map((run) => pick(run, operation))), digits)]),
    );
  const eventsPerSecRuns = runs.map((run) => round(run.eventsPerSec, 1));
  return {
    eventsPerSec: round(median(runs.map((run) => run.eventsPerSec)), 1),
    requestsPerEvent: round(median(runs.map((run) => run.requestsPerEvent))),
    wruPerEvent: round(median(runs.map((run) => run.wru / events))),
    rruPerEvent: round(median(runs.map((run) => run.rru / events))),
    effects: runs[0]?.effects ?? 0,
    eventsPerSecRuns,
    eventsPerSecMin: Math.min(...eventsPerSecRuns),
    eventsPerSecMax: Math.max(...eventsPerSecRuns),
    requestsByOperation: perOperation((run, operation) => run.requestsByOperation[operation] ?? 0, 1),
    meanRequestMsByOperation: perOperation(
      (run, operation) => run.meanRequestMsByOperation[operation] ?? 0,
      2,
    ),
    nodeCpuMsPerEvent: round(median(runs.map((run) => run.nodeCpuMs / events))),
    redeliveries: median(runs.map((run) => run.redeliveries)),
    failedInvocations: median(runs.map((run) => run.failedInvocations)),
    invocations: median(runs.map((run) => run.invocations)),
    medianInvocationMs: round(median(runs.map((run) => run.medianInvocationMs)), 1),
    p90InvocationMs: round(median(runs.map((run) => run.p90InvocationMs)), 1),
  };
}

export interface ReceiverResults {
  readonly bodies: {
    readonly updates: number;
    readonly msPerDelivery: number;
    readonly floorMs: number;
    readonly ratio: number;
    readonly bodyBytes: number;
    readonly queueMessages: number;
    readonly iterations: number;
    readonly msPerDeliveryMin: number;
    readonly floorMsMin: number;
  }[];
  /** One body sent to several subscriber queues; absent from runs made before subscribers existed. */
  readonly fanOut?: ReceiverFanOutSummary;
}

/**
 * The receiver with the archive on beside off (docs/design.md §9), per body size: `npm run bench -- --only
 * archive`. `offMs`, `onMs` and `ratio` are the processor time (SQS answered in memory at once); `modelled` and
 * `network` the acknowledgement's wall-clock latency, SQS answering after a modelled round trip and over a real
 * connection. Medians as measured, their ratio, and the spread.
 */
export interface ArchiveBenchResults {
  /** The modelled SQS round trip, with where the figure comes from; absent from runs made without it. */
  readonly modelledRoundTrip?: { readonly ms: number; readonly source: string };
  readonly bodies: readonly (Omit<ReceiverArchiveResult, 'offMs' | 'onMs' | 'samples'> & {
    readonly offMs: number;
    readonly onMs: number;
    readonly ratio: number;
    /** The per-iteration on/off ratios of the processor time: their median and its interval. */
    readonly cpuPairedRatio?: number;
    readonly cpuPairedRatioInterval?: RatioInterval;
    readonly modelled?: ArchiveLatencySummary;
    /**
     * The process's CPU time per delivery in the same modelled pairs (`process.cpuUsage`, user + system):
     * what the copy adds to the receiver's processor time, beside its acknowledgement. Absent from runs made
     * before it was measured.
     */
    readonly cpuPerDelivery?: ArchiveLatencySummary;
    readonly network?: ArchiveLatencySummary;
  })[];
}

/** One way of answering SQS, archive off beside on: medians with their intervals, and the paired ratios. */
export interface ArchiveLatencySummary {
  readonly iterations: number;
  readonly offMs: number;
  readonly onMs: number;
  readonly offInterval: RatioInterval;
  readonly onInterval: RatioInterval;
  /** onMs / offMs. */
  readonly ratio: number;
  /**
   * The median of the per-iteration on/off ratios (each pair side by side: a change of the machine's load
   * between pairs cancels out) and its interval; stored at 6 decimals, the figure the archive goal judges.
   */
  readonly pairedRatio: number;
  readonly pairedRatioInterval: RatioInterval;
}

function pairedRatios({ offMs, onMs }: PairedSamples): number[] {
  return onMs.map((on, index) => on / (offMs[index] as number));
}

function summarizeLatency(paired: PairedSamples): ArchiveLatencySummary {
  const offMs = median(paired.offMs);
  const onMs = median(paired.onMs);
  const ratios = pairedRatios(paired);
  const spread = (samples: readonly number[]) => {
    const { low, high, confidence } = medianInterval(samples);
    return { low: round(low, 4), high: round(high, 4), confidence: round(confidence) };
  };
  return {
    iterations: paired.offMs.length,
    offMs: round(offMs, 4),
    onMs: round(onMs, 4),
    offInterval: spread(paired.offMs),
    onInterval: spread(paired.onMs),
    ratio: round(onMs / offMs, 3),
    pairedRatio: round(median(ratios), 6),
    pairedRatioInterval: interval(ratios),
  };
}

export function summarizeArchive(
  results: readonly ReceiverArchiveResult[],
  modelledRoundTrip?: ArchiveBenchResults['modelledRoundTrip'],
): ArchiveBenchResults {
  return {
    modelledRoundTrip,
    bodies: results.map((body) => {
      const cpuRatios = pairedRatios(body.samples.cpu);
      return {
        updates: body.updates,
        bodyBytes: body.bodyBytes,
        iterations: body.iterations,
        archiveMessages: body.archiveMessages,
        offMs: round(body.offMs, 4),
        onMs: round(body.onMs, 4),
        ratio: round(body.onMs / body.offMs, 3),
        cpuPairedRatio: round(median(cpuRatios), 3),
        cpuPairedRatioInterval: interval(cpuRatios),
        ...(body.samples.modelled !== undefined && { modelled: summarizeLatency(body.samples.modelled) }),
        ...(body.samples.modelledCpu !== undefined && {
          cpuPerDelivery: summarizeLatency(body.samples.modelledCpu),
        }),
        ...(body.samples.network !== undefined && { network: summarizeLatency(body.samples.network) }),
      };
    }),
  };
}

/** The worker's medians as measured, with the ratios the reports show and the fastest iterations. */
export interface ReceiverFanOutSummary
  extends Pick<
    ReceiverFanOutResult,
    | 'updates'
    | 'subscribers'
    | 'bodyBytes'
    | 'iterations'
    | 'queueMessages'
    | 'msPerDelivery'
    | 'oneSubscriberMs'
    | 'floorMs'
  > {
  /** msPerDelivery / oneSubscriberMs: what the further subscribers add to a delivery's time. */
  readonly ratioToOneSubscriber: number;
  /** msPerDelivery / floorMs. */
  readonly ratio: number;
  readonly msPerDeliveryMin: number;
  readonly oneSubscriberMsMin: number;
}

export function summarizeReceiver(output: ReceiverBenchOutput): ReceiverResults {
  const bodies = output.bodies.map((body) => ({
    updates: body.updates,
    msPerDelivery: round(body.msPerDelivery, 4),
    floorMs: round(body.floorMs, 4),
    ratio: round(body.ratio, 2),
    bodyBytes: body.bodyBytes,
    queueMessages: body.queueMessages,
    iterations: body.iterations,
    msPerDeliveryMin: round(body.handlerMinMs, 4),
    floorMsMin: round(body.floorMinMs, 4),
  }));
  return output.fanOut ? { bodies, fanOut: summarizeFanOut(output.fanOut) } : { bodies };
}

function summarizeFanOut(fanOut: ReceiverFanOutResult): ReceiverFanOutSummary {
  return {
    updates: fanOut.updates,
    subscribers: fanOut.subscribers,
    bodyBytes: fanOut.bodyBytes,
    iterations: fanOut.iterations,
    queueMessages: fanOut.queueMessages,
    msPerDelivery: round(fanOut.msPerDelivery, 4),
    oneSubscriberMs: round(fanOut.oneSubscriberMs, 4),
    floorMs: round(fanOut.floorMs, 4),
    ratioToOneSubscriber: round(fanOut.msPerDelivery / fanOut.oneSubscriberMs, 2),
    ratio: round(fanOut.msPerDelivery / fanOut.floorMs, 2),
    msPerDeliveryMin: round(fanOut.handlerMinMs, 4),
    oneSubscriberMsMin: round(fanOut.oneSubscriberMinMs, 4),
  };
}

export interface BundleResult {
  readonly bytes: number;
  readonly initMs: number;
  readonly importMs: number;
  readonly sourceMapBytes: number;
}

export interface BundlesResults {
  readonly receiver: BundleResult;
  readonly consumer: BundleResult;
  readonly baselineReadyMs: number;
  readonly spawns: number;
}

export function summarizeBundles(
  built: readonly BuiltBundle[],
  init: { baselineReadyMs: number; bundles: readonly BundleInit[] },
): BundlesResults {
  const result = (name: 'receiver' | 'consumer'): BundleResult => {
    const bundle = built.find((candidate) => candidate.name === name);
    const timing = init.bundles.find((candidate) => candidate.name === name);
    if (bundle === undefined || timing === undefined) throw new Error(`No ${name} bundle was measured.`);
    return {
      bytes: bundle.bytes,
      initMs: round(timing.initMs, 1),
      importMs: round(timing.importMs, 1),
      sourceMapBytes: bundle.sourceMapBytes,
    };
  };
  return {
    receiver: result('receiver'),
    consumer: result('consumer'),
    baselineReadyMs: round(init.baselineReadyMs, 1),
    spawns: init.bundles[0]?.spawns ?? 0,
  };
}

export function summarizeEndToEnd(result: EndToEndResult): EndToEndResult {
  return {
    ...result,
    deliveriesPerSec: round(result.deliveriesPerSec, 1),
    effectsPerSec: round(result.effectsPerSec, 1),
  };
}

/** One receiver and one consumer bundle's bytes. */
export interface LambdaBundleBytes {
  readonly receiver: number;
  readonly consumer: number;
}

/** lab/bench/results.json's `installedPackage`, written by `npm run test:package` (lab/bench/package/). */
export interface InstalledPackageResults {
  /** The tarball's bytes (gzip): npm pack's `size`. */
  readonly tarballBytes: number;
  /** npm pack's `unpackedSize`. */
  readonly unpackedBytes: number;
  /** Files in the tarball. */
  readonly files: number;
  /** The README app's `index.mjs` per function: the receiver and the `support` subscriber's consumer. */
  readonly userBundleBytes: LambdaBundleBytes;
  /** This repository's receiver and default consumer, bundled from its sources with the same options. */
  readonly repositoryBundleBytes: LambdaBundleBytes;
  /** ISO time of the measurement. */
  readonly measuredAt: string;
}

/** Results as `npm run bench` gathers them, part by part (a `--only` run fills some). */
export interface BenchResults {
  consumer?: ConsumerResults;
  consumerOverhead?: ConsumerOverheadResults;
  botMix?: BotMixResults;
  receiver?: ReceiverResults;
  archive?: ArchiveBenchResults;
  bundles?: BundlesResults;
  endToEnd?: EndToEndResult;
  conversations?: ConversationsResults;
  stormIsolation?: StormIsolationResults;
  /** `npm run test:package` measures it; the bench only carries it over. */
  installedPackage?: InstalledPackageResults;
  goals: Record<string, boolean | null>;
  machine: Record<string, unknown>;
  run: Record<string, unknown>;
}

/** lab/bench/results.json as a complete `npm run bench` writes it. */
export interface ResultsFile {
  readonly consumer: ConsumerResults;
  /** Absent until `npm run bench -- --only overhead --merge` (or a full run) measured it. */
  readonly consumerOverhead?: ConsumerOverheadResults;
  readonly botMix: BotMixResults;
  readonly receiver: ReceiverResults;
  /** Absent until `npm run bench -- --only archive --merge` (or a full run) measured it. */
  readonly archive?: ArchiveBenchResults;
  readonly bundles: BundlesResults;
  readonly endToEnd: EndToEndResult;
  /** Absent until `npm run bench -- --only conversations --merge` (or a full run) measured it. */
  readonly conversations?: ConversationsResults;
  /** Absent until `npm run bench -- --only storm --merge` (or a full run) measured it. */
  readonly stormIsolation?: StormIsolationResults;
  /** Written by `npm run test:package` (lab/bench/package/installed-package-results.ts), kept by `npm run bench`. */
  readonly installedPackage?: InstalledPackageResults;
  readonly goals: Record<string, boolean | null>;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly platform: string;
    readonly loadAverageAtStart: number[];
    readonly loadAverageAtEnd: number[];
  };
  readonly run: {
    readonly finishedAt: string;
    readonly durationSeconds: number;
    readonly partSeconds: Record<string, number>;
  };
}
