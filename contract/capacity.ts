/**
 * The capacity model (docs/capacity.md): from an expected peak of WhatsApp traffic and the pipeline's settings,
 * every limit on a webhook's path with the figure it must carry, each lane's M/M/c queue (contract/erlang-c.ts),
 * and the settings and quotas that cannot carry the peak, named with the figure that fails.
 *
 * `npm run capacity` (cli/capacity/) prints it; the construct's `expectedPeak` sizes from it. Plain TypeScript:
 * no aws-cdk-lib, no AWS SDK.
 */

import { erlangB, meanWaitSeconds, utilisation, waitPercentileSeconds } from './erlang-c.ts';
import { type ForwardLaneInFlight, forwardInFlightShare, forwardLaneInFlight } from './forwarding.ts';
import { FIFO_MAX_BATCH_SIZE, type LaneName, MESSAGE_LANE_FIELD } from './lanes.ts';
import type { PipelineSettings } from './settings.ts';
import type { StatusLedgerMode } from './status-ledger-mode.ts';
import type { ResolvedSubscriber } from './subscribers.ts';

// Meta's figures (docs/capacity.md, "The model"): a number's throughput tiers and the sizing BSPs quote for a
// webhook endpoint.
/** Messages/s per business phone number by default. https://developers.facebook.com/docs/whatsapp/cloud-api/overview#throughput */
export const META_DEFAULT_MESSAGES_PER_SECOND = 80;
/** Messages/s per number after the automatic upgrade. https://developers.facebook.com/docs/whatsapp/cloud-api/overview#throughput */
export const META_UPGRADED_MESSAGES_PER_SECOND = 1_000;
/**
 * Webhook POSTs per outbound message: its sent, delivered and read statuses, one update per POST since Meta does
 * not guarantee batching. https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks
 */
export const POSTS_PER_OUTBOUND_MESSAGE = 3;
/** Webhook POSTs per inbound message. */
export const POSTS_PER_INBOUND_MESSAGE = 1;

/**
 * The webhook's front door (docs/design.md §4): an API Gateway HTTP API in front of the receiver, or the
 * receiver's own Lambda function URL. Both give Meta the same answers; they differ in what throttles, what it
 * costs and what can stand in front (docs/decisions.md, "Front door").
 */
export const WEBHOOK_ENDPOINTS = ['http-api', 'function-url'] as const;
export type WebhookEndpoint = (typeof WEBHOOK_ENDPOINTS)[number];
export const DEFAULT_WEBHOOK_ENDPOINT: WebhookEndpoint = 'http-api';

// AWS limits, default values.
/** Lambda concurrent executions per account and Region. https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html */
export const LAMBDA_ACCOUNT_CONCURRENCY = 1_000;
/**
 * Concurrency Lambda keeps unreserved in every account and Region: reservations may take the rest, no more.
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html
 */
export const LAMBDA_MIN_UNRESERVED_CONCURRENCY = 100;
/**
 * Requests/s Lambda serves per unit of a function's concurrency: a function URL's rate limit is 10 × the
 * receiver's reserved concurrency, beyond which Lambda answers 429.
 * https://docs.aws.amazon.com/lambda/latest/dg/urls-configuration.html
 */
export const LAMBDA_REQUESTS_PER_SECOND_PER_CONCURRENCY = 10;
/**
 * API Gateway requests/s per account and Region, shared by every API. https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html
 */
export const API_GATEWAY_ACCOUNT_RPS = 10_000;
/**
 * A new on-demand table's warm write throughput (write units/s); above twice the previous peak within 30 minutes
 * it may throttle. https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html
 */
export const DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS = 4_000;
/** On-demand write units/s per table, default quota. https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html */
export const DYNAMODB_TABLE_WRITE_UNITS_QUOTA = 40_000;
/** Write units/s one partition (one key's) takes. https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html */
export const DYNAMODB_PARTITION_WRITE_UNITS = 1_000;
/**
 * The SQS event source starts at 5 concurrent batches and adds up to 300 per minute; `maxConcurrency` is at most
 * 1,000. https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
 */
export const EVENT_SOURCE_INITIAL_CONCURRENCY = 5;
export const EVENT_SOURCE_CONCURRENCY_ADDED_PER_MINUTE = 300;
export const EVENT_SOURCE_MAX_CONCURRENCY = 1_000;

// The model's assumptions where a user gives nothing.
/**
 * Milliseconds of one claim-table write (claim, complete, ledger): DynamoDB answers in single-digit
 * milliseconds. https://aws.amazon.com/dynamodb/
 */
