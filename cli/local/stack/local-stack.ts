/**
 * The whole pipeline on one machine (docs/design.md §6, docs/local.md): DynamoDB Local and the SQS emulator,
 * the claim table, each subscriber's lanes (contract/lanes.ts: its status lane queue and DLQ, and for a
 * subscriber that wants `messages` its message lane queue and DLQ, FIFO when ordered) and the pipeline's
 * quarantine queue created from the shared definitions and settings, the real receiver behind an API Gateway
 * v2 adapter, and one real consumer per lane, over the subscriber's module, each driven by a Lambda-like SQS
 * event source of its own.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { interceptLocalhostDns } from 'fauxqs';
import { consumerEnvironment, ENV, receiverEnvironment } from 'whatsapp-webhook-dedup/contract/environment';
import { LANE_DIMENSION, type LaneName, redriveMaxReceiveCount } from 'whatsapp-webhook-dedup/contract/lanes';
import {
  ConsumerLaneMetric,
  SQS_DEDUPLICATED_SENDS_METRIC,
  SUBSCRIBER_DIMENSION,
} from 'whatsapp-webhook-dedup/contract/metric-names';
import type { PipelineSettings } from 'whatsapp-webhook-dedup/contract/settings';
import {
  DEFAULT_SUBSCRIBER_NAME,
  type ResolvedSubscriber,
} from 'whatsapp-webhook-dedup/contract/subscribers';
import { StatusLedger } from 'whatsapp-webhook-dedup/functions/ledger/status-ledger';
import { createClaimTable } from '../emulators/claim-table.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../emulators/dynamodb-local.ts';
import {
  createPipelineQueues,
  createQuarantineQueue,
  messageLaneQueueNames,
  type PipelineQueues,
  type QueueInspection,
  type SqsEmulator,
  startSqsEmulator,
  subscriberQueueNames,
} from '../emulators/sqs.ts';
import type { LocalInfo, LocalSubscriberInfo } from '../local-stack-api.ts';
import { parseEmf, parseJsonLine } from '../observe/emf.ts';
import {
  countInvocationEvents,
  type InvocationEvents,
  summariseInvocation,
} from '../observe/invocation-summary.ts';
import { type LaneQueueSample, LaneStats } from '../observe/lane-stats.ts';
import type { QueueSample } from '../observe/pipeline-stats.ts';
import { type StdoutTap, tapStdout } from '../observe/stdout-tap.ts';
import { SubscriberStats } from '../observe/subscriber-stats.ts';
import { terminalLines } from '../observe/terminal-lines.ts';
import { readQueueCounts } from '../queue-counts.ts';
import { createSqsEventSource, type SqsEventSource } from '../sqs-event-source.ts';
import type { ConsumerPoller } from './consumer-poller.ts';
import type { LocalConsumerModule } from './consumer-runtime.ts';
import {
  createLocalConsumer,
  definedHandlers,
  importSubscriberHandlers,
  withLocalEffects,
} from './consumer-runtime.ts';
import { EffectsJournal } from './effects-journal.ts';
import { FaultSwitch } from './fault-switch.ts';
import { ledgerParticipants } from './ledger-participants.ts';
import { startLocalArchive } from './local-archive.ts';
import type { LocalStackConfig } from './local-config.ts';
import {
  createLocalServer,
  exposureWarning,
  type LocalEffectsView,
  type LocalPipeline,
  listenLocalServer,
  type ReceiverHandler,
  type SubscriberEffectsView,
  type SummedEffectEntry,
} from './local-server.ts';
import type { LocalSubscribers } from './local-subscribers.ts';
import { createOperatorViews, inProcessTarget } from './operator-views.ts';

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_TABLE_NAME = 'whatsapp-webhook-dedup-claims';
/** The emulators accept any credentials; these only satisfy the SDK. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const QUEUE_SAMPLE_INTERVAL_MS = 1_000;

export { PortInUseError } from './local-server.ts';

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

/** One lane of a subscriber: its queues, its consumer's settings and the event source driving it. */
interface RunningLane {
  readonly lane: LaneName;
  readonly ordered: boolean;
  readonly settings: PipelineSettings;
  readonly queues: PipelineQueues;
  readonly eventSource: SqsEventSource;
}

