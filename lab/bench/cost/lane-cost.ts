/**
 * What the lanes cost per million events of a bot's mix (docs/cost.md, "Lanes"; docs/decisions.md, "Two queues per
 * subscriber, the message lane FIFO, not one fair queue"): each subscriber's single standard queue of before,
 * against its two lanes, an ordered message lane (SQS FIFO, no batching window) for the inbound messages and the
 * standard status lane for the rest, for 1 and 3 subscribers (each wanting every delivery).
 *
 * The bot mix is docs/cost.md's: per conversation turn one inbound message and the `sent`, `delivered` and `read`
 * statuses of its reply, each event in its own delivery, with Meta's retries (the deliveries per event the bench
 * measured). What the lanes change is a subscriber's queue side: which price its SQS requests pay, and how many
 * consumer invocations its records take. API Gateway, the receiver and DynamoDB are the same either way (the
 * receiver sends each delivery once per subscriber, to one lane or the other; the claims are the same).
 *
 *   quiet  events trickle in: every invocation holds one record, in the single queue and in both lanes.
 *   busy   the standard queues fill batches of 10 within their window; the message lane, with no window,
 *          still takes one invocation per message (a FIFO receive returns what has arrived, which is one message
 *          at a bot's pace; under a backlog it would batch up to 10, so this is its upper bound).
 *
 * Every invocation costs one receive and one delete request, and is billed the reference shapes' duration and
 * log volume (stack-cost.ts ASSUMPTIONS: a single record as quiet, a batch of 10 as busy).
 */

import { PRICES } from '../../../cli/cost/prices.ts';
import {
  ASSUMPTIONS,
  costPerMillionEvents,
  KB_PER_GB,
  MILLION,
  referenceShape,
} from '../../../cli/cost/stack-cost.ts';
import { DEFAULT_CONSUMER_MEMORY_MB } from '../../../lib/defaults.ts';

export const LANE_TRAFFIC = ['quiet', 'busy'] as const;
export type LaneTraffic = (typeof LANE_TRAFFIC)[number];
export const LANE_SUBSCRIBER_COUNTS = [1, 3] as const;
export const QUEUE_LAYOUTS = ['singleQueue', 'lanes'] as const;
export type QueueLayout = (typeof QUEUE_LAYOUTS)[number];

/** A bot's traffic: what share of the events are inbound messages, and deliveries per event (Meta's retries). */
export interface BotMixShare {
  readonly messageShare: number;
  readonly deliveriesPerEvent: number;
}

/** One subscriber's queue side per million events. */
export interface QueueSideCost {
  /** The receiver's sends into this subscriber's queues. */
  readonly sqsSends: number;
  /** Its event sources' receive and delete requests. */
  readonly sqsReceiveAndDelete: number;
  readonly consumerInvocations: number;
  readonly consumer: number;
  readonly consumerLogs: number;
  readonly total: number;
}

export interface LaneCostRow {
  readonly traffic: LaneTraffic;
  readonly subscribers: number;
  readonly layout: QueueLayout;
  /** Every subscriber's queue side. */
  readonly queueSide: QueueSideCost;
  /** API Gateway, the receiver, their logs, and every subscriber's DynamoDB writes: the same in both layouts. */
  readonly unchanged: number;
  readonly total: number;
}

interface Queue {
  /** Deliveries (records) per event this queue receives. */
  readonly recordsPerEvent: number;
  readonly recordsPerInvocation: number;
  readonly fifo: boolean;
  readonly consumerMs: number;
  readonly logKB: number;
}