export const DEFAULT_CLAIM_WRITE_MS = 5;
/** A handler's duration per record: one call to a downstream API in the same Region. */
export const DEFAULT_HANDLER_MS: Readonly<Record<LaneName, number>> = { message: 50, status: 10 };
/** The receiver's billed duration per POST, as docs/cost.md assumes (cli/cost/stack-cost.ts ASSUMPTIONS). */
export const DEFAULT_RECEIVER_MS = 40;
/** Active conversations: those whose customer wrote within this many seconds (they bound the FIFO lane). */
export const ACTIVE_CONVERSATION_SECONDS = 60;
/** The route's burst must hold this many seconds of the peak (Poisson arrivals bunch; Meta retries in bursts). */
export const BURST_SECONDS_OF_PEAK = 1;
/**
 * The share of the peak's POSTs a function URL's reserved concurrency may turn away (Erlang B, which holds
 * whatever the distribution of the receiver's durations): one in a thousand, each a 429 that Meta retries late.
 */
export const RECEIVER_BLOCKING_TARGET = 0.001;
/**
 * The p99 wait each lane must keep at its peak: a person waits for a message (Meta's endpoint guidance is under
 * 1 % above 1 s); a status only feeds a ledger or a report, and a minute late harms nobody.
 */
export const P99_WAIT_TARGET_SECONDS: Readonly<Record<LaneName, number>> = { message: 1, status: 60 };
/**
 * The utilisation a sized lane stays within. The M/M/c p99 holds in a steady state; a lane near ρ = 1 meets its
 * p99 on paper but takes minutes to work off any burst above its mean (a minute of Poisson arrivals, Meta's
 * retries after a blip, a slow downstream), so the sizing keeps a fifth of its drain spare.
 */
export const MAX_SIZED_UTILISATION = 0.8;

/**
 * What a lane's consumers write at most, at `concurrency` full batches: the claim table's warm throughput must
 * take it, since a lane catching up on a backlog writes at its drain rate, not at the peak's mean.
 */
export function drainWriteUnits(lane: LanePlan, concurrency = lane.usableConcurrency): number {
  return ((concurrency * lane.batchSize) / lane.fullBatchSeconds) * lane.writesPerEvent;
}

/** What the lanes write at most together, each at `concurrencyOf` it (by default its usable concurrency). */
function lanesDrainWriteUnits(
  lanes: readonly LanePlan[],
  concurrencyOf: (lane: LanePlan) => number = (lane) => lane.usableConcurrency,
): number {
  return Math.ceil(lanes.reduce((sum, lane) => sum + drainWriteUnits(lane, concurrencyOf(lane)), 0));
}

/** The concurrency a lane runs at once sized for its peak: its own, or what its p99 needs when that is more. */
export function sizedConcurrency(lane: LanePlan): number {
  return Math.max(lane.usableConcurrency, lane.neededConcurrency ?? 0);
}

export interface ExpectedPeak {
  /**
   * Outbound messages/s per number (each brings 3 status POSTs). Required.
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { expectedPeak: { messagesPerSecond: 80 } });
   * ```
   */
  readonly messagesPerSecond: number;
  /**
   * Inbound messages/s per number.
   * @default messagesPerSecond (a chat answers what it receives)
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   expectedPeak: { messagesPerSecond: 200, inboundPerSecond: 20 }, // campaigns: few replies
   * });
   * ```
   */
  readonly inboundPerSecond?: number;
  /**
   * Business phone numbers sending at that rate, each on the same webhook.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { expectedPeak: { messagesPerSecond: 80, numbers: 10 } });
   * ```
   */
  readonly numbers?: number;
  /**
   * Conversations open at once at the peak, over all numbers: an ordered message lane runs at most one batch
   * per conversation at a time, so they bound its useful concurrency.
   * @default - all numbers' inbound messages/s × ACTIVE_CONVERSATION_SECONDS (60): those whose customer wrote
   *   within the last minute
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   expectedPeak: { messagesPerSecond: 80, activeConversations: 500 },
   * });
   * ```
   */
  readonly activeConversations?: number;
}

/**
 * The peak the construct sizes for when no `expectedPeak` is given: one number at Meta's top tier, with as many
 * inbound messages as outbound (docs/decisions.md, "The defaults carry one number at Meta's top tier, sized by
 * the planner").
 */
export const DEFAULT_EXPECTED_PEAK: ExpectedPeak = { messagesPerSecond: META_UPGRADED_MESSAGES_PER_SECOND };

/** One subscriber as the model sees it: its lanes' settings and what its handlers write. */
export interface CapacitySubscriber {
  readonly name: string;
  /** `undefined`: every field. */
  readonly fields: readonly string[] | undefined;
  /** The status lane's settings (the subscriber's own). */
  readonly settings: PipelineSettings;
  readonly messageLane: { readonly ordered: boolean; readonly settings: PipelineSettings } | undefined;
  /** Which of its handlers exist: `onMessage` (or `onConversationTurn`) and `onStatus`. */
  readonly handles: Readonly<Record<LaneName, boolean>>;
  /** @default 'with-handler' */
  readonly statusLedger?: StatusLedgerMode;
  /** @default true */
  readonly claimUnhandledEvents?: boolean;
  /**
   * A forward subscriber's `maxInFlight` (contract/forwarding.ts): each lane's `maxConcurrency` is capped at its
   * share, and one invocation runs at most the share over its concurrency of handlers at once.
   * @default - no bound
   */
  readonly maxInFlight?: number;
}

