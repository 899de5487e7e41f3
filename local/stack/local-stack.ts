/**
 * The whole pipeline on one machine (docs/design.md §6): DynamoDB Local and the SQS emulator, the claim table,
 * queue and DLQ created from the shared definitions and settings, the real receiver behind an API Gateway
 * v2 adapter, and the real consumer driven by a Lambda-like SQS event source.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { interceptLocalhostDns } from 'fauxqs';
import { consumerEnvironment, receiverEnvironment } from '../../contract/environment.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../contract/subscribers.ts';
import { StatusLedger } from '../../functions/ledger/status-ledger.ts';
import { createClaimTable } from '../emulators/claim-table.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../emulators/dynamodb-local.ts';
import { createPipelineQueues, type SqsEmulator, startSqsEmulator } from '../emulators/sqs.ts';
import { parseEmf, parseJsonLine } from '../observe/emf.ts';
import { PipelineStats } from '../observe/pipeline-stats.ts';
import { type StdoutTap, tapStdout } from '../observe/stdout-tap.ts';
import { readQueueCounts } from '../queue-counts.ts';
import { createSqsEventSource, type InvocationReport, type SqsEventSource } from '../sqs-event-source.ts';
import { loadLocalConsumer } from './consumer-runtime.ts';
import { EffectsJournal } from './effects-journal.ts';
import { FaultSwitch } from './fault-switch.ts';
import type { LocalStackConfig } from './local-config.ts';
import {
  createLocalServer,
  type LocalInfo,
  type LocalPipeline,
  type ReceiverHandler,
} from './local-server.ts';

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_TABLE_NAME = 'whatsapp-webhook-dedup-claims';
/** The emulators accept any credentials; these only satisfy the SDK. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const QUEUE_SAMPLE_INTERVAL_MS = 1_000;

export class PortInUseError extends Error {
  constructor(port: number) {
    super(
      `Port ${port} is already in use: stop what runs there, or start on another port with PORT=<port> npm start.`,
    );
    this.name = 'PortInUseError';
  }
}

export interface LocalStack {
  /** `http://localhost:<port>` */
  readonly url: string;
  readonly port: number;
  readonly info: LocalInfo;
  readonly faults: FaultSwitch;
  stop(): Promise<void>;
}

export interface StartLocalStackOptions {
  readonly config: LocalStackConfig;
  /** Operational lines (start-up progress, one summary per consumer invocation). @default console.error */
  readonly log?: (line: string) => void;
}

