/**
 * npm run bench: the figures of docs/benchmarks.md, measured side by side in one run.
 *
 *   npm run bench                         all five parts, writes lab/bench/results.json and regenerates the figures
 *                                         of docs/benchmarks.md and docs/cost.md from it
 *   npm run bench -- --only receiver      some parts (comma-separated), writes lab/bench/out/results.json
 *   npm run bench -- --quick              fewer runs and iterations (a smoke test), writes lab/bench/out/
 *   npm run bench -- --out FILE           write the results elsewhere
 *   npm run bench -- --cpu-prof           also write CPU profiles of the consumer and receiver workers
 *                                         to lab/bench/out/profiles/ (open them in Chrome DevTools)
 *   npm run bench -- --contestant ours    the consumer part with one contestant only (ours, powertools or
 *                                         contractFloor), to profile it alone
 *   npm run bench -- --only conversations --merge
 *                                         some parts, merged into lab/bench/results.json (the other parts' figures
 *                                         kept as committed, the goals judged again), then the figures regenerated
 *
 * Parts: consumer (ours vs Powertools Idempotency on DynamoDB Local), botmix (a bot's traffic in the units AWS
 * bills: capacity units, requests, Lambda milliseconds and dollars per million events), receiver (handler vs
 * HMAC + JSON.parse, and one body to three subscriber queues vs one), bundles (esbuild as the CDK construct,
 * size and load time), e2e (the local stack under autocannon), conversations (the local stack's reply latency
 * against its pass-through floor, a live message during a status storm, a customer's messages in order), overhead
 * (the consumer Lambda's handler from its invocation to the handler's start, beside a bare conditional PutItem),
 * storm (the capacity simulation's campaign, short, with and without the campaign: the message lane's p99 wait).
 * Progress goes to stderr (under a bar of the parts done when it is a terminal), the table to stdout. Aborts if
 * the two consumers' effects differ.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startDynamoDbLocal } from '../../cli/local/emulators/dynamodb-local.ts';
import { startSqsEmulator } from '../../cli/local/emulators/sqs.ts';
import { type ProgressBar, progressBar } from '../../cli/tools/progress-bar.ts';
import { round } from '../../cli/tools/statistics.ts';
import { powertoolsEnvironment } from '../../contract/environment.ts';
import { resolveSettings } from '../../contract/settings.ts';
import { DEFAULT_LOG_LEVEL } from '../../lib/defaults.ts';
import { LATENCIES } from '../capacity-simulation/latency.ts';
import { DEFAULT_SEED } from '../capacity-simulation/run-scale.ts';
import { writeRegions } from '../docs/generated-regions.ts';
import { type BotMixResults, type LogBytesByLevel, summarizeBotMix } from './bot-mix-results.ts';
import { buildLambdaBundles, timeBundleInit } from './bundles/lambda-bundles.ts';
import type { BotMixInput, BotMixOutput } from './consumer/bot-mix-worker.ts';
import { CONTESTANTS, type ContestantName } from './consumer/contestant-names.ts';
import {
  type ConsumerOverheadOutput,
  type ConsumerOverheadResults,
  summarizeConsumerOverhead,
} from './consumer/overhead-results.ts';
import type { ConsumerOverheadInput } from './consumer/overhead-worker.ts';
import type { ConsumerBenchInput, ConsumerBenchOutput } from './consumer/worker.ts';
import { runConversations } from './conversations/conversations.ts';
import { conversationsInput } from './conversations/conversations-input.ts';
import type { ConversationsResults } from './conversations/conversations-results.ts';
import type { EndToEndResult } from './end-to-end/end-to-end.ts';
import { runEndToEnd } from './end-to-end/end-to-end.ts';
import { goals } from './goals.ts';
import type { ReceiverLogVolumeInput, ReceiverLogVolumeOutput } from './receiver/log-volume-worker.ts';
import type { ReceiverBenchInput, ReceiverBenchOutput } from './receiver/worker.ts';
import { formatReport } from './report.ts';
import {
  type ArchiveBenchResults,
  type BenchResults,
  type BundlesResults,
  type ConsumerResults,
  type ReceiverResults,
  summarizeArchive,
  summarizeBundles,
  summarizeConsumer,
  summarizeEndToEnd,
  summarizeReceiver,
} from './results.ts';
import { generatedRegions, readResults } from './results-markdown.ts';
import { runStormIsolation, type StormIsolationResults } from './storm/storm-isolation.ts';
import { runWorker } from './support/worker-process.ts';

const PARTS = [
  'consumer',
  'overhead',
  'botmix',
  'receiver',
  'archive',
  'bundles',
  'e2e',
  'conversations',
  'storm',
] as const;
type Part = (typeof PARTS)[number];

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const OUT_DIR = join(BENCH_DIR, 'out');

/** The parts' progress bar (on a terminal), above which progress lines are written. */
let bar: ProgressBar | undefined;