export interface CapacityPipeline {
  /** @default DEFAULT_WEBHOOK_ENDPOINT */
  readonly endpoint?: WebhookEndpoint;
  /** The HTTP API's route throttle (`http-api` only). */
  readonly throttlingRateLimit: number;
  readonly throttlingBurstLimit: number;
  /**
   * The receiver's reserved concurrency, a function URL's throttle (`function-url` only).
   * @default - what the peak needs: `receiverReservedConcurrencyFor`
   */
  readonly receiverReservedConcurrency?: number;
  readonly subscribers: readonly CapacitySubscriber[];
  /** @default DEFAULT_HANDLER_MS */
  readonly handlerMs?: Partial<Record<LaneName, number>>;
  /** @default DEFAULT_RECEIVER_MS */
  readonly receiverMs?: number;
  /** @default DEFAULT_CLAIM_WRITE_MS */
  readonly claimWriteMs?: number;
  /**
   * The claim table's warm write units/s.
   * @default what the construct sets without `expectedPeak`: `defaultWarmWriteUnits(pipeline)`
   */
  readonly warmWriteUnits?: number;
}

export interface CapacityTraffic {
  readonly numbers: number;
  readonly outboundPerSecond: number;
  readonly inboundPerSecond: number;
  readonly postsPerSecond: number;
  readonly statusesPerSecond: number;
  readonly activeConversations: number;
}

export type LimitKind = 'setting' | 'quota';

/** One limit on the path: what it allows, what the peak needs of it, and whether it carries it. */
export interface CapacityLimit {
  readonly name: string;
  /** The construct setting or the account quota to raise. */
  readonly setting: string;
  readonly kind: LimitKind;
  readonly allows: number;
  readonly needs: number;
  readonly unit: string;
  readonly carries: boolean;
  readonly source?: string;
  readonly subscriber?: string;
  readonly lane?: LaneName;
  /** How `allows` is formed, when it is not a setting's value. */
  readonly formula?: string;
}

export interface LanePlan {
  readonly subscriber: string;
  readonly lane: LaneName;
  readonly ordered: boolean;
  /** λ: events/s into the lane. */
  readonly eventsPerSecond: number;
  readonly maxConcurrency: number;
  /** The concurrency the lane can use: `maxConcurrency`, bounded by active conversations on a FIFO lane. */
  readonly usableConcurrency: number;
  readonly batchSize: number;
  readonly batchingWindowSeconds: number;
  /** Records per batch at this λ (what the consumer's invocations, and so their cost, are counted from). */
  readonly batchFill: number;
  /** One invocation's duration at `batchFill` records (CPU, claims, handlers, completion, ledger): billed. */
  readonly batchSeconds: number;
  /** S of the queue: a poller's time for a full batch, its receive, invoke and delete included. */
  readonly fullBatchSeconds: number;
  /** Events/s the lane drains with full batches at its usable concurrency. */
  readonly drainPerSecond: number;
  /** ρ of the M/M/c queue of batches. */
  readonly utilisation: number;
  /** Mean events waiting (Little's law); `undefined` when the lane cannot keep up. */
  readonly backlogEvents: number | undefined;
  /** Events/s the backlog grows by when ρ ≥ 1, else 0. */
  readonly backlogGrowthPerSecond: number;
  /** From enqueue to the batch's start: the Erlang C wait plus the batch's filling. */
  readonly meanWaitSeconds: number | undefined;
  readonly p99WaitSeconds: number | undefined;
  /**
   * The smallest `maxConcurrency` whose p99 wait meets P99_WAIT_TARGET_SECONDS at a utilisation within
   * MAX_SIZED_UTILISATION (undefined beyond the limits).
   */
  readonly neededConcurrency: number | undefined;
  readonly claimWriteUnitsPerSecond: number;
  /** Claim-table writes per event of the lane (writesPerEvent). */
  readonly writesPerEvent: number;
  /** Seconds for the event source to ramp from its first batches to `usableConcurrency`. */
  readonly rampSeconds: number;
}

export interface CapacityPlan {
  readonly endpoint: WebhookEndpoint;
  readonly traffic: CapacityTraffic;
  /** The receiver's mean concurrency at the peak (Little's law: POSTs/s × its duration). */
  readonly receiverConcurrency: number;
  readonly claimWriteUnitsPerSecond: number;
  readonly limits: readonly CapacityLimit[];
  readonly lanes: readonly LanePlan[];
  /** One line per limit that does not carry the peak, naming it and the failing figure. */
  readonly problems: readonly string[];
  /** The settings that carry the peak: what `expectedPeak` sizes, and what to set by hand otherwise. */
  readonly sizing: CapacitySizing;
}

