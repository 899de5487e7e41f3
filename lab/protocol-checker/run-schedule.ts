/**
 * One schedule from one seed: the seed draws the settings, the fault plan and the workload; the receiver splits
 * each body into its lanes (lane-pieces.ts): a part per conversation into the message lane's FIFO queue,
 * the statuses into the status lane's standard queue. Each lane's real consumer runs under its simulated event
 * source (the message lane's built `ordered: true` with the lane's retry delays and its own dead-lettering on a
 * record's last receive, SQS redrive the net behind it, in turns with a burst window in some schedules; each
 * lane's consumer with its lane's DLQ, for the records a handler gives up on) until the schedule is quiescent
 * (every body enqueued, every message deleted or dead-lettered, no invocation running); then the invariants
 * are checked, per-conversation order among them. Same seed, same trace.
 *
 * With `outage`, the seed draws only the workload: the pipeline runs with the production defaults (timeouts,
 * visibility timeout, retry budget) and no fault but a downstream outage from the schedule's start, during
 * which every side effect refuses; every body goes whole to the status lane, whose day-long budget is what
 * such a schedule exercises (the ordered message lane gives up on a message within minutes, by design).
 */

import { SeededRandom } from '../../cli/local/seeded-random.ts';
import {
  FIFO_MAX_BATCH_SIZE,
  ORDERED_LANE_REDRIVE_MARGIN,
  ORDERED_MESSAGE_LANE_RETRY,
} from '../../contract/lanes.ts';
import type { BackoffSettings, QueueStay } from '../../contract/retry-budget.ts';
import { DEFAULT_SETTINGS, minimumRetentionDays } from '../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../contract/subscribers.ts';
import type { ConsumerConfig } from '../../functions/consumer/create-consumer.ts';
import { buildConsumer, type ConsumerVariant, receiverConversationRule } from './consumer-under-test.ts';
import { checkConversationOrder } from './conversation-order.ts';
import { DynamoDbModel } from './dynamodb/dynamodb-model.ts';
import { dynamoDbLink } from './dynamodb-link.ts';
import { CALM_PLAN, drawFaultPlan, type FaultPlan, FaultTally } from './faults.ts';
import { type FifoMessage, FifoQueue, type FifoQueueSettings } from './fifo-queue.ts';
import { checkInvariants, type InvariantReport, type Violation } from './invariants.ts';
import { type EventSourceSettings, LambdaEventSource } from './lambda-event-source.ts';
import { lanePieces } from './lane-pieces.ts';
import { type EffectRecord, ProtocolJournal } from './protocol-journal.ts';
import { ReceiverArrivals } from './receiver-arrivals.ts';
import { Scheduler } from './scheduler.ts';
import { withSeededMathRandom } from './seeded-math-random.ts';
import { route } from './simulated-clients.ts';
import { type BackendOutage, simulatedHandlers } from './simulated-handlers.ts';
import {
  DEAD_LETTER_QUEUE_URL,
  DELIVERY_QUEUE_URL,
  MESSAGE_DEAD_LETTER_QUEUE_URL,
  MESSAGE_QUEUE_URL,
  SqsLink,
  STATUS_DEAD_LETTER_QUEUE_URL,
} from './sqs-link.ts';
import { type QueueMessage, type QueueSettings, StandardQueue } from './standard-queue.ts';
import { Trace } from './trace.ts';
import { scheduleTtlSweeps } from './ttl-sweeps.ts';
import { generateWorkload, type Workload } from './workload.ts';

export const SCHEDULE_START_MS = Date.UTC(2026, 0, 5, 9, 0, 0);
const TABLE_NAME = 'claims';
const MESSAGE_QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:messages.fifo';
/** Far beyond what a quiescent schedule needs (a few hundred steps): reaching it is a liveness failure. */
export const DEFAULT_MAX_STEPS = 20_000;

export interface ScheduleOptions {
  readonly seed: number;
  readonly variant?: ConsumerVariant;
  readonly maxSteps?: number;
  readonly outage?: DownstreamOutage;
}

/** The side effects' backend is down for `durationMs` from the schedule's start. */
export interface DownstreamOutage {
  readonly durationMs: number;
  /** It answers with this Retry-After (the handler throws `RetryLater`) rather than an error. */
  readonly retryAfterSeconds?: number;
}