function log(line: string): void {
  if (bar === undefined) process.stderr.write(`${line}\n`);
  else bar.log(line);
}

/** The Powertools variables the construct gives both functions, for the in-process parts. */
const LAMBDA_POWERTOOLS_ENV = powertoolsEnvironment({ logLevel: DEFAULT_LOG_LEVEL });

let workerFlags: string[] = [];

/** One DynamoDB Local for the consumer and bot-mix parts, started on first use (its JVM warms up once). */
let dynamoDbLocal: ReturnType<typeof startDynamoDbLocal> | undefined;
function sharedDynamoDbLocal(): ReturnType<typeof startDynamoDbLocal> {
  if (dynamoDbLocal === undefined) {
    log('starting DynamoDB Local');
    dynamoDbLocal = startDynamoDbLocal();
  }
  return dynamoDbLocal;
}

/** Undefined when one contestant ran alone: its progress lines are the whole result. */
async function benchConsumer(quick: boolean, only?: ContestantName): Promise<ConsumerResults | undefined> {
  const settings = resolveSettings();
  const input: ConsumerBenchInput = {
    dynamodbEndpoint: '',
    records: 2000,
    duplicateRatio: 0.3,
    batchSize: settings.batchSize,
    concurrency: settings.maxConcurrency,
    runs: quick ? 1 : 8,
    maxRuns: quick ? 1 : 16,
    maxSeconds: 240,
    targetHalfWidth: 0.05,
    warmupRecords: quick ? 200 : 2000,
    warmupRounds: quick ? 1 : 2,
    functionTimeoutMs: settings.consumerTimeoutSeconds * 1000,
    roundTripRuns: quick ? 1 : 3,
    addedRoundTripMs: 5,
    only,
  };
  const dynamodb = await sharedDynamoDbLocal();
  const output = await runWorker<ConsumerBenchInput, ConsumerBenchOutput>(
    join(BENCH_DIR, 'consumer', 'worker.ts'),
    { ...input, dynamodbEndpoint: dynamodb.endpoint },
    { env: LAMBDA_POWERTOOLS_ENV, onProgress: log, nodeFlags: workerFlags },
  );
  return only ? undefined : summarizeConsumer(output, input);
}

/**
 * The consumer Lambda's handler from its invocation to the handler's start, beside a bare conditional PutItem on
 * the same table, interleaved in one process (lab/bench/consumer/overhead-worker.ts).
 */
async function benchConsumerOverhead(quick: boolean): Promise<ConsumerOverheadResults> {
  const dynamodb = await sharedDynamoDbLocal();
  const output = await runWorker<ConsumerOverheadInput, ConsumerOverheadOutput>(
    join(BENCH_DIR, 'consumer', 'overhead-worker.ts'),
    { dynamodbEndpoint: dynamodb.endpoint, invocations: quick ? 50 : 400, warmupPairs: quick ? 50 : 300 },
    { env: LAMBDA_POWERTOOLS_ENV, onProgress: log, nodeFlags: workerFlags },
  );
  return summarizeConsumerOverhead(output);
}