export async function startLocalStack(options: StartLocalStackOptions): Promise<LocalStack> {
  const { config } = options;
  const log = options.log ?? ((line: string) => console.error(line));
  const { settings } = config;
  const faults = new FaultSwitch();
  faults.update({ effect: { delayMs: config.effectDelayMs } });
  let pipeline: LocalPipeline | undefined;
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        log(`local stack: clean-up failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };

  // The port first: a port in use must fail in a second, before a JVM is started for nothing.
  const local = createLocalServer({
    pipeline: () => pipeline,
    faults,
    chartJsPath: join(dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js'),
    log,
  });
  await listen(local.server, config.port);
  cleanups.push(() => local.close());
  const address = local.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;

  try {
    const [dynamodb, sqsEmulator] = await Promise.all([startDynamoDbLocal(), startSqsEmulator()]);
    cleanups.push(
      () => (dynamodb as DynamoDbLocal).stop(),
      () => (sqsEmulator as SqsEmulator).stop(),
    );
    const clientConfig = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const dynamodbClient = new DynamoDBClient({ ...clientConfig, endpoint: dynamodb.endpoint });
    const sqs = new SQSClient({ ...clientConfig, endpoint: sqsEmulator.endpoint });
    cleanups.push(
      () => dynamodbClient.destroy(),
      () => sqs.destroy(),
    );
    await createClaimTable(dynamodbClient, LOCAL_TABLE_NAME);
    const queues = await createPipelineQueues(sqs, settings);

    const dataDirectory = mkdtempSync(join(tmpdir(), 'whatsapp-webhook-dedup-'));
    cleanups.push(() => rmSync(dataDirectory, { recursive: true, force: true }));
    const journalPath = join(dataDirectory, 'effects.journal');
    const journal = new EffectsJournal(journalPath);
    journal.reset();

    // fauxqs names its queues `http://sqs.<region>.localhost:<port>/…`, and an SQS client whose endpoint
    // comes from the environment sends each request to its QueueUrl's host. `*.localhost` is loopback
    // (RFC 6761) but not every resolver knows it: resolve it in this process, and give the handlers that
    // very origin as their endpoint, so they neither fail nor warn on every call.
    const restoreDns = interceptLocalhostDns();
    cleanups.push(restoreDns);
    const handlerSqsEndpoint = new URL(queues.queueUrl).origin;

    // The handlers build their SDK clients from these, exactly as in Lambda.
    Object.assign(process.env, {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamodb.endpoint,
      AWS_ENDPOINT_URL_SQS: handlerSqsEndpoint,
      ...receiverEnvironment({
        subscriberQueues: [{ name: DEFAULT_SUBSCRIBER_NAME, queueUrl: queues.queueUrl }],
        quarantineQueueUrl: queues.dlqUrl,
        maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
        webhookSecrets: { appSecrets: config.appSecrets, verifyToken: config.verifyToken },
      }),
      ...consumerEnvironment({
        tableName: LOCAL_TABLE_NAME,
        subscriberName: DEFAULT_SUBSCRIBER_NAME,
        quarantineQueueUrl: queues.dlqUrl,
        deliveryQueueUrl: queues.queueUrl,
        retentionDays: settings.retentionDays,
        leaseMarginMs: settings.leaseMarginMs,
        maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
        effectsJournal: journalPath,
      }),
    });

    const stats = new PipelineStats();
    const tap: StdoutTap = tapStdout({
      onLine: (line) => observeHandlerOutput(line, stats),
      echo: (line) => config.verbose || !isRoutineHandlerOutput(line),
    });
    cleanups.push(() => tap.restore());

    const { handler: receiver } = (await import('../../functions/receiver.ts')) as {
      handler: ReceiverHandler;
    };
    const consumer = await loadLocalConsumer(faults);
    const eventSource: SqsEventSource = createSqsEventSource({
      sqs,
      queueUrl: queues.queueUrl,
      handler: consumer,
      batchSize: settings.batchSize,
      maxBatchingWindowSeconds: settings.maxBatchingWindowSeconds,
      functionTimeoutSeconds: settings.consumerTimeoutSeconds,
      pollers: settings.maxConcurrency,
      functionName: 'consumer',
      onInvocation: (report) => {
        stats.addInvocation(report);
        if (!config.verbose) log(summariseInvocation(report));
      },
      log,
    });
    await eventSource.start();
    cleanups.push(() => eventSource.stop());

    const sampler = startQueueSampler(sqs, queues.queueUrl, queues.dlqUrl, stats, log);
    cleanups.push(() => sampler.stop());

    const ledger = new StatusLedger({
      documentClient: DynamoDBDocumentClient.from(dynamodbClient),
      tableName: LOCAL_TABLE_NAME,
      retentionDays: settings.retentionDays,
    });
    const info: LocalInfo = {
      dynamodbEndpoint: dynamodb.endpoint,
      sqsEndpoint: sqsEmulator.endpoint,
      tableName: LOCAL_TABLE_NAME,
      queueUrl: queues.queueUrl,
      dlqUrl: queues.dlqUrl,
    };
    pipeline = {
      receiver,
      receiverTimeoutSeconds: settings.receiverTimeoutSeconds,
      region: LOCAL_REGION,
      info: { ...info, region: LOCAL_REGION, settings },
      effects: () => journal.read(),
      ledger: (wamid, participant) => ledger.view(wamid, participant),
      stats: (since) => stats.snapshot(since),
      waitUntilDrained: (timeoutMs) =>
        eventSource.waitUntilDrained({ timeoutMs }).then(
          () => true,
          () => false,
        ),
    };
    let stopping: Promise<void> | undefined;
    return {
      url: `http://localhost:${port}`,
      port,
      info,
      faults,
      stop() {
        stopping ??= (async () => {
          pipeline = undefined;
          await cleanUp();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

function listen(server: import('node:http').Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port) : error);
    };
    server.once('error', onError);
    server.listen(port, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * What Powertools prints for every event and invocation (EMF documents, INFO and DEBUG log entries): the
 * dashboard shows it, the terminal gets one summary line per invocation instead. Warnings and errors still
 * reach the terminal.
 */
function isRoutineHandlerOutput(line: string): boolean {
  return line.startsWith('{"_aws"') || /^\{"level":"(INFO|DEBUG|TRACE)"/.test(line);
}

function observeHandlerOutput(line: string, stats: PipelineStats): void {
  const document = parseJsonLine(line);
  if (document === undefined) return;
  const points = parseEmf(document);
  if (points !== undefined) {
    for (const point of points) stats.addMetric(point);
    return;
  }
  const entry = document as {
    message?: unknown;
    key?: unknown;
    field?: unknown;
    outcome?: unknown;
    timestamp?: unknown;
  };
  if (entry.message === 'Duplicate event skipped' && typeof entry.key === 'string') {
    stats.addDuplicate({
      key: entry.key,
      ...(typeof entry.field === 'string' && { field: entry.field }),
      at: typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) || Date.now() : Date.now(),
      inFlight: entry.outcome === 'duplicate-in-flight',
    });
  }
}

function summariseInvocation(report: InvocationReport): string {
  const failed = report.failedMessageIds.length;
  const records = report.records.length;
  return `consumer: ${records} record${records === 1 ? '' : 's'} in ${report.durationMs} ms, ${report.outcome}${failed > 0 ? ` (${failed} left for retry)` : ''}`;
}

function startQueueSampler(
  sqs: SQSClient,
  queueUrl: string,
  dlqUrl: string,
  stats: PipelineStats,
  log: (line: string) => void,
): { stop(): Promise<void> } {
  let running = true;
  let warned = false;
  const depth = (url: string) => readQueueCounts(sqs, url);
  const loop = (async () => {
    while (running) {
      try {
        const [queue, dlq] = await Promise.all([depth(queueUrl), depth(dlqUrl)]);
        stats.addQueueSample({
          backlog: queue.visible,
          inFlight: queue.inFlight,
          dlq: dlq.visible + dlq.inFlight,
        });
      } catch (error) {
        if (running && !warned)
          log(`queue sampler: ${error instanceof Error ? error.message : String(error)}`);
        warned = true;
      }
      await new Promise((resolve) => setTimeout(resolve, QUEUE_SAMPLE_INTERVAL_MS));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}