export interface ScheduleSettings extends EventSourceSettings {
  readonly leaseMarginMs: number;
  readonly queue: QueueSettings;
  /** The consumer's backoff of failed records, in virtual seconds. */
  readonly retry: BackoffSettings;
  /** The message lane; undefined when every body goes whole to the status lane (outage schedules). */
  readonly messageLane: MessageLaneSettings | undefined;
}

export interface MessageLaneSettings extends EventSourceSettings {
  /** Its redrive policy is the net, `ORDERED_LANE_REDRIVE_MARGIN` receives after `maxReceives`. */
  readonly queue: FifoQueueSettings;
  /** The receive on which the consumer moves a failing record to the lane's DLQ itself. */
  readonly maxReceives: number;
  readonly retry: BackoffSettings;
  /** Inbound messages go to `onConversationTurn` with this burst window; undefined: to `onMessage`. */
  readonly burstWindowMs: number | undefined;
}

export interface ScheduleResult {
  readonly seed: number;
  readonly variant: ConsumerVariant;
  readonly settings: ScheduleSettings;
  readonly plan: FaultPlan;
  readonly workload: Workload;
  readonly steps: number;
  readonly virtualMs: number;
  readonly invocations: number;
  readonly effects: number;
  /** Every side effect: its key and virtual time. */
  readonly effectRecords: readonly EffectRecord[];
  readonly deadLetteredMessages: number;
  /** The delivery queue's messages at the end (receive counts, states). */
  readonly queueMessages: readonly QueueMessage[];
  readonly faults: FaultTally;
  readonly trace: Trace;
  readonly report: InvariantReport;
  /** What the per-conversation order invariant checked (conversation-order.ts). */
  readonly order: { readonly pairsChecked: number; readonly turnsChecked: number };
  /** The invariants' violations, plus quiescence and simulator failures. */
  readonly violations: readonly Violation[];
}

export function runSchedule(options: ScheduleOptions): Promise<ScheduleResult> {
  const random = new SeededRandom(options.seed);
  // Product code draws its completion backoff from Math.random; seeding it keeps the schedule's timing exact.
  return withSeededMathRandom(random.fork('math-random'), () => simulate(options, random));
}