async function benchBotMix(quick: boolean): Promise<BotMixResults> {
  const settings = resolveSettings();
  const dynamodb = await sharedDynamoDbLocal();
  const input: BotMixInput = {
    dynamodbEndpoint: dynamodb.endpoint,
    turns: quick ? 100 : 300,
    retryRatio: 0.1,
    batchSize: settings.batchSize,
    concurrency: settings.maxConcurrency,
    functionTimeoutMs: settings.consumerTimeoutSeconds * 1000,
    rounds: quick ? 1 : 3,
    warmupTurns: quick ? 50 : 150,
    classEvents: quick ? 50 : 100,
  };
  const output = await runWorker<BotMixInput, BotMixOutput>(
    join(BENCH_DIR, 'consumer', 'bot-mix-worker.ts'),
    input,
    {
      env: LAMBDA_POWERTOOLS_ENV,
      onProgress: log,
      nodeFlags: workerFlags,
    },
  );
  return summarizeBotMix(output, await receiverLogBytesPerDelivery(input));
}

/** The bot mix's deliveries through the receiver handler at INFO, then at DEBUG, each in a fresh worker. */
async function receiverLogBytesPerDelivery(input: BotMixInput): Promise<LogBytesByLevel> {
  const perDelivery = async (level: 'INFO' | 'DEBUG') => {
    const output = await runWorker<ReceiverLogVolumeInput, ReceiverLogVolumeOutput>(
      join(BENCH_DIR, 'receiver', 'log-volume-worker.ts'),
      { turns: input.turns, retryRatio: input.retryRatio, batchSize: input.batchSize },
      { env: powertoolsEnvironment({ logLevel: level }), onProgress: log, nodeFlags: workerFlags },
    );
    return round(output.logBytes / output.deliveries, 0);
  };
  return { info: await perDelivery('INFO'), debug: await perDelivery('DEBUG') };
}

async function benchReceiver(quick: boolean): Promise<ReceiverResults> {
  const scale = quick ? 0.2 : 1;
  const input: ReceiverBenchInput = {
    bodies: [
      { updates: 1, iterations: Math.round(5000 * scale) },
      { updates: 100, iterations: Math.round(1000 * scale) },
      { updates: 1000, iterations: Math.round(200 * scale) },
    ],
    // The 100-update body to three subscriber queues, beside the same body to one (docs/design.md §7).
    fanOut: { updates: 100, subscribers: 3, iterations: Math.round(1000 * scale) },
    warmupShare: 0.2,
  };
  const output = await runWorker<ReceiverBenchInput, ReceiverBenchOutput>(
    join(BENCH_DIR, 'receiver', 'worker.ts'),
    input,
    { env: LAMBDA_POWERTOOLS_ENV, onProgress: log, nodeFlags: workerFlags },
  );
  return summarizeReceiver(output);
}

/**
 * The receiver with the archive on and off, side by side, for the bodies of the receiver part: the processor
 * time (SQS answered in memory at once), then the acknowledgement's wall-clock latency and the CPU time per
 * delivery with SQS answering after the capacity simulation's modelled send round trip (the archive goal's two
 * sides), and over a real connection to fauxqs, started here: in another process than the worker's receiver, as
 * SQS is.
 */
async function benchArchive(quick: boolean): Promise<ArchiveBenchResults> {
  const sqs = await startSqsEmulator();
  try {
    const output = await runWorker<ReceiverBenchInput, ReceiverBenchOutput>(
      join(BENCH_DIR, 'receiver', 'worker.ts'),
      {
        bodies: [],
        archive: {
          updates: [1, 100, 1000],
          iterations: quick ? 200 : 1000,
          latency: {
            iterations: quick ? 60 : 300,
            modelledRoundTripMs: LATENCIES.sqsSend.p50Ms,
            sqsEndpoint: sqs.endpoint,
          },
        },
        warmupShare: 0.2,
      },
      { env: LAMBDA_POWERTOOLS_ENV, onProgress: log, nodeFlags: workerFlags },
    );
    return summarizeArchive(output.archive ?? [], {
      ms: LATENCIES.sqsSend.p50Ms,
      source: `lab/capacity-simulation/latency.ts, sqsSend p50 (${LATENCIES.sqsSend.source})`,
    });
  } finally {
    await sqs.stop();
  }
}

