/**
 * The whole pipeline on one machine (docs/design.md §6, docs/local.md): DynamoDB Local and the SQS emulator,
 * the claim table, each subscriber's queue and DLQ and the pipeline's quarantine queue created from the
 * shared definitions and settings, the real receiver behind an API Gateway v2 adapter, and each subscriber's
 * real consumer driven by a Lambda-like SQS event source of its own.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { interceptLocalhostDns } from 'fauxqs';
import { consumerEnvironment, ENV, receiverEnvironment } from '../../contract/environment.ts';
import { SUBSCRIBER_DIMENSION } from '../../contract/metric-names.ts';
import { DEFAULT_SUBSCRIBER_NAME, type ResolvedSubscriber } from '../../contract/subscribers.ts';
import { StatusLedger } from '../../functions/ledger/status-ledger.ts';
import { createClaimTable } from '../emulators/claim-table.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../emulators/dynamodb-local.ts';
import {
  createPipelineQueues,
  createQuarantineQueue,
  type PipelineQueues,
  type SqsEmulator,
  startSqsEmulator,
  subscriberQueueNames,
} from '../emulators/sqs.ts';
import { parseEmf, parseJsonLine } from '../observe/emf.ts';
import type { QueueSample } from '../observe/pipeline-stats.ts';
import { type StdoutTap, tapStdout } from '../observe/stdout-tap.ts';
import { SubscriberStats } from '../observe/subscriber-stats.ts';
import { readQueueCounts } from '../queue-counts.ts';
import { createSqsEventSource, type InvocationReport, type SqsEventSource } from '../sqs-event-source.ts';
import {
  createLocalConsumer,
  definedHandlers,
  importSubscriberHandlers,
  withLocalEffects,
} from './consumer-runtime.ts';
import { EffectsJournal } from './effects-journal.ts';
import { FaultSwitch } from './fault-switch.ts';
import type { LocalStackConfig } from './local-config.ts';
import {
  createLocalServer,
  type LocalEffectsView,
  type LocalInfo,
  type LocalPipeline,
  type LocalSubscriberInfo,
  type ReceiverHandler,
  type SubscriberEffectsView,
} from './local-server.ts';
import type { LocalSubscribers } from './local-subscribers.ts';
import { createOperatorViews, inProcessTarget } from './operator-views.ts';

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_TABLE_NAME = 'whatsapp-webhook-dedup-claims';
/** The emulators accept any credentials; these only satisfy the SDK. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const QUEUE_SAMPLE_INTERVAL_MS = 1_000;
const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));

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
  /** The subscribers to run, from `loadLocalSubscribers`. */
  readonly subscribers: LocalSubscribers;
  /** Operational lines (start-up progress, one summary per consumer invocation). @default console.error */
  readonly log?: (line: string) => void;
}

/** One subscriber as the local stack runs it. */
interface RunningSubscriber {
  readonly subscriber: ResolvedSubscriber;
  readonly queues: PipelineQueues;
  readonly journal: EffectsJournal;
  readonly ledger: StatusLedger;
  readonly eventSource: SqsEventSource;
  readonly info: LocalSubscriberInfo;
}