async function simulate(options: ScheduleOptions, random: SeededRandom): Promise<ScheduleResult> {
  const variant = options.variant ?? 'product';
  const drawnPlan = drawFaultPlan(random.fork('plan'));
  const plan =
    options.outage === undefined ? drawnPlan : { ...CALM_PLAN, metaRetries: drawnPlan.metaRetries };
  const settings =
    options.outage === undefined
      ? drawSettings(random.fork('settings'), plan, random.fork('message-lane'))
      : productionSettings();
  const outage: BackendOutage | undefined =
    options.outage === undefined
      ? undefined
      : {
          downUntil: SCHEDULE_START_MS + options.outage.durationMs,
          retryAfterSeconds: options.outage.retryAfterSeconds,
        };
  const scheduler = new Scheduler(SCHEDULE_START_MS, random.fork('ties'));
  const shared = {
    scheduler,
    plan,
    faults: new FaultTally(),
    journal: new ProtocolJournal(),
    trace: new Trace(SCHEDULE_START_MS),
  };
  const model = new DynamoDbModel();
  const queue = new StandardQueue(settings.queue, random.fork('queue'));
  const lane = settings.messageLane;
  const messageQueue = lane && new FifoQueue(lane.queue, random.fork('message-queue'));
  const workload = generateWorkload(random.fork('workload'), SCHEDULE_START_MS, {
    metaRetries: plan.metaRetries,
    unusableBodyRate: 0.05,
  });
  const pieces = lanePieces(workload.bodies, lane !== undefined, receiverConversationRule(variant));
  const arrivals = new ReceiverArrivals(pieces, {
    ...shared,
    queues: { status: queue, message: messageQueue },
  });
  scheduleTtlSweeps(
    plan.ttlSweeps,
    workload.bodies.map((body) => body.sendAt),
    { ...shared, model, tableName: TABLE_NAME, random: random.fork('ttl') },
  );
  const sqsLink = new SqsLink({
    ...shared,
    queue,
    messageQueue,
    random: random.fork('sqs'),
  });
  const clients = route({
    model,
    dynamodb: dynamoDbLink({ ...shared, model, tableName: TABLE_NAME, random: random.fork('dynamodb') }),
    sqs: sqsLink,
  });
  let run: { readonly steps: number; readonly failures: readonly Violation[] };
  try {
    const ports = {
      documentClient: clients.documentClient,
      sqs: clients.sqs,
      clock: () => scheduler.now,
      sleep: (ms: number) => scheduler.sleep(scheduler.currentWorker, ms),
    };
    const nextArrivalAt = () => arrivals.nextArrivalAt();
    const eventSources = [
      new LambdaEventSource({
        ...shared,
        queue,
        batchFunction: buildConsumer(variant, {
          ...ports,
          config: consumerConfig(settings),
          handlers: simulatedHandlers({
            ...shared,
            random: random.fork('handlers'),
            outage,
          }),
        }),
        settings,
        random: random.fork('lambda'),
        nextArrivalAt,
      }),
    ];
    if (lane !== undefined && messageQueue !== undefined) {
      eventSources.push(
        new LambdaEventSource({
          ...shared,
          queue: messageQueue,
          name: 'm',
          queueArn: MESSAGE_QUEUE_ARN,
          batchFunction: buildConsumer(variant, {
            ...ports,
            config: messageLaneConfig(settings, lane),
            handlers: simulatedHandlers({
              ...shared,
              random: random.fork('message-handlers'),
              ...(lane.burstWindowMs === undefined ? {} : { turns: { burstWindowMs: lane.burstWindowMs } }),
            }),
          }),
          settings: lane,
          random: random.fork('message-lambda'),
          nextArrivalAt,
        }),
      );
    }
    run = await runToQuiescence(
      scheduler,
      eventSources,
      () => arrivals.done() && queue.drained() && (messageQueue?.drained() ?? true),
      options.maxSteps,
    );
  } finally {
    clients.release();
  }
  // A record a consumer moved to its lane's DLQ itself is dead-lettered, though Lambda then deleted it.
  const movedAt = consumerDeadLetteredAt(shared.journal);
  const statusLaneMessages = queue.messages().map((message) => movedByConsumer(message, movedAt));
  const messageLaneMessages: FifoMessage[] = (messageQueue?.messages() ?? []).map((message) =>
    movedByConsumer(message, movedAt),
  );
  const messages = [...statusLaneMessages, ...messageLaneMessages];
  const inMessageLane = new Set<QueueMessage>(messageLaneMessages);
  const report = checkInvariants({
    // What the queues hold: each body's lane pieces, with the keys each carries.
    workload: { ...workload, bodies: pieces },
    journal: shared.journal,
    messages,
    quarantined: sqsLink.quarantined,
    finalLedgerRanks: ledgerRanks(model),
    // SQS redrive: the status queue's, or the message queue's, the net behind its consumer's own moves.
    maxReceiveCount: (message) =>
      inMessageLane.has(message) && lane !== undefined
        ? lane.queue.maxReceiveCount
        : settings.queue.maxReceiveCount,
    // The receive from which each lane's consumer moves a record that failed, given up on or not.
    consumerMaxReceives: (consumerLane) =>
      consumerLane === 'message' && lane !== undefined ? lane.maxReceives : settings.queue.maxReceiveCount,
  });
  const order = checkConversationOrder({
    journal: shared.journal,
    messages: messageLaneMessages,
    keysOf: new Map(pieces.map((piece) => [piece.bodyId, piece.keys])),
    conversations: new Map(
      [...workload.events.values()].flatMap((event) =>
        event.kind === 'message' ? [[event.key, event.conversation] as const] : [],
      ),
    ),
  });
  return {
    seed: options.seed,
    variant,
    settings,
    plan,
    workload,
    steps: run.steps,
    virtualMs: scheduler.now - SCHEDULE_START_MS,
    invocations: shared.journal.fates.size,
    effects: shared.journal.effects.length,
    effectRecords: shared.journal.effects,
    deadLetteredMessages: messages.filter((message) => message.state === 'dead-letter').length,
    queueMessages: messages,
    faults: shared.faults,
    trace: shared.trace,
    report,
    order: { pairsChecked: order.pairsChecked, turnsChecked: order.turnsChecked },
    violations: [...report.violations, ...order.violations, ...run.failures],
  };
}