async function benchBundles(quick: boolean): Promise<BundlesResults> {
  const outdir = join(OUT_DIR, 'bundles');
  log('bundles: building with the construct’s esbuild options');
  const built = await buildLambdaBundles(outdir);
  for (const bundle of built) log(`bundles: ${bundle.name} ${(bundle.bytes / 1024).toFixed(0)} KiB`);
  const init = await timeBundleInit(built, outdir, quick ? 3 : 10);
  return summarizeBundles(built, init);
}

async function benchEndToEnd(quick: boolean): Promise<EndToEndResult> {
  const result = await runEndToEnd(
    {
      warmupSeconds: quick ? 2 : 5,
      durationSeconds: quick ? 5 : 15,
      connections: 10,
      duplicateRatio: 0.3,
      drainTimeoutMs: 180_000,
    },
    log,
  );
  if (result.repeatedEffects > 0 || result.missingEffects > 0) {
    throw new Error(
      `End to end: ${result.repeatedEffects} keys effected more than once, ${result.missingEffects} acknowledged keys never effected.`,
    );
  }
  return summarizeEndToEnd(result);
}

async function benchConversations(quick: boolean): Promise<ConversationsResults> {
  const result = await runConversations(conversationsInput(quick), log);
  if (result.order.missing > 0 || result.storm.liveMissing > 0) {
    throw new Error(
      `Conversations: ${result.order.missing} ordered messages and ${result.storm.liveMissing} live messages reached no handler.`,
    );
  }
  return result;
}

/**
 * The capacity simulation's campaign scenario, its short version (under a minute of this machine), with and without
 * the campaign, same seed (lab/bench/storm/storm-isolation.ts).
 */
function benchStormIsolation(): Promise<StormIsolationResults> {
  return runStormIsolation({ seed: DEFAULT_SEED, short: true }, log);
}