export interface CapacitySizing {
  /** The HTTP API's route throttle that carries the peak. */
  readonly throttlingRateLimit: number;
  readonly throttlingBurstLimit: number;
  /** The receiver's reserved concurrency a function URL needs for the peak (`receiverReservedConcurrencyFor`). */
  readonly receiverReservedConcurrency: number;
  /** Per lane, the smallest `maxConcurrency` meeting its p99 target (`undefined`: none up to the maximum). */
  readonly maxConcurrency: readonly {
    readonly subscriber: string;
    readonly lane: LaneName;
    readonly value: number | undefined;
  }[];
  /** The claim table's warm write throughput (`WarmThroughput.WriteUnitsPerSecond`). */
  readonly warmWriteUnitsPerSecond: number;
  /**
   * Account concurrency the stack uses at the peak, to compare with the Lambda quota: with a function URL the
   * receiver's reservation, which the account holds for it whether it runs or not.
   */
  readonly lambdaConcurrency: number;
}

/**
 * Handlers assumed where the entry cannot be read (the construct bundles it, never imports it): both, the
 * costlier case, since a status with `onStatus` costs a ledger write more.
 */
export const ASSUMED_HANDLERS: Readonly<Record<LaneName, boolean>> = { message: true, status: true };

/** The model's view of resolved subscribers (contract/subscribers.ts), for the construct and the planner. */
export function capacitySubscribers(
  subscribers: readonly ResolvedSubscriber[],
  handles: (subscriber: ResolvedSubscriber) => Readonly<Record<LaneName, boolean>> = () => ASSUMED_HANDLERS,
): CapacitySubscriber[] {
  return subscribers.map((subscriber) => ({
    name: subscriber.name,
    fields: subscriber.fields,
    settings: subscriber.settings,
    messageLane: subscriber.messageLane,
    handles: handles(subscriber),
    statusLedger: subscriber.statusLedger,
    claimUnhandledEvents: subscriber.claimUnhandledEvents,
    ...(subscriber.forward?.maxInFlight === undefined ? {} : { maxInFlight: subscriber.forward.maxInFlight }),
  }));
}

/**
 * What a forward subscriber's `maxInFlight` leaves one of its lanes (its share, its capped concurrency and the
 * POSTs of one invocation); `undefined` without `maxInFlight`.
 */
export function laneInFlight(
  subscriber: CapacitySubscriber,
  lane: LaneName,
): ForwardLaneInFlight | undefined {
  if (subscriber.maxInFlight === undefined) return undefined;
  const settings = lane === 'message' ? subscriber.messageLane?.settings : subscriber.settings;
  if (settings === undefined) return undefined;
  const share = forwardInFlightShare(subscriber.maxInFlight, lane, subscriber.messageLane !== undefined);
  return forwardLaneInFlight(share, settings.maxConcurrency);
}

