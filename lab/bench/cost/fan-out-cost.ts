/**
 * What several subscribers cost per million deliveries (docs/cost.md, "Several subscribers"; docs/decisions.md,
 * "Fan-out: the receiver sends to each subscriber queue, not SNS"), for the mechanism we chose (the receiver sends
 * each delivery to every subscriber queue) and the one we did not (an SNS topic with raw message delivery and a
 * filter policy per subscription, each subscription into that subscriber's queue).
 *
 * Everything goes through `costPerMillionEvents` of stack-cost.ts with one of docs/cost.md's reference shapes
 * (one event per delivery, so per million deliveries is per million events), split into three parts:
 *   shared        what one delivery costs whatever the number of subscribers: API Gateway, the receiver
 *                 Lambda, their logs;
 *   fan-out       what puts the delivery into each subscriber's queue: one SQS send per queue, or one SNS
 *                 publish and a delivery per subscription;
 *   per subscriber what each subscriber then spends on its own copy: the SQS receive and delete of its event
 *                 source, its consumer Lambda, its DynamoDB writes, its logs.
 */
import { PRICES } from '../../../cli/cost/prices.ts';
import {
  costPerMillionEvents,
  DEFAULT_FRONT_DOOR,
  type FrontDoor,
  MILLION,
  referenceShape,
  type TrafficShape,
} from '../../../cli/cost/stack-cost.ts';

export const FAN_OUT_MECHANISMS = ['receiverSends', 'snsTopic'] as const;
export type FanOutMechanism = (typeof FAN_OUT_MECHANISMS)[number];

/** The subscriber counts docs/cost.md and the README tabulate. */
export const FAN_OUT_SUBSCRIBER_COUNTS = [1, 3, 10] as const;

/** One subscriber's own spending per million deliveries it receives. */
export interface SubscriberCost {
  /** Its event source's ReceiveMessage and DeleteMessageBatch, per batch. */
  readonly sqsReceiveAndDelete: number;
  readonly consumer: number;
  readonly dynamoDb: number;
  readonly logs: number;
  readonly total: number;
}

export interface FanOutCost {
  readonly mechanism: FanOutMechanism;
  readonly subscribers: number;
  /** API Gateway, receiver, and their logs: the same for every mechanism and subscriber count. */
  readonly shared: number;
  /** Putting the delivery into every subscriber's queue. */
  readonly fanOut: number;
  /** Every subscriber's own spending (each receives every delivery). */
  readonly subscribersOwn: number;
  readonly total: number;
}

/** What one subscriber spends per million deliveries of the shape: the stack's cost without its delivery side. */
export function subscriberCostPerMillion(shape: TrafficShape): SubscriberCost {
  const own = costPerMillionEvents({ ...shape, deliveriesPerEvent: 0 });
  return {
    sqsReceiveAndDelete: own.sqs,
    consumer: own.consumer,
    dynamoDb: own.dynamoDb,
    logs: own.logs,
    total: own.total,
  };
}

/** The front door (API Gateway or a function URL), the receiver and their logs per million deliveries of the shape. */
export function sharedCostPerMillion(shape: TrafficShape, door: FrontDoor = DEFAULT_FRONT_DOOR): number {
  return costPerMillionEvents(
    {
      ...shape,
      sqsSendsPerDelivery: 0,
      consumerInvocationsPerEvent: 0,
      wruPerEvent: 0,
      rruPerEvent: 0,
    },
    door,
  ).total;
}

/**
 * Putting one million deliveries into `subscribers` queues. The receiver pays one SQS request per queue for
 * each 64 KB of body. SNS bills the publish once per 64 KB, and nothing for its deliveries to SQS; the
 * SendMessage SNS makes into each queue is counted as free too, the reading most favourable to SNS.
 */
export function fanOutCostPerMillion(
  mechanism: FanOutMechanism,
  subscribers: number,
  shape: TrafficShape,
): number {
  const deliveries = shape.deliveriesPerEvent * MILLION;
  if (mechanism === 'receiverSends') {
    return deliveries * subscribers * shape.sqsSendsPerDelivery * PRICES.sqs.perRequest;
  }
  // SNS meters a payload per 64 KB as SQS does, so a delivery is as many publish requests as queue messages.
  return (
    deliveries * shape.sqsSendsPerDelivery * PRICES.sns.perPublishRequest +
    deliveries * subscribers * PRICES.sns.perSqsDelivery
  );
}

export function fanOutCost(
  mechanism: FanOutMechanism,
  subscribers: number,
  shape: TrafficShape = referenceShape('busy'),
): FanOutCost {
  const shared = sharedCostPerMillion(shape);
  const fanOut = fanOutCostPerMillion(mechanism, subscribers, shape);
  const subscribersOwn = subscribers * subscriberCostPerMillion(shape).total;
  return { mechanism, subscribers, shared, fanOut, subscribersOwn, total: shared + fanOut + subscribersOwn };
}
