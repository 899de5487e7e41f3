/**
 * One scenario at scale (docs/capacity.md, "Simulation"): Meta's POSTs (meta-sender.ts) through API Gateway's
 * throttle and the account's Lambda concurrency into the real receiver (`receiveWebhook` with the real
 * `SubscriberFanOut`, signatures checked with HMAC), the lanes' SQS queues, Lambda's event sources and the
 * real consumer (`createConsumerHandler`, as buildConsumer('product') wires it) over the DynamoDB model with
 * the table's throughput, all in virtual time (../virtual-time/engine.ts). The settings are what a stack with default props
 * deploys (cli/capacity/pipeline.ts defaultPipeline: contract/settings.ts and contract/lanes.ts sized for
 * DEFAULT_EXPECTED_PEAK by lib/capacity-sizing.ts, as synth does) unless a scenario overrides one on purpose
 * (a control).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { defaultPipeline } from '../../cli/capacity/pipeline.ts';
import { SeededRandom } from '../../cli/local/seeded-random.ts';
import {
  API_GATEWAY_ACCOUNT_RPS,
  DEFAULT_HANDLER_MS,
  defaultWarmWriteUnits,
  LAMBDA_ACCOUNT_CONCURRENCY,
} from '../../contract/capacity.ts';
import { CLAIM_TABLE_SCHEMA } from '../../contract/claim-table-schema.ts';
import { ORDERED_LANE_REDRIVE_MARGIN } from '../../contract/lanes.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../contract/subscribers.ts';
import { storageKey } from '../../functions/claims/storage-key.ts';
import { defineWebhookHandlers, type WebhookHandlers } from '../../functions/consumer/handler-api.ts';
import { ledgerKey } from '../../functions/ledger/status-ledger.ts';
import { SqsQuarantineQueue } from '../../functions/queue/sqs-quarantine-queue.ts';
import { SubscriberFanOut } from '../../functions/queue/subscriber-fan-out.ts';
import { type ReceiverDependencies, receiveWebhook } from '../../functions/receiver/receive-webhook.ts';
import { SIGNATURE_HEADER } from '../../functions/receiver/signature.ts';
import { buildConsumer } from '../protocol-checker/consumer-under-test.ts';
import { DynamoDbModel } from '../protocol-checker/dynamodb/dynamodb-model.ts';
import { withSeededMathRandom } from '../protocol-checker/seeded-math-random.ts';
import { Engine } from '../virtual-time/engine.ts';
import { type DynamoDbCounts, SqsService, scaleDocumentClient, scaleSqsClient } from './aws-services.ts';
import { BENCH_FIGURES } from './bench-figures.ts';
import { TableThroughput } from './dynamodb-throughput.ts';
import { EventBook } from './event-book.ts';
import { EventSource } from './event-source.ts';
import { LambdaAccount } from './lambda-account.ts';
import { FifoLaneQueue, type LaneMessage, type LaneQueue, StandardLaneQueue } from './lane-queues.ts';
import { latencies } from './latency.ts';
import { LatencySeries, type NumberStatuses, type ScenarioMeasures } from './measures.ts';
import { type Answer, MetaSender } from './meta-sender.ts';
import { API_GATEWAY_ACCOUNT_BURST, ApiGatewayThrottle } from './token-bucket.ts';
import { type NumberTraffic, type TrafficEvent, TrafficGenerator } from './traffic.ts';

export const SIMULATION_START_MS = Date.UTC(2026, 5, 15, 8, 0, 0);
const TABLE_NAME = 'claims';
const ACCOUNT = '000000000000';
const queueUrl = (name: string) => `https://sqs.us-east-1.amazonaws.com/${ACCOUNT}/${name}`;
const STATUS_QUEUE_URL = queueUrl('deliveries');
const MESSAGE_QUEUE_URL = queueUrl('messages.fifo');
const MESSAGE_DLQ_URL = queueUrl('messages-dlq.fifo');
const QUARANTINE_URL = queueUrl('quarantine');
const APP_SECRET = 'simulation-app-secret';

export interface ScenarioConfig {
  readonly name: string;
  /** How long Meta sends new traffic. */
  readonly trafficMs: number;
  /**
   * The traffic is already running this long when the run starts: the statuses of messages sent before it
   * arrive from the first second, so that even a short run meets the steady rate. @default 0
   */
  readonly warmUpMs?: number;
  /**
   * Only the POSTs that fall within the traffic's window are sent (a window of steady traffic: the statuses of
   * its last messages, due after it, are left out). @default false: every status of every message is sent.
   */
  readonly windowed?: boolean;
  readonly numbers: readonly NumberTraffic[];
  /** The endpoint answers 5xx or times out during this window (ms from the start). */
  readonly outage?: { readonly fromMs: number; readonly durationMs: number };
  /** Meta's re-send rate. @default RESEND_RATE */
  readonly resendRate?: number;
  /** Controls only: a route throttle or warm throughput other than the defaults. */
  readonly overrides?: {
    readonly throttleRate?: number;
    readonly throttleBurst?: number;
    readonly warmWriteUnits?: number;
    readonly messageLaneMaxConcurrency?: number;
    readonly statusLaneMaxConcurrency?: number;
    /**
     * false: the status lane's queue hands messages out in its own order whatever their MessageGroupId (a
     * standard queue without SQS fair queues). @default true
     */
    readonly statusLaneFairQueue?: boolean;
  };
  /** The run stops this long after the traffic at the latest, drained or not. */
  readonly drainLimitMs: number;
}