export function peakTraffic(peak: ExpectedPeak): CapacityTraffic {
  const numbers = peak.numbers ?? 1;
  const perNumberIn = peak.inboundPerSecond ?? peak.messagesPerSecond;
  for (const [name, value] of Object.entries({
    messagesPerSecond: peak.messagesPerSecond,
    inboundPerSecond: perNumberIn,
    numbers,
  })) {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a finite number >= 0.`);
  }
  if (!Number.isInteger(numbers) || numbers < 1) throw new RangeError('numbers must be a whole number >= 1.');
  const outboundPerSecond = numbers * peak.messagesPerSecond;
  const inboundPerSecond = numbers * perNumberIn;
  const statusesPerSecond = POSTS_PER_OUTBOUND_MESSAGE * outboundPerSecond;
  return {
    numbers,
    outboundPerSecond,
    inboundPerSecond,
    statusesPerSecond,
    postsPerSecond: statusesPerSecond + POSTS_PER_INBOUND_MESSAGE * inboundPerSecond,
    activeConversations:
      peak.activeConversations ?? Math.ceil(inboundPerSecond * ACTIVE_CONVERSATION_SECONDS),
  };
}

/** Claim-table writes per event (docs/design.md §2, §3): claim and completion, and the status ledger's. */
export function writesPerEvent(subscriber: CapacitySubscriber, lane: LaneName): number {
  const handled = subscriber.handles[lane];
  const claimUnhandled = subscriber.claimUnhandledEvents ?? true;
  if (lane === 'message') return handled ? 2 : claimUnhandled ? 1 : 0;
  const ledger = handled || subscriber.statusLedger === 'always';
  // A status with the ledger is claimed, written to the ledger and completed (docs/design.md §2).
  if (ledger) return 3;
  return claimUnhandled ? 1 : 0;
}

/**
 * The consumer's CPU per record on one Node thread. The records of a batch share one thread, so their CPU adds
 * up even where their awaits overlap. A fixed engineering figure, not a measurement this code reads: 1.1 ms is
 * the consumer's median on a quiet machine (docs/decisions.md, "The consumer's CPU per record is a reviewed
 * constant"), and no bench run moves it, since a laptop's load would otherwise change the concurrency a stack
 * deploys. The bench reports its own figure beside this one.
 */
export const CONSUMER_CPU_MS_PER_RECORD = 1.1;
/**
 * The event source's ReceiveMessage before a batch and its DeleteMessageBatch after it, each, from a Lambda in
 * the same Region (a median): a poller spends both on every batch. https://softwaremill.com/amazon-sqs-performance-latency/
 */
export const EVENT_SOURCE_SQS_CALL_MS = 10;
/** A warm invoke from the event source to the handler (a median). https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html */
export const LAMBDA_INVOKE_MS = 2;

/**
 * How much longer than one record the slowest of `records` takes, its records' handler times being exponential
 * (the M/M/c assumption): the harmonic number H(n), between whole numbers linearly.
 */
export function slowestOf(records: number): number {
  const whole = Math.max(1, Math.floor(records));
  let harmonic = 0;
  for (let k = 1; k <= whole; k++) harmonic += 1 / k;
  return harmonic + Math.max(0, records - whole) / (whole + 1);
}

/**
 * How many handler times a batch of `records` lasts when at most `parallel` of its handlers run at once: the
 * slowest of them when all run together, else `records / parallel` rounds of the slowest of `parallel`.
 */
export function handlerRounds(records: number, parallel = Number.POSITIVE_INFINITY): number {
  if (records <= parallel) return slowestOf(records);
  return (records / parallel) * slowestOf(parallel);
}

/**
 * One invocation's duration (what Lambda bills) for a batch of `records`: their CPU one after the other on the
 * function's thread, then the claim writes and the handler, which a batch runs for its records in parallel (one
 * record per conversation on a FIFO lane at the peak), so that the batch lasts until its slowest handler is done;
 * a forward subscriber's `maxInFlight` lets only so many of them run at once.
 */
export function batchSeconds(
  subscriber: CapacitySubscriber,
  lane: LaneName,
  handlerMs: number,
  claimWriteMs: number,
  records = 1,
): number {
  const writes = writesPerEvent(subscriber, lane);
  const parallel = laneInFlight(subscriber, lane)?.postsPerInvocation;
  const handler = subscriber.handles[lane] ? handlerMs * handlerRounds(records, parallel) : 0;
  return (records * CONSUMER_CPU_MS_PER_RECORD + Math.max(1, writes) * claimWriteMs + handler) / 1000;
}

/** A poller's time per batch: its receive, the invoke, the invocation, and the delete of what succeeded. */
export function pollerSeconds(invocationSeconds: number): number {
  return invocationSeconds + (2 * EVENT_SOURCE_SQS_CALL_MS + LAMBDA_INVOKE_MS) / 1000;
}

function planLane(
  subscriber: CapacitySubscriber,
  lane: LaneName,
  settings: PipelineSettings,
  ordered: boolean,
  eventsPerSecond: number,
  traffic: CapacityTraffic,
  handlerMs: number,
  claimWriteMs: number,
): LanePlan {
  const batchSize = ordered ? Math.min(settings.batchSize, FIFO_MAX_BATCH_SIZE) : settings.batchSize;
  const window = ordered ? 0 : settings.maxBatchingWindowSeconds;
  const usableConcurrency = Math.max(
    1,
    ordered ? Math.min(settings.maxConcurrency, traffic.activeConversations) : settings.maxConcurrency,
  );
  const invocation = (records: number) => batchSeconds(subscriber, lane, handlerMs, claimWriteMs, records);
  // Each poller takes what arrived for it during its window and its previous batch, up to the batch size; the
  // batch's own time grows with what it takes, so settle the two together (the map is monotone and bounded).
  let batchFill = 1;
  for (let step = 0; step < 50; step++) {
    const next = Math.min(
      batchSize,
      Math.max(1, (eventsPerSecond * (window + pollerSeconds(invocation(batchFill)))) / usableConcurrency),
    );
    if (Math.abs(next - batchFill) < 1e-9) break;
    batchFill = next;
  }
  const seconds = invocation(batchFill);
  // Queued events leave in full batches: the queue's service time is a poller's time for a full one.
  const fullBatchSeconds = pollerSeconds(invocation(batchSize));
  // With a window, a batch starts when it is full or when the window ends, whichever comes first.
  const fillSeconds =
    window === 0 || eventsPerSecond === 0
      ? 0
      : Math.min(window, (batchSize * usableConcurrency) / eventsPerSecond);
  const drainPerSecond = (usableConcurrency * batchSize) / fullBatchSeconds;
  const waits = (servers: number) => {
    // Queued events go in full batches (a poller takes what waits), so the queue is one of batches of `batchSize`:
    // ρ = λ / drain. At low load most events find an idle poller and hardly wait, whatever the batches hold.
    const model = {
      arrivalRatePerSecond: eventsPerSecond / batchSize,
      meanServiceSeconds: fullBatchSeconds,
      servers,
    };
    const rho = utilisation(model);
    if (rho >= 1) return { rho, mean: undefined, p99: undefined };
    return {
      rho,
      mean: meanWaitSeconds(model) + fillSeconds / 2,
      p99: waitPercentileSeconds(model, 0.99) + fillSeconds,
    };
  };
  const own = waits(usableConcurrency);
  const target = P99_WAIT_TARGET_SECONDS[lane];
  let neededConcurrency: number | undefined;
  const most = ordered
    ? Math.min(EVENT_SOURCE_MAX_CONCURRENCY, traffic.activeConversations)
    : EVENT_SOURCE_MAX_CONCURRENCY;
  for (let c = 2; c <= most; c++) {
    const { rho, p99 } = waits(c);
    if (p99 !== undefined && p99 <= target && rho <= MAX_SIZED_UTILISATION) {
      neededConcurrency = c;
      break;
    }
  }
  const writeUnits = eventsPerSecond * writesPerEvent(subscriber, lane);
  return {
    subscriber: subscriber.name,
    lane,
    ordered,
    eventsPerSecond,
    maxConcurrency: settings.maxConcurrency,
    usableConcurrency,
    batchSize,
    batchingWindowSeconds: window,
    batchFill,
    batchSeconds: seconds,
    fullBatchSeconds,
    drainPerSecond,
    utilisation: own.rho,
    backlogEvents: own.mean === undefined ? undefined : eventsPerSecond * own.mean,
    backlogGrowthPerSecond: own.mean === undefined ? Math.max(0, eventsPerSecond - drainPerSecond) : 0,
    meanWaitSeconds: own.mean,
    p99WaitSeconds: own.p99,
    neededConcurrency,
    claimWriteUnitsPerSecond: writeUnits,
    writesPerEvent: writesPerEvent(subscriber, lane),
    rampSeconds:
      (Math.max(0, usableConcurrency - EVENT_SOURCE_INITIAL_CONCURRENCY) /
        EVENT_SOURCE_CONCURRENCY_ADDED_PER_MINUTE) *
      60,
  };
}

function wantsMessagesField(fields: readonly string[] | undefined): boolean {
  // Meta sends both `messages[]` and `statuses[]` under the `messages` field.
  return fields === undefined || fields.includes(MESSAGE_LANE_FIELD);
}

/** The lanes of every subscriber at the peak. */
export function planLanes(peak: ExpectedPeak, pipeline: CapacityPipeline): LanePlan[] {
  const traffic = peakTraffic(peak);
  const claimWriteMs = pipeline.claimWriteMs ?? DEFAULT_CLAIM_WRITE_MS;
  const handlerMs = { ...DEFAULT_HANDLER_MS, ...pipeline.handlerMs };
  return pipeline.subscribers.flatMap((subscriber) => {
    if (!wantsMessagesField(subscriber.fields)) return [];
    const lanes: LanePlan[] = [];
    const message = subscriber.messageLane;
    if (message !== undefined) {
      lanes.push(
        planLane(
          subscriber,
          'message',
          message.settings,
          message.ordered,
          traffic.inboundPerSecond,
          traffic,
          handlerMs.message,
          claimWriteMs,
        ),
      );
    }
    // Without a message lane, inbound messages share the status lane's queue.
    const statusEvents = traffic.statusesPerSecond + (message === undefined ? traffic.inboundPerSecond : 0);
    lanes.push(
      planLane(
        subscriber,
        'status',
        subscriber.settings,
        false,
        statusEvents,
        traffic,
        handlerMs.status,
        claimWriteMs,
      ),
    );
    return lanes;
  });
}

/**
 * The receiver's reserved concurrency that carries `postsPerSecond` through a function URL: the smallest that
 * both keeps Lambda's request-rate limit (10 requests/s per unit) a fifth spare, as a sized lane is
 * (`MAX_SIZED_UTILISATION`), and turns away at most `RECEIVER_BLOCKING_TARGET` of the POSTs, each invocation
 * holding a unit for `receiverMs` (Erlang B over the offered load POSTs/s × duration). At least 1.
 */
export function receiverReservedConcurrencyFor(postsPerSecond: number, receiverMs: number): number {
  const load = (postsPerSecond * receiverMs) / 1000;
  let reserved = Math.max(
    1,
    Math.ceil(postsPerSecond / (LAMBDA_REQUESTS_PER_SECOND_PER_CONCURRENCY * MAX_SIZED_UTILISATION)),
  );
  while (erlangB(reserved, load) > RECEIVER_BLOCKING_TARGET) reserved++;
  return reserved;
}

const fixed = (value: number, digits = 0) => Number(value.toFixed(digits));
const count = (value: number) => Math.round(value).toLocaleString('en-US');

/** Every limit on the path, in order, and the problems: the construct's `expectedPeak` sizes from this. */
export function planCapacity(peak: ExpectedPeak, pipeline: CapacityPipeline): CapacityPlan {
  const traffic = peakTraffic(peak);
  const lanes = planLanes(peak, pipeline);
  const receiverMs = pipeline.receiverMs ?? DEFAULT_RECEIVER_MS;
  const receiverConcurrency = Math.ceil((traffic.postsPerSecond * receiverMs) / 1000);
  const writeUnits = lanes.reduce((sum, lane) => sum + lane.claimWriteUnitsPerSecond, 0);
  const warm = pipeline.warmWriteUnits ?? defaultWarmWriteUnits(pipeline);
  const limit = (entry: Omit<CapacityLimit, 'carries'> & { carries?: boolean }): CapacityLimit => ({
    ...entry,
    carries: entry.carries ?? entry.needs <= entry.allows,
  });
  const endpoint = pipeline.endpoint ?? DEFAULT_WEBHOOK_ENDPOINT;
  const neededReservation = receiverReservedConcurrencyFor(traffic.postsPerSecond, receiverMs);
  const reservation = pipeline.receiverReservedConcurrency ?? neededReservation;
  const limits: CapacityLimit[] =
    endpoint === 'http-api'
      ? httpApiLimits(pipeline, traffic, receiverConcurrency, receiverMs, limit)
      : functionUrlLimits(reservation, neededReservation, receiverMs, limit);
  for (const lane of lanes) {
    const subscriber = pipeline.subscribers.find(({ name }) => name === lane.subscriber);
    const inFlight = subscriber === undefined ? undefined : laneInFlight(subscriber, lane.lane);
    // A lane at its share of a forward subscriber's `maxInFlight` grows only with it.
    const where =
      inFlight !== undefined && lane.maxConcurrency >= inFlight.share
        ? 'forward.maxInFlight'
        : lane.lane === 'message'
          ? 'messageLane.settings.maxConcurrency'
          : 'maxConcurrency';
    limits.push(
      limit({
        name: `${lane.subscriber}, ${lane.lane} lane: drain rate`,
        setting: where,
        kind: 'setting',
        allows: fixed(lane.drainPerSecond),
        needs: fixed(lane.eventsPerSecond),
        unit: 'events/s',
        subscriber: lane.subscriber,
        lane: lane.lane,
        carries: lane.p99WaitSeconds !== undefined,
        formula: `${lane.usableConcurrency} concurrent × batch ${lane.batchSize} / ${fixed(lane.fullBatchSeconds * 1000, 1)} ms${lane.ordered ? ', FIFO, concurrency bounded by active conversations' : `, window ${lane.batchingWindowSeconds} s`}`,
      }),
      limit({
        name: `${lane.subscriber}, ${lane.lane} lane: p99 wait`,
        setting: where,
        kind: 'setting',
        allows: lane.maxConcurrency,
        needs: lane.neededConcurrency ?? Number.POSITIVE_INFINITY,
        unit: 'concurrent batches',
        subscriber: lane.subscriber,
        lane: lane.lane,
        formula: `M/M/c p99 wait ≤ ${P99_WAIT_TARGET_SECONDS[lane.lane]} s at ρ ≤ ${MAX_SIZED_UTILISATION}`,
      }),
    );
  }
  limits.push(
    limit({
      name: 'Claim table, warm write throughput',
      setting: 'claim table warm throughput (WriteUnitsPerSecond)',
      kind: 'setting',
      allows: warm,
      needs: lanesDrainWriteUnits(lanes),
      unit: 'WU/s',
      source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html',
      formula: `the lanes' writes at their drain rate; the peak's mean is ${count(writeUnits)} WU/s; a new table, or twice the previous peak within 30 minutes`,
    }),
    limit({
      name: 'Claim table, on-demand table quota',
      setting: 'DynamoDB table-level write throughput',
      kind: 'quota',
      allows: DYNAMODB_TABLE_WRITE_UNITS_QUOTA,
      needs: fixed(writeUnits),
      unit: 'WU/s',
      source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html',
    }),
    limit({
      name: 'Claim table, busiest key (a status ledger item)',
      setting: 'DynamoDB partition throughput',
      kind: 'quota',
      allows: DYNAMODB_PARTITION_WRITE_UNITS,
      // Claim keys are one per event and spread over partitions; a ledger item takes its message's statuses.
      needs: POSTS_PER_OUTBOUND_MESSAGE,
      unit: 'WU/s',
      source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html',
    }),
  );
  const consumerConcurrency = lanes.reduce((sum, lane) => sum + sizedConcurrency(lane), 0);
  // A reservation is held for the receiver whether it runs or not.
  const receiverShare = endpoint === 'function-url' ? reservation : receiverConcurrency;
  limits.push(
    limit({
      name: 'Lambda concurrency, account',
      setting: 'Lambda concurrent executions',
      kind: 'quota',
      allows: LAMBDA_ACCOUNT_CONCURRENCY,
      needs: receiverShare + consumerConcurrency,
      unit: 'executions',
      formula:
        endpoint === 'function-url'
          ? "the receiver's reservation + every lane at its concurrency"
          : 'receiver + every lane at its concurrency',
      source: 'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html',
    }),
  );
  if (endpoint === 'http-api') {
    limits.push(
      limit({
        name: 'API Gateway, account',
        setting: 'API Gateway throttle quota per Region',
        kind: 'quota',
        allows: API_GATEWAY_ACCOUNT_RPS,
        needs: traffic.postsPerSecond,
        unit: 'requests/s',
        source: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html',
      }),
    );
  }
  return {
    endpoint,
    traffic,
    receiverConcurrency,
    claimWriteUnitsPerSecond: writeUnits,
    limits,
    lanes,
    problems: limits.filter((entry) => !entry.carries).map(problemLine),
    sizing: {
      throttlingRateLimit: Math.ceil(traffic.postsPerSecond),
      throttlingBurstLimit: Math.ceil(traffic.postsPerSecond * BURST_SECONDS_OF_PEAK),
      receiverReservedConcurrency: neededReservation,
      maxConcurrency: lanes.map((lane) => ({
        subscriber: lane.subscriber,
        lane: lane.lane,
        value: lane.neededConcurrency,
      })),
      warmWriteUnitsPerSecond: lanesDrainWriteUnits(lanes, sizedConcurrency),
      lambdaConcurrency: receiverShare + consumerConcurrency,
    },
  };
}

type LimitOf = (entry: Omit<CapacityLimit, 'carries'> & { carries?: boolean }) => CapacityLimit;

/** The HTTP API's door: its route throttle, then the receiver's concurrency within the account's. */
function httpApiLimits(
  pipeline: CapacityPipeline,
  traffic: CapacityTraffic,
  receiverConcurrency: number,
  receiverMs: number,
  limit: LimitOf,
): CapacityLimit[] {
  return [
    limit({
      name: 'HTTP API route throttle, rate',
      setting: 'throttlingRateLimit',
      kind: 'setting',
      allows: pipeline.throttlingRateLimit,
      needs: traffic.postsPerSecond,
      unit: 'POSTs/s',
    }),
    limit({
      name: 'HTTP API route throttle, burst',
      setting: 'throttlingBurstLimit',
      kind: 'setting',
      allows: pipeline.throttlingBurstLimit,
      needs: Math.ceil(traffic.postsPerSecond * BURST_SECONDS_OF_PEAK),
      unit: 'requests',
      formula: `${BURST_SECONDS_OF_PEAK} s of the peak`,
    }),
    limit({
      name: 'Receiver concurrency',
      setting: 'Lambda concurrent executions',
      kind: 'quota',
      allows: LAMBDA_ACCOUNT_CONCURRENCY,
      needs: receiverConcurrency,
      unit: 'executions',
      formula: `POSTs/s × ${receiverMs} ms`,
      source: 'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html',
    }),
  ];
}

/**
 * A function URL's door: the receiver's reserved concurrency is its throttle (Lambda answers 429 beyond it, at
 * 10 requests/s per unit or when every unit is busy), and the account must leave 100 unreserved beside it.
 */
function functionUrlLimits(
  reservation: number,
  neededReservation: number,
  receiverMs: number,
  limit: LimitOf,
): CapacityLimit[] {
  return [
    limit({
      name: 'Function URL throttle: receiver reserved concurrency',
      setting: 'receiverReservedConcurrency',
      kind: 'setting',
      allows: reservation,
      needs: neededReservation,
      unit: 'executions',
      formula: `POSTs/s / (${LAMBDA_REQUESTS_PER_SECOND_PER_CONCURRENCY} requests/s per execution × ${MAX_SIZED_UTILISATION}), and Erlang B ≤ ${RECEIVER_BLOCKING_TARGET * 100} % over POSTs/s × ${receiverMs} ms`,
      source: 'https://docs.aws.amazon.com/lambda/latest/dg/urls-configuration.html',
    }),
    limit({
      name: 'Lambda reserved concurrency, account',
      setting: 'Lambda concurrent executions',
      kind: 'quota',
      allows: LAMBDA_ACCOUNT_CONCURRENCY - LAMBDA_MIN_UNRESERVED_CONCURRENCY,
      needs: reservation,
      unit: 'executions',
      formula: `the account's quota less the ${LAMBDA_MIN_UNRESERVED_CONCURRENCY} Lambda keeps unreserved`,
      source: 'https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html',
    }),
  ];
}