function queueCost(queue: Queue): QueueSideCost {
  const price = queue.fifo ? PRICES.sqs.fifoPerRequest : PRICES.sqs.perRequest;
  const records = queue.recordsPerEvent * MILLION;
  const invocations = records / queue.recordsPerInvocation;
  const sqsSends = records * price;
  const sqsReceiveAndDelete = invocations * ASSUMPTIONS.sqsRequestsPerConsumerInvocation * price;
  const consumer =
    invocations * PRICES.lambda.perRequest +
    invocations * (DEFAULT_CONSUMER_MEMORY_MB / 1024) * (queue.consumerMs / 1000) * PRICES.lambda.perGbSecond;
  const consumerLogs = ((invocations * queue.logKB) / KB_PER_GB) * PRICES.cloudWatch.logsPerGbIngested;
  return {
    sqsSends,
    sqsReceiveAndDelete,
    consumerInvocations: invocations,
    consumer,
    consumerLogs,
    total: sqsSends + sqsReceiveAndDelete + consumer + consumerLogs,
  };
}

function sum(parts: readonly QueueSideCost[], times = 1): QueueSideCost {
  const add = (pick: (part: QueueSideCost) => number) =>
    times * parts.reduce((total, part) => total + pick(part), 0);
  return {
    sqsSends: add((p) => p.sqsSends),
    sqsReceiveAndDelete: add((p) => p.sqsReceiveAndDelete),
    consumerInvocations: add((p) => p.consumerInvocations),
    consumer: add((p) => p.consumer),
    consumerLogs: add((p) => p.consumerLogs),
    total: add((p) => p.total),
  };
}

/** One subscriber's queue side per million events of the mix, in one layout. */
export function subscriberQueueSide(
  layout: QueueLayout,
  traffic: LaneTraffic,
  mix: BotMixShare,
): QueueSideCost {
  const batched = ASSUMPTIONS[traffic];
  const single = ASSUMPTIONS.quiet;
  const standard = (recordsPerEvent: number): Queue => ({
    recordsPerEvent,
    recordsPerInvocation: batched.batchSize,
    fifo: false,
    consumerMs: batched.consumerMs,
    logKB: batched.consumerLogKB,
  });
  if (layout === 'singleQueue') return queueCost(standard(mix.deliveriesPerEvent));
  const messages = mix.deliveriesPerEvent * mix.messageShare;
  return sum([
    queueCost({
      recordsPerEvent: messages,
      recordsPerInvocation: 1,
      fifo: true,
      consumerMs: single.consumerMs,
      logKB: single.consumerLogKB,
    }),
    queueCost(standard(mix.deliveriesPerEvent - messages)),
  ]);
}

/**
 * What both layouts pay alike per million events: API Gateway, the receiver and their logs once, DynamoDB once
 * per subscriber (`dynamoDbPerSubscriber`, the bot mix's measured writes).
 */
function unchangedCost(subscribers: number, mix: BotMixShare, dynamoDbPerSubscriber: number): number {
  const shared = costPerMillionEvents({
    ...referenceShape('busy'),
    deliveriesPerEvent: mix.deliveriesPerEvent,
    sqsSendsPerDelivery: 0,
    consumerInvocationsPerEvent: 0,
    wruPerEvent: 0,
    rruPerEvent: 0,
  }).total;
  return shared + subscribers * dynamoDbPerSubscriber;
}

export function laneCostRows(mix: BotMixShare, dynamoDbPerSubscriber: number): LaneCostRow[] {
  return LANE_TRAFFIC.flatMap((traffic) =>
    LANE_SUBSCRIBER_COUNTS.flatMap((subscribers) =>
      QUEUE_LAYOUTS.map((layout) => {
        const queueSide = sum([subscriberQueueSide(layout, traffic, mix)], subscribers);
        const unchanged = unchangedCost(subscribers, mix, dynamoDbPerSubscriber);
        return { traffic, subscribers, layout, queueSide, unchanged, total: unchanged + queueSide.total };
      }),
    ),
  );
}

/**
 * An idle queue's Lambda long polling, a month: docs/cost.md's fixed-cost estimate (about 650,000 requests, AWS
 * publishes no poller count), at FIFO prices for the message lane each subscriber adds.
 */
export const IDLE_POLL_REQUESTS_PER_MONTH = 650_000;
export function idleMessageLanePerMonth(subscribers: number): number {
  return subscribers * IDLE_POLL_REQUESTS_PER_MONTH * PRICES.sqs.fifoPerRequest;
}