function machine(): Record<string, unknown> {
  const cores = cpus();
  return {
    cpus: cores.length,
    cpuModel: cores[0]?.model ?? 'unknown',
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    loadAverageAtStart: loadavg().map((value) => round(value, 2)),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
      out: { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      contestant: { type: 'string' },
      merge: { type: 'boolean', default: false },
    },
  });
  const parts = (values.only?.split(',').map((part) => part.trim()) ?? [...PARTS]) as Part[];
  const unknown = parts.filter((part) => !PARTS.includes(part));
  if (unknown.length > 0)
    throw new Error(`Unknown part(s) ${unknown.join(', ')}; choose from ${PARTS.join(', ')}.`);
  if (values['cpu-prof']) workerFlags = ['--cpu-prof', `--cpu-prof-dir=${join(OUT_DIR, 'profiles')}`];
  const contestant = values.contestant as ContestantName | undefined;
  if (contestant !== undefined && !CONTESTANTS.includes(contestant))
    throw new Error(`Unknown contestant ${contestant}; choose from ${CONTESTANTS.join(', ')}.`);
  const complete = parts.length === PARTS.length && !values.quick && !values['cpu-prof'] && !contestant;
  if (values.merge && (values.only === undefined || values.quick || values.out !== undefined))
    throw new Error(
      '--merge takes --only PARTS, without --quick or --out: it merges into lab/bench/results.json.',
    );
  const committedFile = join(BENCH_DIR, 'results.json');
  const outFile = values.out ?? (complete || values.merge ? committedFile : join(OUT_DIR, 'results.json'));

  const started = Date.now();
  const results: BenchResults = { goals: {}, machine: machine(), run: {} };
  const failures: string[] = [];
  const timings: Record<string, number> = {};
  bar = progressBar({ label: 'bench parts', total: parts.length, formatValue: String });
  let partsDone = 0;
  const attempt = async (part: Part, work: () => Promise<void>) => {
    if (!parts.includes(part)) return;
    const partStarted = Date.now();
    bar?.update(partsDone, part);
    try {
      await work();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // Unequal effects make the comparison meaningless: abort the whole bench, write nothing.
      if (/EffectsMismatchError|Effects differ/.test(message)) throw error;
      failures.push(`${part}: ${error instanceof Error ? error.message : String(error)}`);
      log(`${part} FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
    timings[part] = round((Date.now() - partStarted) / 1000, 1);
    bar?.update(++partsDone);
  };
  await attempt('consumer', async () => {
    const consumer = await benchConsumer(values.quick, contestant);
    if (consumer) results.consumer = consumer;
  });
  await attempt('overhead', async () => {
    results.consumerOverhead = await benchConsumerOverhead(values.quick);
  });
  await attempt('botmix', async () => {
    results.botMix = await benchBotMix(values.quick);
  });
  await dynamoDbLocal?.then(
    (dynamodb) => dynamodb.stop(),
    () => undefined,
  );
  await attempt('receiver', async () => {
    results.receiver = await benchReceiver(values.quick);
  });
  await attempt('archive', async () => {
    results.archive = await benchArchive(values.quick);
  });
  await attempt('bundles', async () => {
    results.bundles = await benchBundles(values.quick);
  });
  await attempt('e2e', async () => {
    results.endToEnd = await benchEndToEnd(values.quick);
  });
  await attempt('conversations', async () => {
    results.conversations = await benchConversations(values.quick);
  });
  await attempt('storm', async () => {
    results.stormIsolation = await benchStormIsolation();
  });
  bar.stop();
  if (values.merge) {
    if (failures.length > 0) throw new Error(`Nothing merged: ${failures.join('; ')}`);
    const committed = JSON.parse(await readFile(committedFile, 'utf8')) as BenchResults;
    const merged: BenchResults = {
      ...committed,
      ...Object.fromEntries(
        Object.entries(results).filter(([key]) => !['goals', 'machine', 'run'].includes(key)),
      ),
    };
    merged.goals = goals(merged);
    await writeFile(committedFile, `${JSON.stringify(orderedResults(merged), null, 2)}\n`);
    process.stdout.write(formatReport(merged));
    const written = writeRegions(generatedRegions(await readResults(committedFile)));
    log(
      `\nMerged ${parts.join(', ')} into ${committedFile}; figures regenerated in ${written.join(', ') || 'no page'}.`,
    );
    return;
  }
  results.goals = goals(results);
  results.machine.loadAverageAtEnd = loadavg().map((value) => round(value, 2));
  results.run = {
    finishedAt: new Date().toISOString(),
    durationSeconds: round((Date.now() - started) / 1000, 1),
    partSeconds: timings,
    parts,
    quick: values.quick,
    ...(failures.length > 0 ? { failures } : {}),
  };

  if (outFile === committedFile) {
    const committed = JSON.parse(await readFile(committedFile, 'utf8')) as BenchResults;
    if (committed.installedPackage) results.installedPackage = committed.installedPackage;
  }
  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, `${JSON.stringify(orderedResults(results), null, 2)}\n`);
  process.stdout.write(formatReport(results));
  log(`\nResults written to ${outFile} (${results.run.durationSeconds} s).`);
  if (complete && failures.length === 0 && values.out === undefined) {
    const written = writeRegions(generatedRegions(await readResults(outFile)));
    log(`Figures regenerated in ${written.join(', ')}.`);
  }
  if (failures.length > 0) {
    log(`Failed parts:\n  ${failures.join('\n  ')}`);
    process.exitCode = 1;
  }
}

/** results.json's keys in a fixed order: the parts' measurements, then the goals, the machine and the run. */
function orderedResults(results: BenchResults): BenchResults {
  return {
    // JSON.stringify leaves out the parts this run did not measure.
    consumer: results.consumer,
    consumerOverhead: results.consumerOverhead,
    botMix: results.botMix,
    receiver: results.receiver,
    archive: results.archive,
    bundles: results.bundles,
    endToEnd: results.endToEnd,
    conversations: results.conversations,
    stormIsolation: results.stormIsolation,
    installedPackage: results.installedPackage,
    goals: results.goals,
    machine: results.machine,
    run: results.run,
  };
}

main().catch((error: unknown) => {
  bar?.stop();
  log(`npm run bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