/**
 * The warm write throughput the construct gives the claim table when no `expectedPeak` is declared: what the
 * lanes sized for DEFAULT_EXPECTED_PEAK write at their drain rate, never below a new table's (it is set only
 * when above it).
 */
export function defaultWarmWriteUnits(pipeline: CapacityPipeline): number {
  return Math.max(
    DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS,
    lanesDrainWriteUnits(planLanes(DEFAULT_EXPECTED_PEAK, pipeline), sizedConcurrency),
  );
}

function problemLine(entry: CapacityLimit): string {
  const needs = Number.isFinite(entry.needs)
    ? String(entry.needs)
    : `more than ${EVENT_SOURCE_MAX_CONCURRENCY}`;
  const where = entry.subscriber === undefined ? '' : `subscriber ${entry.subscriber}, ${entry.lane} lane: `;
  const formula = entry.formula === undefined ? '' : ` (${entry.formula})`;
  if (entry.name.endsWith('drain rate')) {
    return `${where}drain ${entry.allows} ${entry.unit} < ${needs} ${entry.unit}${formula}: raise ${entry.setting}`;
  }
  const raise = entry.kind === 'quota' ? ': raise the quota' : '';
  return `${where}${entry.setting} ${entry.allows} < ${needs} ${entry.unit}${formula}${raise}`;
}