/** When the DLQ first stored a consumer's copy of each queue message, by message id. */
function consumerDeadLetteredAt(journal: ProtocolJournal): Map<string, number> {
  const movedAt = new Map<string, number>();
  for (const send of journal.laneDeadLetterSends) {
    for (const entry of send.entries) {
      if (!entry.landed || entry.messageId === undefined || send.landedAt === undefined) continue;
      if (!movedAt.has(entry.messageId)) movedAt.set(entry.messageId, send.landedAt);
    }
  }
  return movedAt;
}

/** The message as the DLQ answers for it: dead-lettered by its consumer, unless SQS redrive moved it. */
function movedByConsumer<M extends QueueMessage>(message: M, movedAt: ReadonlyMap<string, number>): M {
  const at = movedAt.get(message.messageId);
  return at === undefined || message.state === 'dead-letter'
    ? message
    : { ...message, state: 'dead-letter', deadLetteredAt: at, deadLetteredBy: 'consumer' };
}

/** Steps until every body is in, every message gone and no invocation runs; a run that cannot get there fails. */
async function runToQuiescence(
  scheduler: Scheduler,
  eventSources: readonly LambdaEventSource[],
  messagesSettled: () => boolean,
  maxSteps = DEFAULT_MAX_STEPS,
): Promise<{ steps: number; failures: Violation[] }> {
  scheduler.setFireGuard((operation) => eventSources.every((source) => source.beforeFire(operation)));
  scheduler.setSettledCheck(() => eventSources.every((source) => source.settled()));
  for (const source of eventSources) source.start();
  const failures: Violation[] = [];
  let steps = 0;
  try {
    while (!(messagesSettled() && eventSources.every((source) => source.idle()))) {
      if (steps >= maxSteps) {
        failures.push({ invariant: 'quiescence', detail: `not quiescent after ${maxSteps} steps` });
        break;
      }
      if (!(await scheduler.step())) {
        failures.push({ invariant: 'quiescence', detail: 'nothing left to run, yet not quiescent' });
        break;
      }
      steps++;
      for (const source of eventSources) if (source.failure !== undefined) throw source.failure;
    }
  } catch (error) {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    failures.push({ invariant: 'simulator', detail });
  } finally {
    for (const source of eventSources) source.stop();
  }
  return { steps, failures };
}

function drawSettings(random: SeededRandom, plan: FaultPlan, laneRandom: SeededRandom): ScheduleSettings {
  const functionTimeoutMs = random.pick([3000, 5000]);
  return {
    messageLane: drawMessageLane(laneRandom, plan),
    pollers: random.int(1, 3),
    batchSize: random.pick([1, 2, 5, 10]),
    functionTimeoutMs,
    leaseMarginMs: 1000,
    queue: {
      // The project's floor: at least 6 × the function timeout (`resolveSettings`).
      visibilityTimeoutMs: 6 * functionTimeoutMs,
      maxReceiveCount: random.int(3, 5),
      duplicateDeliveryRate: plan.duplicateDeliveryRate,
      staleHandleEffectRate: plan.staleHandleEffectRate,
    },
    // Backoffs shorter and longer than the visibility timeout (18 or 30 s), in virtual seconds.
    retry: {
      retryBaseDelaySeconds: random.pick([1, 2, 5]),
      retryMaxDelaySeconds: random.pick([10, 30, 120]),
    },
  };
}

/**
 * The message lane: Lambda's FIFO event source (batches of at most 10, no window) with the ordered lane's
 * retry delays; receive budgets short enough for messages to reach the DLQ, and the lane's own; a burst window
 * in some schedules.
 */
function drawMessageLane(random: SeededRandom, plan: FaultPlan): MessageLaneSettings {
  const functionTimeoutMs = random.pick([3000, 5000]);
  const maxReceives = random.pick([3, 5, ORDERED_MESSAGE_LANE_RETRY.maxReceiveCount]);
  return {
    maxReceives,
    pollers: random.int(1, 3),
    batchSize: random.pick([1, 2, 5, FIFO_MAX_BATCH_SIZE]),
    functionTimeoutMs,
    queue: {
      visibilityTimeoutMs: 6 * functionTimeoutMs,
      maxReceiveCount: maxReceives + ORDERED_LANE_REDRIVE_MARGIN,
      staleHandleEffectRate: plan.staleHandleEffectRate,
    },
    retry: {
      retryBaseDelaySeconds: ORDERED_MESSAGE_LANE_RETRY.retryBaseDelaySeconds,
      retryMaxDelaySeconds: ORDERED_MESSAGE_LANE_RETRY.retryMaxDelaySeconds,
    },
    burstWindowMs: random.chance(0.4) ? random.pick([0, 300, 1000, 3000]) : undefined,
  };
}