export async function startLocalStack(options: StartLocalStackOptions): Promise<LocalStack> {
  const { config } = options;
  const subscribers = options.subscribers.subscribers;
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
    const quarantineQueueUrl = await createQuarantineQueue(sqs, settings);
    const queuesOf = new Map<string, PipelineQueues>();
    for (const subscriber of subscribers) {
      queuesOf.set(
        subscriber.name,
        await createPipelineQueues(sqs, subscriber.settings, subscriberQueueNames(subscriber.name)),
      );
    }
    const queues = (name: string) => queuesOf.get(name) as PipelineQueues;

    const dataDirectory = mkdtempSync(join(tmpdir(), 'whatsapp-webhook-dedup-'));
    cleanups.push(() => rmSync(dataDirectory, { recursive: true, force: true }));

    // fauxqs names its queues `http://sqs.<region>.localhost:<port>/…`, and an SQS client whose endpoint
    // comes from the environment sends each request to its QueueUrl's host. `*.localhost` is loopback
    // (RFC 6761) but not every resolver knows it: resolve it in this process, and give the handlers that
    // very origin as their endpoint, so they neither fail nor warn on every call.
    const restoreDns = interceptLocalhostDns();
    cleanups.push(restoreDns);
    const handlerSqsEndpoint = new URL(quarantineQueueUrl).origin;

    // The handlers build their SDK clients from these, exactly as in Lambda. The receiver is one function
    // for the whole pipeline: its variables go into this process's environment. Each consumer gets its
    // own variables on top (below), never through process.env, since they all run in this process.
    // Effects are journaled per subscriber by the local stack itself (withLocalEffects). The handlers'
    // journal variable stays set, so that example handlers know they run locally and call no real system.
    Object.assign(process.env, {
      [ENV.effectsJournal]: join(dataDirectory, 'handlers.journal'),
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamodb.endpoint,
      AWS_ENDPOINT_URL_SQS: handlerSqsEndpoint,
      ...receiverEnvironment({
        subscriberQueues: subscribers.map(({ name, fields }) => ({
          name,
          queueUrl: queues(name).queueUrl,
          ...(fields === undefined ? {} : { fields }),
        })),
        quarantineQueueUrl,
        maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
        webhookSecrets: { appSecrets: config.appSecrets, verifyToken: config.verifyToken },
      }),
    });

    const journals = new Map(
      subscribers.map(({ name }) => {
        const journal = new EffectsJournal(join(dataDirectory, `effects-${name}.journal`));
        journal.reset();
        return [name, journal] as const;
      }),
    );
    const journal = (name: string) => journals.get(name) as EffectsJournal;
    const stats = new SubscriberStats(
      subscribers.map(({ name }) => name),
      { effectsOf: (name) => journal(name).read().total },
    );
    // Which subscriber's consumer printed a line: every consumer invocation runs inside its own scope.
    const invokedSubscriber = new AsyncLocalStorage<string>();
    const tap: StdoutTap = tapStdout({
      onLine: (line) => observeHandlerOutput(line, stats, invokedSubscriber.getStore()),
      echo: (line) => config.verbose || !isRoutineHandlerOutput(line),
    });
    cleanups.push(() => tap.restore());

    const { handler: receiver } = (await import('../../functions/receiver.ts')) as {
      handler: ReceiverHandler;
    };
    const documentClient = DynamoDBDocumentClient.from(dynamodbClient);
    const running: RunningSubscriber[] = [];
    for (const subscriber of subscribers) {
      const { name } = subscriber;
      const handlers = await importSubscriberHandlers(subscriber, REPOSITORY_ROOT);
      const consumer = await createLocalConsumer(
        withLocalEffects(handlers, { delay: faults, recordEffect: (key) => journal(name).append(key) }),
        { ...process.env, ...consumerVariables(subscriber, queues(name), quarantineQueueUrl) },
      );
      const functionName = subscriber.name === DEFAULT_SUBSCRIBER_NAME ? 'consumer' : `consumer-${name}`;
      const eventSource: SqsEventSource = createSqsEventSource({
        sqs,
        queueUrl: queues(name).queueUrl,
        handler: (event, context) => invokedSubscriber.run(name, () => consumer(event, context)),
        batchSize: subscriber.settings.batchSize,
        maxBatchingWindowSeconds: subscriber.settings.maxBatchingWindowSeconds,
        functionTimeoutSeconds: subscriber.settings.consumerTimeoutSeconds,
        pollers: subscriber.settings.maxConcurrency,
        functionName,
        onInvocation: (report) => {
          stats.addInvocation(report, name);
          if (!config.verbose) log(summariseInvocation(functionName, report));
        },
        log,
      });
      await eventSource.start();
      cleanups.push(() => eventSource.stop());
      running.push({
        subscriber,
        queues: queues(name),
        journal: journal(name),
        ledger: new StatusLedger({
          documentClient,
          tableName: LOCAL_TABLE_NAME,
          keyNamespace: subscriber.keyNamespace,
          retentionDays: subscriber.settings.retentionDays,
        }),
        eventSource,
        info: {
          name,
          entry: subscriber.entry,
          fields: subscriber.fields ?? null,
          keyNamespace: subscriber.keyNamespace ?? null,
          handlers: definedHandlers(handlers),
          queueUrl: queues(name).queueUrl,
          dlqUrl: queues(name).dlqUrl,
          settings: subscriber.settings,
        },
      });
    }

    const sampler = startQueueSampler(sqs, running, quarantineQueueUrl, stats, log);
    cleanups.push(() => sampler.stop());

    const [first] = running as [RunningSubscriber, ...RunningSubscriber[]];
    const consumerOf = (name: string) => running.find((r) => r.subscriber.name === name)?.eventSource;
    const info: LocalInfo = {
      dynamodbEndpoint: dynamodb.endpoint,
      sqsEndpoint: sqsEmulator.endpoint,
      tableName: LOCAL_TABLE_NAME,
      queueUrl: first.queues.queueUrl,
      dlqUrl: first.queues.dlqUrl,
      quarantineQueueUrl,
      subscribersSource: options.subscribers.source,
      subscribers: running.map((r) => r.info),
    };
    pipeline = {
      receiver,
      receiverTimeoutSeconds: settings.receiverTimeoutSeconds,
      region: LOCAL_REGION,
      info: { ...info, region: LOCAL_REGION, settings },
      effects: () => effectsView(running, stats),
      ledger: (wamid, participant, subscriber) =>
        (running.find((r) => r.subscriber.name === subscriber) ?? first).ledger.view(wamid, participant),
      stats: (since) => stats.snapshot(since),
      waitUntilDrained: (timeoutMs) =>
        Promise.all(running.map((r) => r.eventSource.waitUntilDrained({ timeoutMs }))).then(
          () => true,
          () => false,
        ),
      consumer: consumerOf,
      operator: createOperatorViews({
        target: inProcessTarget({
          info,
          maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
          sqs,
          documentClient,
          consumer: consumerOf,
        }),
      }),
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

/** One subscriber's consumer variables, as the CDK construct sets them on its function. */
function consumerVariables(
  subscriber: ResolvedSubscriber,
  queues: PipelineQueues,
  quarantineQueueUrl: string,
): Record<string, string> {
  const { settings } = subscriber;
  return consumerEnvironment({
    tableName: LOCAL_TABLE_NAME,
    subscriberName: subscriber.name,
    fields: subscriber.fields,
    keyNamespace: subscriber.keyNamespace,
    quarantineQueueUrl,
    deliveryQueueUrl: queues.queueUrl,
    retentionDays: settings.retentionDays,
    leaseMarginMs: settings.leaseMarginMs,
    maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
    retryBaseDelaySeconds: settings.retryBaseDelaySeconds,
    retryMaxDelaySeconds: settings.retryMaxDelaySeconds,
    ...(subscriber.statusLedger === undefined ? {} : { statusLedger: subscriber.statusLedger }),
    ...(subscriber.claimUnhandledEvents === undefined
      ? {}
      : { claimUnhandledEvents: subscriber.claimUnhandledEvents }),
  });
}

/** Each subscriber's effects, and all of them summed (a single subscriber's, when it is the only one). */
function effectsView(running: readonly RunningSubscriber[], stats: SubscriberStats): LocalEffectsView {
  const perSubscriber = stats.snapshot(Math.floor(Date.now() / 1000)).subscribers;
  const counts = new Map<string, number>();
  let total = 0;
  const subscribers: Record<string, SubscriberEffectsView> = {};
  for (const { subscriber, journal } of running) {
    const view = journal.read();
    total += view.total;
    for (const { key, count } of view.effects) counts.set(key, (counts.get(key) ?? 0) + count);
    const byField = perSubscriber[subscriber.name]?.totals.byField ?? {};
    const duplicatesSkipped = Object.values(byField).reduce((sum, c) => sum + c.duplicate, 0);
    subscribers[subscriber.name] = { ...view, duplicatesSkipped };
  }
  return { total, effects: [...counts].map(([key, count]) => ({ key, count })), subscribers };
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

/** `invoked`: the subscriber whose consumer was running when the line was printed (none: the receiver). */
function observeHandlerOutput(line: string, stats: SubscriberStats, invoked: string | undefined): void {
  const document = parseJsonLine(line);
  if (document === undefined) return;
  const points = parseEmf(document);
  if (points !== undefined) {
    for (const point of points) stats.addMetric(point, point.dimensions[SUBSCRIBER_DIMENSION] ?? invoked);
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
      ...(invoked !== undefined && { subscriber: invoked }),
      ...(typeof entry.field === 'string' && { field: entry.field }),
      at: typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) || Date.now() : Date.now(),
      inFlight: entry.outcome === 'duplicate-in-flight',
    });
  }
}