/** One subscriber as the local stack runs it. */
interface RunningSubscriber {
  readonly subscriber: ResolvedSubscriber;
  /** The status lane's queues (every field but inbound messages, and those too without a message lane). */
  readonly queues: PipelineQueues;
  /** The status lane first, then the message lane when the subscriber has one. */
  readonly lanes: readonly RunningLane[];
  readonly journal: EffectsJournal;
  readonly ledger: StatusLedger;
  /** Its lanes' pollers, each switched on its own (`npm run ops -- pause|resume [--lane]`). */
  readonly poller: ConsumerPoller;
  readonly info: LocalSubscriberInfo;
}

/** A lane's queues, before its consumer runs. */
interface LaneQueues {
  readonly lane: LaneName;
  readonly ordered: boolean;
  readonly settings: PipelineSettings;
  readonly queues: PipelineQueues;
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
    host: config.host,
  });
  await listenLocalServer(local.server, config.port, config.host);
  cleanups.push(() => local.close());
  const address = local.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const exposure = exposureWarning(config.host, port);
  if (exposure !== undefined) log(exposure);

  try {
    const [dynamodb, sqsEmulator] = await Promise.all([
      config.dynamodbEndpoint === undefined
        ? startDynamoDbLocal()
        : { endpoint: config.dynamodbEndpoint, stop: async () => {} },
      startSqsEmulator(),
    ]);
    cleanups.push(
      () => (dynamodb as Pick<DynamoDbLocal, 'stop'>).stop(),
      () => (sqsEmulator as SqsEmulator).stop(),
    );
    // A DynamoDB the stack did not start may hold other stacks' tables: this one's name is its own.
    const tableName =
      config.dynamodbEndpoint === undefined
        ? LOCAL_TABLE_NAME
        : `${LOCAL_TABLE_NAME}-${randomBytes(6).toString('hex')}`;
    const clientConfig = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const dynamodbClient = new DynamoDBClient({ ...clientConfig, endpoint: dynamodb.endpoint });
    const sqs = new SQSClient({ ...clientConfig, endpoint: sqsEmulator.endpoint });
    cleanups.push(
      () => dynamodbClient.destroy(),
      () => sqs.destroy(),
    );
    await createClaimTable(dynamodbClient, tableName);
    if (config.dynamodbEndpoint !== undefined) {
      cleanups.push(async () => {
        await dynamodbClient.send(new DeleteTableCommand({ TableName: tableName }));
      });
    }
    const quarantineQueueUrl = await createQuarantineQueue(sqs, settings);
    const lanesOf = new Map<string, LaneQueues[]>();
    for (const subscriber of subscribers) {
      const lanes: LaneQueues[] = [
        {
          lane: 'status',
          ordered: false,
          settings: subscriber.settings,
          queues: await createPipelineQueues(sqs, subscriber.settings, subscriberQueueNames(subscriber.name)),
        },
      ];
      const messageLane = subscriber.messageLane;
      if (messageLane !== undefined) {
        lanes.push({
          lane: 'message',
          ordered: messageLane.ordered,
          settings: messageLane.settings,
          queues: await createPipelineQueues(
            sqs,
            messageLane.settings,
            messageLaneQueueNames(subscriber.name, messageLane.ordered),
            { fifo: messageLane.ordered, redriveMaxReceiveCount: redriveMaxReceiveCount(messageLane) },
          ),
        });
      }
      lanesOf.set(subscriber.name, lanes);
    }
    const lanesFor = (name: string) => lanesOf.get(name) as LaneQueues[];
    const queues = (name: string) => (lanesFor(name)[0] as LaneQueues).queues;
    const messageLaneOf = (name: string) => lanesFor(name).find((lane) => lane.lane === 'message');

    const dataDirectory = mkdtempSync(join(tmpdir(), 'whatsapp-webhook-dedup-'));
    cleanups.push(() => rmSync(dataDirectory, { recursive: true, force: true }));

    // fauxqs names its queues `http://sqs.<region>.localhost:<port>/…`, and an SQS client whose endpoint
    // comes from the environment sends each request to its QueueUrl's host. `*.localhost` is loopback
    // (RFC 6761) but not every resolver knows it: resolve it in this process, and give the handlers that
    // very origin as their endpoint, so they neither fail nor warn on every call.
    const restoreDns = interceptLocalhostDns();
    cleanups.push(restoreDns);
    const handlerSqsEndpoint = new URL(quarantineQueueUrl).origin;

    const archive = await startLocalArchive({
      sqs,
      endpoint: sqsEmulator.endpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      settings,
      log,
    });
    cleanups.push(() => archive.stop());

    // The handlers build their SDK clients from these, exactly as in Lambda. The receiver is one function
    // for the whole pipeline: its variables go into this process's environment. Each consumer gets its
    // own variables on top (below), never through process.env, since they all run in this process.
    // Effects are journaled per subscriber by the local stack itself (withLocalEffects). The handlers'
    // journal variable stays set, so that example handlers know they run locally and call no real system.
    // The run's provenance key, as a deployment's secret is: the receiver proves what it keeps with it, and
    // `ops` reads it from `/local/info` to check a body before sending it back in.
    const provenanceKey = randomBytes(32).toString('base64url');
    Object.assign(process.env, {
      [ENV.effectsJournal]: join(dataDirectory, 'handlers.journal'),
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamodb.endpoint,
      AWS_ENDPOINT_URL_SQS: handlerSqsEndpoint,
      ...receiverEnvironment({
        subscriberQueues: subscribers.map(({ name, fields, numbers, wabas }) => {
          const messageLane = messageLaneOf(name);
          return {
            name,
            queueUrl: queues(name).queueUrl,
            fields,
            numbers,
            wabas,
            ...(messageLane === undefined
              ? {}
              : { messageQueueUrl: messageLane.queues.queueUrl, messageLaneOrdered: messageLane.ordered }),
          };
        }),
        quarantineQueueUrl,
        maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
        webhookSecrets: { appSecrets: config.appSecrets, verifyToken: config.verifyToken },
        archiveQueueUrl: archive.queues.queueUrl,
        provenance: { key: provenanceKey },
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
    const laneStats = new LaneStats(
      subscribers.flatMap(({ name }) =>
        lanesFor(name).map(({ lane, ordered }) => ({ subscriber: name, lane, ordered })),
      ),
    );
    const stats = new SubscriberStats(
      subscribers.map(({ name }) => name),
      { effectsOf: (name) => journal(name).read().total, lanes: () => laneStats.snapshot() },
    );
    // Which subscriber's consumer, and which of its lanes, printed a line: every consumer invocation runs
    // inside its own scope.
    const invoked = new AsyncLocalStorage<InvocationScope>();
    /** Each running invocation's scope, by request id, for its summary line. */
    const scopes = new Map<string, InvocationScope>();
    const show = terminalLines(config.verbose);
    const tap: StdoutTap = tapStdout({
      onLine: (line) => observeHandlerOutput(line, stats, laneStats, invoked.getStore()),
      show,
    });
    cleanups.push(() => tap.restore());
    // Powertools writes warnings and errors to stderr: one line each there too.
    const stderrTap = tapStdout({ stream: process.stderr, show });
    cleanups.push(() => stderrTap.restore());

    const { handler: receiver } = (await import('whatsapp-webhook-dedup/functions/receiver')) as {
      handler: ReceiverHandler;
    };
    const documentClient = DynamoDBDocumentClient.from(dynamodbClient);
    const consumerModule = localConsumerModule(config.consumerModule, options.subscribers);
    // The run's log digest key, as a deployment's secret is: `ops key` reads it from `/local/info`.
    const logDigestKey = randomBytes(32).toString('base64url');
    const running: RunningSubscriber[] = [];
    for (const subscriber of subscribers) {
      const { name } = subscriber;
      const handlers = withLocalEffects(
        await importSubscriberHandlers(subscriber, options.subscribers.importModule),
        {
          delay: faults,
          recordEffect: (key, run) => journal(name).append(key, run),
        },
      );
      const lanes: RunningLane[] = [];
      for (const laneQueues of lanesFor(name)) {
        const { lane, settings: laneSettings, queues: laneQueueUrls } = laneQueues;
        // Each lane has its own consumer over the same module, as each has its own Lambda function in AWS.
        const consumer = await createLocalConsumer(
          handlers,
          {
            ...process.env,
            ...consumerVariables(subscriber, laneQueues, tableName, quarantineQueueUrl, logDigestKey),
          },
          consumerModule,
        );
        const functionName = consumerFunctionName(name, lane);
        const eventSource: SqsEventSource = createSqsEventSource({
          sqs,
          queueUrl: laneQueueUrls.queueUrl,
          handler: (event, context) => {
            const scope: InvocationScope = { subscriber: name, lane, fresh: 0, duplicates: 0 };
            scopes.set(context.awsRequestId, scope);
            return invoked.run(scope, () => consumer(event, context));
          },
          batchSize: laneSettings.batchSize,
          maxBatchingWindowSeconds: laneSettings.maxBatchingWindowSeconds,
          functionTimeoutSeconds: laneSettings.consumerTimeoutSeconds,
          pollers: laneSettings.maxConcurrency,
          functionName,
          onInvocation: (report) => {
            const scope = scopes.get(report.awsRequestId);
            scopes.delete(report.awsRequestId);
            stats.addInvocation(report, name);
            if (!config.verbose) log(summariseInvocation(functionName, report, scope));
          },
          log,
        });
        await eventSource.start();
        cleanups.push(() => eventSource.stop());
        lanes.push({ ...laneQueues, eventSource });
      }
      const messageLane = lanes.find((lane) => lane.lane === 'message');
      running.push({
        subscriber,
        queues: queues(name),
        lanes,
        journal: journal(name),
        ledger: new StatusLedger({
          documentClient,
          tableName,
          keyNamespace: subscriber.keyNamespace,
          retentionDays: subscriber.settings.retentionDays,
        }),
        poller: lanesPoller(lanes),
        info: {
          name,
          // A forward URL may carry a token in its path or query: only its origin is shown.
          entry: subscriber.entry ?? `forward → ${new URL(subscriber.forward?.url ?? '').origin}`,
          fields: subscriber.fields ?? null,
          numbers: subscriber.numbers ?? null,
          wabas: subscriber.wabas ?? null,
          keyNamespace: subscriber.keyNamespace ?? null,
          handlers: definedHandlers(handlers),
          queueUrl: queues(name).queueUrl,
          dlqUrl: queues(name).dlqUrl,
          ...(messageLane === undefined
            ? {}
            : {
                messageQueueUrl: messageLane.queues.queueUrl,
                messageDlqUrl: messageLane.queues.dlqUrl,
                messageLaneOrdered: messageLane.ordered,
                messageLaneSettings: messageLane.settings,
              }),
          settings: subscriber.settings,
        },
      });
    }

    const sampler = startQueueSampler(
      { sqs, inspect: (url) => sqsEmulator.inspect(url) },
      running,
      quarantineQueueUrl,
      { stats, laneStats },
      log,
    );
    cleanups.push(() => sampler.stop());

    const [first] = running as [RunningSubscriber, ...RunningSubscriber[]];
    const consumerOf = (name: string) => running.find((r) => r.subscriber.name === name)?.poller;
    const info: LocalInfo = {
      dynamodbEndpoint: dynamodb.endpoint,
      sqsEndpoint: sqsEmulator.endpoint,
      tableName,
      queueUrl: first.queues.queueUrl,
      dlqUrl: first.queues.dlqUrl,
      quarantineQueueUrl,
      logDigestKey,
      provenanceKey,
      subscribersSource: options.subscribers.source,
      subscribers: running.map((r) => r.info),
    };
    pipeline = {
      receiver,
      receiverTimeoutSeconds: settings.receiverTimeoutSeconds,
      region: LOCAL_REGION,
      info: {
        ...info,
        region: LOCAL_REGION,
        settings,
        archive: {
          bucketName: archive.bucketName,
          s3Endpoint: sqsEmulator.endpoint,
          queueUrl: archive.queues.queueUrl,
          dlqUrl: archive.queues.dlqUrl,
        },
      },
      archive: () => archive.list(),
      effects: () => effectsView(running, stats),
      ledger: async (wamid, participant, subscriber) => {
        const { ledger, subscriber: which } = running.find((r) => r.subscriber.name === subscriber) ?? first;
        if (participant !== undefined) return ledger.view(wamid, participant);
        const [own, ids] = await Promise.all([
          ledger.view(wamid),
          ledgerParticipants({ documentClient, tableName, keyNamespace: which.keyNamespace }, wamid),
        ]);
        const participants = (await Promise.all(ids.map((id) => ledger.view(wamid, id)))).filter(
          (view) => view !== undefined,
        );
        if (participants.length === 0) return own;
        return own === undefined ? { wamid, participants } : { ...own, participants };
      },
      stats: (since) => stats.snapshot(since),
      waitUntilDrained: (timeoutMs) =>
        Promise.all(
          running.flatMap((r) => r.lanes.map((lane) => lane.eventSource.waitUntilDrained({ timeoutMs }))),
        ).then(
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

/** One lane's consumer variables, as the CDK construct sets them on that lane's function. */
function consumerVariables(
  subscriber: ResolvedSubscriber,
  lane: LaneQueues,
  tableName: string,
  quarantineQueueUrl: string,
  logDigestKey: string,
): Record<string, string> {
  const { settings } = lane;
  return consumerEnvironment({
    tableName,
    subscriberName: subscriber.name,
    fields: subscriber.fields,
    numbers: subscriber.numbers,
    wabas: subscriber.wabas,
    keyNamespace: subscriber.keyNamespace,
    quarantineQueueUrl,
    deliveryQueueUrl: lane.queues.queueUrl,
    retentionDays: settings.retentionDays,
    leaseMarginMs: settings.leaseMarginMs,
    maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
    retryBaseDelaySeconds: settings.retryBaseDelaySeconds,
    retryMaxDelaySeconds: settings.retryMaxDelaySeconds,
    lane: lane.lane,
    // As the construct sets them: the status lane is never ordered (no variable); every lane's consumer may
    // move a record a handler gave up on to the lane's DLQ, and an ordered lane's one failing its last
    // receive too, SQS redrive a net behind it.
    laneOrdered: lane.lane === 'message' ? lane.ordered : undefined,
    laneDeadLetters: { queueUrl: lane.queues.dlqUrl, maxReceives: settings.maxReceiveCount },
    logDigest: { key: logDigestKey },
    statusLedger: subscriber.statusLedger,
    claimUnhandledEvents: subscriber.claimUnhandledEvents,
  });
}

/** `consumer` for the default subscriber's status lane, as in a single-subscriber stack. */
function consumerFunctionName(subscriber: string, lane: LaneName): string {
  const base = subscriber === DEFAULT_SUBSCRIBER_NAME ? 'consumer' : `consumer-${subscriber}`;
  return lane === 'status' ? base : `${base}-messages`;
}

/** A subscriber's pollers, one per lane, each switched on its own as an event source mapping is. */
function lanesPoller(lanes: readonly RunningLane[]): ConsumerPoller {
  const source = (lane: LaneName) => {
    const found = lanes.find((running) => running.lane === lane);
    if (found === undefined) throw new RangeError(`no ${lane} lane`);
    return found.eventSource;
  };
  return {
    has: (lane) => lanes.some((running) => running.lane === lane),
    pause: (lane) => source(lane).pause(),
    resume: (lane) => source(lane).resume(),
    state: (lane) => source(lane).state,
  };
}

/**
 * Each subscriber's effects, and all of them summed (a single subscriber's, when it is the only one), each key
 * with its count per subscriber: two subscribers effecting one key is one effect each, not a double effect. A
 * key's summed `startedAt`/`endedAt` are those of its earliest effect among the subscribers.
 */
function effectsView(running: readonly RunningSubscriber[], stats: SubscriberStats): LocalEffectsView {
  const perSubscriber = stats.snapshot(Math.floor(Date.now() / 1000)).subscribers;
  const summed = new Map<string, SummedEffectEntry>();
  let total = 0;
  const subscribers: Record<string, SubscriberEffectsView> = {};
  for (const { subscriber, journal } of running) {
    const view = journal.read();
    total += view.total;
    for (const entry of view.effects) {
      const seen = summed.get(entry.key);
      const bySubscriber = { ...seen?.bySubscriber, [subscriber.name]: entry.count };
      const earlier =
        seen === undefined ||
        (entry.startedAt !== undefined && (seen.startedAt === undefined || entry.startedAt < seen.startedAt))
          ? entry
          : seen;
      summed.set(entry.key, { ...earlier, count: (seen?.count ?? 0) + entry.count, bySubscriber });
    }
    const totals = perSubscriber[subscriber.name]?.totals;
    const duplicatesSkipped = Object.values(totals?.byField ?? {}).reduce((sum, c) => sum + c.duplicate, 0);
    subscribers[subscriber.name] = {
      ...view,
      duplicatesSkipped,
      duplicatesAbsorbedByQueue: totals?.absorbedByQueue ?? 0,
    };
  }
  return { total, effects: [...summed.values()], subscribers };
}

/** The consumer invocation a line was printed in, and the events its metrics counted so far. */
interface InvocationScope extends InvocationEvents {
  readonly subscriber: string;
  readonly lane: LaneName;
}

/** `invoked`: the consumer that was running when the line was printed (none: the receiver). */
function observeHandlerOutput(
  line: string,
  stats: SubscriberStats,
  laneStats: LaneStats,
  scope: InvocationScope | undefined,
): void {
  const invoked = scope?.subscriber;
  const document = parseJsonLine(line);
  if (document === undefined) return;
  const points = parseEmf(document);
  if (points !== undefined) {
    for (const point of points) {
      const subscriber = point.dimensions[SUBSCRIBER_DIMENSION] ?? invoked;
      if (point.name === ConsumerLaneMetric.EventWaitTime) {
        const lane = point.dimensions[LANE_DIMENSION] ?? scope?.lane;
        if (subscriber !== undefined && lane !== undefined) {
          laneStats.addWaits(subscriber, lane, point.values ?? [point.value]);
        }
        continue;
      }
      stats.addMetric(point, subscriber);
      if (scope === undefined) continue;
      countInvocationEvents(scope, point);
    }
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
      subscriber: invoked,
      ...(typeof entry.field === 'string' && { field: entry.field }),
      at: typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) || Date.now() : Date.now(),
      inFlight: entry.outcome === 'duplicate-in-flight',
    });
  }
}

interface QueueReader {
  readonly sqs: SQSClient;
  readonly inspect: (queueUrl: string) => QueueInspection;
}

function startQueueSampler(
  reader: QueueReader,
  running: readonly RunningSubscriber[],
  quarantineQueueUrl: string,
  sinks: { readonly stats: SubscriberStats; readonly laneStats: LaneStats },
  log: (line: string) => void,
): { stop(): Promise<void> } {
  const { sqs } = reader;
  let active = true;
  let warned = false;
  const absorbedSoFar = new Map<string, number>();
  /**
   * What SQS would count in CloudWatch's NumberOfDeduplicatedSentMessages, as a metric of the subscriber, and a
   * terminal line: a repeat the FIFO queue absorbed never reaches a claim, so nothing else would show it.
   */
  const countAbsorbed = (subscriber: RunningSubscriber['subscriber'], absorbed: number): void => {
    const added = absorbed - (absorbedSoFar.get(subscriber.name) ?? 0);
    if (added <= 0) return;
    absorbedSoFar.set(subscriber.name, absorbed);
    const point = { namespace: 'AWS/SQS', name: SQS_DEDUPLICATED_SENDS_METRIC, value: added, dimensions: {} };
    sinks.stats.addMetric({ ...point, timestamp: Date.now() }, subscriber.name);
    log(
      `${subscriber.name}: ${added} duplicate${added === 1 ? '' : 's'} absorbed by the message lane's FIFO queue ` +
        '(the same event again within 5 minutes: no claim, no handler call)',
    );
  };
  const sampleLane = async ({
    queues,
  }: RunningLane): Promise<{ readonly sample: LaneQueueSample; readonly absorbed: number }> => {
    const [queue, dlq] = await Promise.all([
      readQueueCounts(sqs, queues.queueUrl),
      readQueueCounts(sqs, queues.dlqUrl),
    ]);
    const sampledAt = Date.now();
    const { oldestMessageSentAt: oldest, deduplicatedSentMessages } = reader.inspect(queues.queueUrl);
    return {
      sample: {
        backlog: queue.visible,
        inFlight: queue.inFlight,
        dlq: dlq.visible + dlq.inFlight,
        oldestMessageAgeMs: oldest === undefined ? null : Math.max(0, sampledAt - oldest),
      },
      absorbed: deduplicatedSentMessages,
    };
  };
  /** A subscriber's sample sums its lanes; each lane's goes to the lane statistics. */
  const sample = async ({ subscriber, lanes }: RunningSubscriber): Promise<[string, QueueSample]> => {
    const sampled = await Promise.all(lanes.map(sampleLane));
    const samples = sampled.map(({ sample }) => sample);
    lanes.forEach(({ lane }, index) => {
      sinks.laneStats.addQueueSample(subscriber.name, lane, samples[index] as LaneQueueSample);
    });
    countAbsorbed(
      subscriber,
      sampled.reduce((sum, { absorbed }) => sum + absorbed, 0),
    );
    return [
      subscriber.name,
      {
        backlog: samples.reduce((sum, s) => sum + s.backlog, 0),
        inFlight: samples.reduce((sum, s) => sum + s.inFlight, 0),
        dlq: samples.reduce((sum, s) => sum + s.dlq, 0),
      },
    ];
  };
  const loop = (async () => {
    while (active) {
      try {
        const [samples, quarantine] = await Promise.all([
          Promise.all(running.map(sample)),
          readQueueCounts(sqs, quarantineQueueUrl),
        ]);
        sinks.stats.addQueueSamples(Object.fromEntries(samples), quarantine.visible + quarantine.inFlight);
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

/** `LOCAL_CONSUMER`'s module, compiled once for every lane. */
function localConsumerModule(
  path: string | undefined,
  subscribers: LocalSubscribers,
): LocalConsumerModule | undefined {
  if (path === undefined) return undefined;
  let module: Promise<Record<string, unknown>> | undefined;
  return {
    path,
    import: () => {
      module ??= subscribers.importProjectModule(path);
      return module;
    },
  };
}