/** What the construct deploys by default (`resolveSettings()`), one poller per concurrent invocation. */
function productionSettings(): ScheduleSettings {
  const s = DEFAULT_SETTINGS;
  return {
    pollers: s.maxConcurrency,
    batchSize: s.batchSize,
    functionTimeoutMs: s.consumerTimeoutSeconds * 1000,
    leaseMarginMs: s.leaseMarginMs,
    queue: {
      visibilityTimeoutMs: s.visibilityTimeoutSeconds * 1000,
      maxReceiveCount: s.maxReceiveCount,
      duplicateDeliveryRate: 0,
      staleHandleEffectRate: 0,
    },
    retry: { retryBaseDelaySeconds: s.retryBaseDelaySeconds, retryMaxDelaySeconds: s.retryMaxDelaySeconds },
    messageLane: undefined,
  };
}

function consumerConfig(settings: ScheduleSettings): ConsumerConfig {
  return {
    tableName: TABLE_NAME,
    keyNamespace: undefined,
    subscriberName: DEFAULT_SUBSCRIBER_NAME,
    fields: undefined,
    quarantineQueueUrl: DEAD_LETTER_QUEUE_URL,
    deliveryQueueUrl: DELIVERY_QUEUE_URL,
    retentionDays: smallestAcceptedRetentionDays(settings),
    leaseMarginMs: settings.leaseMarginMs,
    maximumMessageSizeBytes: 262_144,
    statusLedger: 'with-handler',
    claimUnhandledEvents: true,
    retryBaseDelaySeconds: settings.retry.retryBaseDelaySeconds,
    retryMaxDelaySeconds: settings.retry.retryMaxDelaySeconds,
    // As the construct wires it: the lane's DLQ, and its redrive's receive count.
    laneDeadLetters: { queueUrl: STATUS_DEAD_LETTER_QUEUE_URL, maxReceives: settings.queue.maxReceiveCount },
  };
}

/**
 * The smallest retention the construct accepts for these settings (`minimumRetentionDays`, the floor it
 * checks at synth): Meta's 7 days plus the longest a record may stay in either lane's queue, each counted
 * with the receives its queue allows before it redrives. The simulated event sources have no batching window.
 */
export function smallestAcceptedRetentionDays(settings: ScheduleSettings): number {
  const stay = (
    lane: EventSourceSettings & {
      readonly queue: Pick<QueueSettings, 'visibilityTimeoutMs' | 'maxReceiveCount'>;
      readonly retry: BackoffSettings;
    },
  ): QueueStay => ({
    ...lane.retry,
    maxReceiveCount: lane.queue.maxReceiveCount,
    visibilityTimeoutSeconds: lane.queue.visibilityTimeoutMs / 1000,
    consumerTimeoutSeconds: lane.functionTimeoutMs / 1000,
    maxBatchingWindowSeconds: 0,
  });
  const lane = settings.messageLane;
  return minimumRetentionDays({
    'status lane': stay(settings),
    ...(lane === undefined ? {} : { 'message lane': stay(lane) }),
  });
}

/** The message lane's consumer: the same table and claims, its own FIFO queue, ordered, its retry delays. */
function messageLaneConfig(settings: ScheduleSettings, lane: MessageLaneSettings): ConsumerConfig {
  return {
    ...consumerConfig(settings),
    deliveryQueueUrl: MESSAGE_QUEUE_URL,
    lane: 'message',
    ordered: true,
    retryBaseDelaySeconds: lane.retry.retryBaseDelaySeconds,
    retryMaxDelaySeconds: lane.retry.retryMaxDelaySeconds,
    laneDeadLetters: { queueUrl: MESSAGE_DEAD_LETTER_QUEUE_URL, maxReceives: lane.maxReceives },
  };
}

function ledgerRanks(model: DynamoDbModel): Map<string, number> {
  const ranks = new Map<string, number>();
  for (const item of model.items(TABLE_NAME)) {
    const pk = item.pk?.S;
    const rank = item.currentRank?.N;
    if (pk?.startsWith('ledger:') && rank !== undefined) ranks.set(pk, Number(rank));
  }
  return ranks;
}