function summariseInvocation(functionName: string, report: InvocationReport): string {
  const failed = report.failedMessageIds.length;
  const records = report.records.length;
  return `${functionName}: ${records} record${records === 1 ? '' : 's'} in ${report.durationMs} ms, ${report.outcome}${failed > 0 ? ` (${failed} left for retry)` : ''}`;
}

function startQueueSampler(
  sqs: SQSClient,
  running: readonly RunningSubscriber[],
  quarantineQueueUrl: string,
  stats: SubscriberStats,
  log: (line: string) => void,
): { stop(): Promise<void> } {
  let active = true;
  let warned = false;
  const sample = async ({ subscriber, queues }: RunningSubscriber): Promise<[string, QueueSample]> => {
    const [queue, dlq] = await Promise.all([
      readQueueCounts(sqs, queues.queueUrl),
      readQueueCounts(sqs, queues.dlqUrl),
    ]);
    return [
      subscriber.name,
      { backlog: queue.visible, inFlight: queue.inFlight, dlq: dlq.visible + dlq.inFlight },
    ];
  };
  const loop = (async () => {
    while (active) {
      try {
        const [samples, quarantine] = await Promise.all([
          Promise.all(running.map(sample)),
          readQueueCounts(sqs, quarantineQueueUrl),
        ]);
        stats.addQueueSamples(Object.fromEntries(samples), quarantine.visible + quarantine.inFlight);
      } catch (error) {
        if (active && !warned)
          log(`queue sampler: ${error instanceof Error ? error.message : String(error)}`);
        warned = true;
      }
      await new Promise((resolve) => setTimeout(resolve, QUEUE_SAMPLE_INTERVAL_MS));
    }
  })();
  return {
    async stop() {
      active = false;
      await loop;
    },
  };
}