const silentLogger = new Logger({ serviceName: 'scale-simulation', logLevel: 'SILENT' });
const noMetrics = { addMetric: () => undefined };

/** Each virtual second: the virtual ms gone since the start, and the lanes' backlog. */
export type ScenarioProgress = (virtualMs: number, backlog: number) => void;

export async function runScenario(
  config: ScenarioConfig,
  seed: number,
  onProgress?: ScenarioProgress,
): Promise<ScenarioMeasures> {
  const random = new SeededRandom(seed);
  return withSeededMathRandom(random.fork('math-random'), () => simulate(config, random, onProgress));
}

async function simulate(
  config: ScenarioConfig,
  random: SeededRandom,
  onProgress: ScenarioProgress | undefined,
): Promise<ScenarioMeasures> {
  const wallStart = performance.now();
  const engine = new Engine(SIMULATION_START_MS, { wholeMilliseconds: true });
  const clock = () => engine.now;
  const sleep = (ms: number) => engine.sleep(ms);
  const lat = latencies(random.fork('latency'));
  const pipeline = defaultPipeline();
  const subscriber = pipeline.subscribers[0];
  const messageLane = subscriber?.messageLane;
  if (subscriber === undefined || messageLane === undefined)
    throw new Error('The default subscriber has no message lane');
  const statusSettings = subscriber.settings;
  const laneSettings = messageLane.settings;
  const warmWriteUnits =
    config.overrides?.warmWriteUnits ?? pipeline.warmWriteUnits ?? defaultWarmWriteUnits(pipeline);
  const throttle = new ApiGatewayThrottle({
    routeRate: config.overrides?.throttleRate ?? pipeline.throttlingRateLimit,
    routeBurst: config.overrides?.throttleBurst ?? pipeline.throttlingBurstLimit,
    accountRate: API_GATEWAY_ACCOUNT_RPS,
    accountBurst: API_GATEWAY_ACCOUNT_BURST,
  });
  const account = new LambdaAccount(LAMBDA_ACCOUNT_CONCURRENCY);
  const table = new TableThroughput({ warmWriteUnits, startMs: SIMULATION_START_MS });
  const dynamoDbCounts: DynamoDbCounts = { writes: 0, reads: 0, throttledAttempts: 0, throttledCalls: 0 };
  const model = new DynamoDbModel();
  const documentClient = scaleDocumentClient({
    model,
    table,
    engine,
    latency: lat.dynamoDbWrite,
    random: random.fork('sdk-retry'),
    counts: dynamoDbCounts,
  });
  const sqsService = new SqsService(engine, lat.sqsSend);
  const statusQueue = new StandardLaneQueue(
    'status',
    {
      visibilityTimeoutMs: statusSettings.visibilityTimeoutSeconds * 1000,
      maxReceiveCount: statusSettings.maxReceiveCount,
    },
    engine,
    { fair: config.overrides?.statusLaneFairQueue ?? true },
  );
  const messageQueue = new FifoLaneQueue(
    'message',
    {
      visibilityTimeoutMs: laneSettings.visibilityTimeoutSeconds * 1000,
      maxReceiveCount: laneSettings.maxReceiveCount + (messageLane.ordered ? ORDERED_LANE_REDRIVE_MARGIN : 0),
    },
    engine,
  );
  sqsService.addQueue(STATUS_QUEUE_URL, statusQueue);
  sqsService.addQueue(MESSAGE_QUEUE_URL, messageQueue);
  sqsService.addDeadLetterQueue(MESSAGE_DLQ_URL);
  const sqs = scaleSqsClient(sqsService);

  // Effects and waits, per key, from the handlers themselves; a key's record is kept while a copy of it can
  // still reach a handler (event-book.ts), then folded into counters and its claim-table items deleted: the
  // simulator's housekeeping, outside the table's modelled throughput, for items no request can touch again.
  const deleteItem = (pk: string) =>
    model.execute('DeleteItemCommand', {
      TableName: TABLE_NAME,
      Key: { [CLAIM_TABLE_SCHEMA.partitionKey]: { S: pk } },
    });
  const book = new EventBook({
    engine,
    graceMs: Math.max(statusSettings.consumerTimeoutSeconds, laneSettings.consumerTimeoutSeconds) * 1000,
    onRetired: (key, lastOfWamid) => {
      deleteItem(storageKey(key, undefined));
      if (lastOfWamid !== undefined) deleteItem(ledgerKey(lastOfWamid));
    },
  });
  const waits = { message: new LatencySeries(), status: new LatencySeries() };
  const waitsByNumber = new Map<number, LatencySeries>();
  const statusesByNumber = new Map<number, NumberStatuses & { backlog: number }>();
  const statusesOf = (number: number) => {
    let statuses = statusesByNumber.get(number);
    if (statuses === undefined) {
      statuses = {
        waits: new LatencySeries(),
        peakBacklog: 0,
        lastAcceptedMs: 0,
        drainedMs: undefined,
        backlog: 0,
      };
      statusesByNumber.set(number, statuses);
    }
    return statuses;
  };
  const handlerRandom = random.fork('handlers');
  const effect = async (key: string, lane: 'message' | 'status') => {
    const event = book.effectStarts(key);
    const acceptedAt = event?.acceptedAt;
    const wait = engine.now - (acceptedAt ?? engine.now);
    waits[lane].add(wait);
    const number = acceptedAt === undefined ? -1 : (event?.number ?? -1);
    if (lane === 'message') {
      const series = waitsByNumber.get(number) ?? new LatencySeries();
      waitsByNumber.set(number, series);
      series.add(wait);
    } else statusesOf(number).waits.add(wait);
    // Exponential service times, as the planner's M/M/c assumes, with its DEFAULT_HANDLER_MS means.
    await sleep(-Math.log(1 - handlerRandom.next()) * DEFAULT_HANDLER_MS[lane]);
    book.effectEnds(key);
  };
  const handlers: WebhookHandlers = defineWebhookHandlers({
    onMessage: (context) => effect(context.key, 'message'),
    onStatus: (context) => effect(context.key, 'status'),
  });
  const consumerConfig = {
    tableName: TABLE_NAME,
    keyNamespace: undefined,
    subscriberName: DEFAULT_SUBSCRIBER_NAME,
    fields: undefined,
    quarantineQueueUrl: QUARANTINE_URL,
    retentionDays: statusSettings.retentionDays,
    maximumMessageSizeBytes: statusSettings.maximumMessageSizeBytes,
    statusLedger: 'with-handler' as const,
    claimUnhandledEvents: true,
  };
  const ports = { documentClient, sqs, handlers, clock, sleep };
  const statusConsumer = buildConsumer('product', {
    ...ports,
    config: {
      ...consumerConfig,
      deliveryQueueUrl: STATUS_QUEUE_URL,
      leaseMarginMs: statusSettings.leaseMarginMs,
      retryBaseDelaySeconds: statusSettings.retryBaseDelaySeconds,
      retryMaxDelaySeconds: statusSettings.retryMaxDelaySeconds,
      lane: 'status',
    },
  });
  const messageConsumer = buildConsumer('product', {
    ...ports,
    config: {
      ...consumerConfig,
      deliveryQueueUrl: MESSAGE_QUEUE_URL,
      leaseMarginMs: laneSettings.leaseMarginMs,
      retryBaseDelaySeconds: laneSettings.retryBaseDelaySeconds,
      retryMaxDelaySeconds: laneSettings.retryMaxDelaySeconds,
      lane: 'message',
      ordered: messageLane.ordered,
      laneDeadLetters: { queueUrl: MESSAGE_DLQ_URL, maxReceives: laneSettings.maxReceiveCount },
    },
  });
  const cpuMsPerRecord = BENCH_FIGURES.consumerCpuMsPerEvent;
  const sources = [
    new EventSource({
      name: 'status-consumer',
      engine,
      queue: statusQueue,
      queueArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:deliveries`,
      account,
      batchFunction: statusConsumer,
      batchSize: statusSettings.batchSize,
      batchingWindowMs: statusSettings.maxBatchingWindowSeconds * 1000,
      maxConcurrency: config.overrides?.statusLaneMaxConcurrency ?? statusSettings.maxConcurrency,
      functionTimeoutMs: statusSettings.consumerTimeoutSeconds * 1000,
      cpuMsPerRecord,
      latency: { receive: lat.sqsReceive, invoke: lat.lambdaInvoke },
    }),
    new EventSource({
      name: 'message-consumer',
      engine,
      queue: messageQueue,
      queueArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:messages.fifo`,
      account,
      batchFunction: messageConsumer,
      batchSize: laneSettings.batchSize,
      batchingWindowMs: 0,
      maxConcurrency: config.overrides?.messageLaneMaxConcurrency ?? laneSettings.maxConcurrency,
      functionTimeoutMs: laneSettings.consumerTimeoutSeconds * 1000,
      cpuMsPerRecord,
      latency: { receive: lat.sqsReceive, invoke: lat.lambdaInvoke },
    }),
  ];

  const senderRandom = random.fork('sender');
  const receiverDeps: ReceiverDependencies = {
    secrets: {
      origin: 'simulation',
      load: async () => ({ appSecrets: [APP_SECRET], verifyToken: 'simulation' }),
    },
    subscribers: [
      {
        name: DEFAULT_SUBSCRIBER_NAME,
        queueUrl: STATUS_QUEUE_URL,
        messageQueueUrl: MESSAGE_QUEUE_URL,
        messageLaneOrdered: messageLane.ordered,
      },
    ],
    fanOut: new SubscriberFanOut({
      sqs,
      maximumMessageSizeBytes: statusSettings.maximumMessageSizeBytes,
      sleep,
      clock,
      random: () => senderRandom.next(),
    }),
    quarantine: new SqsQuarantineQueue({
      sqs,
      quarantineQueueUrl: QUARANTINE_URL,
      maximumMessageSizeBytes: statusSettings.maximumMessageSizeBytes,
      sleep,
      clock,
      random: () => senderRandom.next(),
    }),
    metrics: noMetrics,
    logger: silentLogger,
    clock,
  };
  const outage = config.outage;
  // The event each POST under way carries, by request id (the receiver's messages carry it as `deliveryId`).
  const deliveries = new Map<string, string>();
  const tag = (message: LaneMessage) => {
    const key = deliveries.get(message.attributes.deliveryId?.StringValue ?? '');
    if (key === undefined) {
      const error = new Error(`A lane message ${message.messageId} of no POST under way.`);
      engine.failure ??= error;
      throw error;
    }
    message.tag = key;
    book.enqueued(key);
  };
  messageQueue.onSent(tag);
  messageQueue.onLeft((message) => book.left(message.tag as string));
  // The status lane's backlog per number, and when it emptied after the number's last status.
  statusQueue.onSent((message) => {
    tag(message);
    const statuses = statusesOf(book.numberOf(message.tag as string));
    statuses.backlog++;
    statuses.peakBacklog = Math.max(statuses.peakBacklog, statuses.backlog);
  });
  statusQueue.onLeft((message) => {
    const key = message.tag as string;
    const statuses = statusesOf(book.numberOf(key));
    if (--statuses.backlog === 0) statuses.drainedMs ??= engine.now - SIMULATION_START_MS;
    book.left(key);
  });
  let requestIds = 0;
  let receiverMs = 0;
  let receiverInvocations = 0;
  const endpoint = {
    post: async (body: string, signature: string, event: TrafficEvent): Promise<Answer> => {
      const start = engine.now;
      const offset = start - SIMULATION_START_MS;
      if (outage !== undefined && offset >= outage.fromMs && offset < outage.fromMs + outage.durationMs) {
        // Half the failures answer 5xx at once, half time out (HTTP API's 30 s integration timeout).
        await sleep(senderRandom.chance(0.5) ? lat.apiGateway.draw() : 30_000);
        return { status: 503, ackMs: engine.now - start };
      }
      if (!throttle.admit(engine.now)) return { status: 429, ackMs: lat.apiGateway.draw() };
      await sleep(lat.apiGateway.draw() / 2);
      if (!account.acquire('receiver')) {
        // HTTP API answers a throttled Lambda integration with a 5xx.
        await sleep(lat.apiGateway.draw() / 2);
        return { status: 500, ackMs: engine.now - start };
      }
      const invokedAt = engine.now;
      let status: number;
      let requestId: string | undefined;
      try {
        await sleep(lat.lambdaInvoke.draw() + BENCH_FIGURES.receiverCpuMsPerPost);
        requestId = `req-${++requestIds}`;
        deliveries.set(requestId, event.key);
        const response = await receiveWebhook(
          {
            method: 'POST',
            path: '/webhook',
            query: {},
            headers: { [SIGNATURE_HEADER]: signature, 'content-type': 'application/json' },
            body,
            requestId,
          },
          receiverDeps,
        );
        status = response.statusCode;
      } finally {
        if (requestId !== undefined) deliveries.delete(requestId);
        receiverMs += engine.now - invokedAt;
        receiverInvocations++;
        account.release('receiver');
      }
      await sleep(lat.apiGateway.draw() / 2);
      return { status, ackMs: engine.now - start };
    },
  };
  const sender = new MetaSender({
    engine,
    random: senderRandom.fork('meta'),
    endpoint,
    appSecret: APP_SECRET,
    ...(config.resendRate === undefined ? {} : { resendRate: config.resendRate }),
    onAccepted: (event: TrafficEvent) => {
      if (!book.accepted(event.key) || event.lane !== 'status') return;
      const statuses = statusesOf(event.number);
      statuses.lastAcceptedMs = engine.now - SIMULATION_START_MS;
      statuses.drainedMs = statuses.backlog === 0 ? statuses.lastAcceptedMs : undefined;
    },
    onDone: (event: TrafficEvent) => book.metaDone(event.key),
  });
  const send = (event: TrafficEvent) => {
    book.register(event);
    sender.schedule(event);
  };

  // Traffic, one second ahead at a time; backlogs sampled every second.
  const generator = new TrafficGenerator(config.numbers, random.fork('traffic'));
  const queues: Record<'message' | 'status', LaneQueue> = { message: messageQueue, status: statusQueue };
  const backlog = { message: [] as number[], status: [] as number[] };
  const trafficEnds = SIMULATION_START_MS + config.trafficMs;
  const within = (event: TrafficEvent) =>
    event.at >= SIMULATION_START_MS && (config.windowed !== true || event.at < trafficEnds);
  const planSecond = (second: number) => {
    const startMs = SIMULATION_START_MS + second * 1000;
    if (startMs >= trafficEnds) return;
    engine.at(startMs, () => {
      for (const event of generator.second(startMs)) if (within(event)) send(event);
      planSecond(second + 1);
    });
  };
  // Meta sent these before the run began: only their updates due from its start on are POSTed.
  for (let second = -Math.ceil((config.warmUpMs ?? 0) / 1000); second < 0; second++) {
    for (const event of generator.second(SIMULATION_START_MS + second * 1000)) if (within(event)) send(event);
  }
  planSecond(0);
  const sample = () => {
    backlog.message.push(queues.message.backlog);
    backlog.status.push(queues.status.backlog);
    book.sweep();
    onProgress?.(engine.now - SIMULATION_START_MS, queues.message.backlog + queues.status.backlog);
    if (engine.now < SIMULATION_START_MS + config.trafficMs + config.drainLimitMs) engine.after(1000, sample);
  };
  engine.after(0, sample);
  // Warmed-up traffic has been running: its event sources have scaled already.
  for (const source of sources) source.start({ scaled: (config.warmUpMs ?? 0) > 0 });
  const quiet = () =>
    engine.now > trafficEnds &&
    sender.counts.pending === 0 &&
    statusQueue.backlog === 0 &&
    messageQueue.backlog === 0;
  const outcome = await engine.run({ untilMs: trafficEnds + config.drainLimitMs, stop: quiet });
  for (const source of sources) source.stop();

  const totals = book.totals();
  const liveAtEnd = book.live;
  // Every item the run wrote belongs to an event the bookkeeping followed: none is left once all are folded.
  book.retireAll();
  const unaccountedItems = model.items(TABLE_NAME).length;
  const [statusSource, messageSource] = sources as [EventSource, EventSource];
  return {
    scenario: config.name,
    seed: random.seed,
    virtualMs: outcome.endedAt - SIMULATION_START_MS,
    wallMs: performance.now() - wallStart,
    instants: outcome.instants,
    drained: quiet(),
    sender: { ...sender.counts },
    ackLatencies: sender.ackLatencies,
    waits,
    waitsByNumber,
    statusesByNumber: new Map(
      [...statusesByNumber].map(([number, { backlog: _, ...statuses }]) => [number, statuses]),
    ),
    backlog,
    dynamoDb: { ...dynamoDbCounts, throttledByPartition: table.throttledByPartition, warmWriteUnits },
    deadLetters: {
      statusLane: statusQueue.deadLettered,
      messageLane: messageQueue.deadLettered + sqsService.movedToDeadLetter,
      quarantined: sqsService.quarantined,
    },
    fifoDeduplicated: messageQueue.deduplicated,
    duplicateAcceptances: totals.duplicateAcceptances,
    effects: {
      keys: totals.keys,
      effected: totals.effected,
      missing: totals.missing,
      repeated: totals.repeated,
      violations: totals.violations,
      queuedAtEnd: statusQueue.backlog + messageQueue.backlog,
    },
    bookkeeping: {
      peakLiveEvents: book.peakLive,
      liveEventsAtEnd: liveAtEnd,
      lateEffects: totals.lateEffects,
      unaccountedItems,
    },
    lambda: {
      peak: account.peak,
      receiverPeak: account.peakOf('receiver'),
      statusPeak: account.peakOf('status-consumer'),
      messagePeak: account.peakOf('message-consumer'),
      throttles: account.throttles,
      receiverInvocations,
      receiverMs,
      consumerInvocations: statusSource.invocations + messageSource.invocations,
      consumerMs: statusSource.invocationMs + messageSource.invocationMs,
      statusInvocations: statusSource.invocations,
      messageInvocations: messageSource.invocations,
      statusRecords: statusSource.records,
      messageRecords: messageSource.records,
      statusMs: statusSource.invocationMs,
      messageMs: messageSource.invocationMs,
    },
    sqsRequests: {
      standard: sqsService.requests.standard + statusSource.invocations * 2,
      fifo: sqsService.requests.fifo + messageSource.invocations * 2,
    },
    trafficMs: config.trafficMs,
  };
}
