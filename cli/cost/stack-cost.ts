/**
 * Dollars per million webhook events for the whole stack (its front door, receiver Lambda, SQS, consumer Lambda,
 * DynamoDB, CloudWatch Logs) from a traffic shape, a front door and the prices of `prices.ts`. docs/cost.md's
 * reference shapes, the benchmark's bot mix and the capacity planner all go through `costPerMillionEvents` or
 * `frontDoorCost`, so they cannot disagree on a price or a formula.
 */
import {
  DEFAULT_WEBHOOK_ENDPOINT,
  WEBHOOK_ENDPOINTS,
  type WebhookEndpoint,
} from 'whatsapp-webhook-dedup/contract/capacity';
import { DEFAULT_CONSUMER_MEMORY_MB, DEFAULT_RECEIVER_MEMORY_MB } from 'whatsapp-webhook-dedup/lib/defaults';
import { PRICES } from './prices.ts';

/** What one event costs in each metered unit, averaged over a traffic shape. */
export interface TrafficShape {
  /** HTTP POSTs per event (API Gateway requests, receiver invocations); Meta's retries included. */
  readonly deliveriesPerEvent: number;
  /** Billed duration of one receiver invocation. */
  readonly receiverMs: number;
  readonly receiverMemoryMb: number;
  /** Consumer invocations (one per batch; redelivered records come back in more of them). */
  readonly consumerInvocationsPerEvent: number;
  /** Billed duration of one consumer invocation (mean; each invocation rounded up to the millisecond). */
  readonly consumerMsPerInvocation: number;
  readonly consumerMemoryMb: number;
  /** SQS requests per delivery sent (one per 64 KB of body; the bench's bodies are all under 64 KB). */
  readonly sqsSendsPerDelivery: number;
  /** SQS requests of the event source per consumer invocation: the receive, and the delete of its records. */
  readonly sqsRequestsPerConsumerInvocation: number;
  readonly wruPerEvent: number;
  readonly rruPerEvent: number;
  /** Log bytes ingested per delivery: the receiver's lines and its EMF document. */
  readonly receiverLogKBPerDelivery: number;
  /** API Gateway's access log line per request; billed only behind the HTTP API. */
  readonly apiAccessLogKBPerDelivery: number;
  readonly logKBPerConsumerInvocation: number;
}

/**
 * What Meta's POSTs reach (the construct's `endpoint`): an API Gateway HTTP API (a request charge and an access
 * log line each), or the receiver's Lambda function URL, which AWS bills nothing beyond the receiver's own
 * invocation.
 */
export const FRONT_DOORS = WEBHOOK_ENDPOINTS;
export type FrontDoor = WebhookEndpoint;
export const DEFAULT_FRONT_DOOR: FrontDoor = DEFAULT_WEBHOOK_ENDPOINT;

/** What the door itself bills for `deliveries` POSTs of bodies under 512 KB: dollars, and access-log KB. */
export function frontDoorCost(
  door: FrontDoor,
  deliveries: number,
  apiAccessLogKBPerDelivery: number,
): { readonly requests: number; readonly accessLogKB: number } {
  if (door === 'function-url') return { requests: 0, accessLogKB: 0 };
  return {
    requests: deliveries * PRICES.apiGateway.perRequest,
    accessLogKB: deliveries * apiAccessLogKBPerDelivery,
  };
}

export interface StackCost {
  /** The HTTP API's requests; 0 behind a function URL. */
  readonly apiGateway: number;
  readonly receiver: number;
  readonly consumer: number;
  readonly sqs: number;
  readonly dynamoDb: number;
  readonly logs: number;
  readonly total: number;
}

export const MILLION = 1e6;
/** Log volumes in decimal units, as in docs/cost.md: 1 KB = 1000 bytes, 1 GB = 10^6 KB. */
export const KB_PER_GB = 1e6;

export function costPerMillionEvents(shape: TrafficShape, door: FrontDoor = DEFAULT_FRONT_DOOR): StackCost {
  const deliveries = shape.deliveriesPerEvent * MILLION;
  const front = frontDoorCost(door, deliveries, shape.apiAccessLogKBPerDelivery);
  const consumerInvocations = shape.consumerInvocationsPerEvent * MILLION;
  const lambda = (invocations: number, ms: number, memoryMb: number) =>
    invocations * PRICES.lambda.perRequest +
    invocations * (memoryMb / 1024) * (ms / 1000) * PRICES.lambda.perGbSecond;
  const parts = {
    apiGateway: front.requests,
    receiver: lambda(deliveries, shape.receiverMs, shape.receiverMemoryMb),
    consumer: lambda(consumerInvocations, shape.consumerMsPerInvocation, shape.consumerMemoryMb),
    sqs:
      (deliveries * shape.sqsSendsPerDelivery +
        consumerInvocations * shape.sqsRequestsPerConsumerInvocation) *
      PRICES.sqs.perRequest,
    dynamoDb:
      MILLION *
      (shape.wruPerEvent * PRICES.dynamoDb.perWriteRequestUnit +
        shape.rruPerEvent * PRICES.dynamoDb.perReadRequestUnit),
    logs:
      ((deliveries * shape.receiverLogKBPerDelivery +
        front.accessLogKB +
        consumerInvocations * shape.logKBPerConsumerInvocation) /
        KB_PER_GB) *
      PRICES.cloudWatch.logsPerGbIngested,
  };
  return { ...parts, total: Object.values(parts).reduce((sum, value) => sum + value, 0) };
}

/**
 * What docs/cost.md assumes where nothing is measured: the receiver's duration (the SQS round trip and the
 * secret read dominate it in AWS; the bench stubs both) and log volumes per invocation.
 */
export const ASSUMPTIONS = {
  receiverMs: 40,
  receiverLogKB: 0.75,
  apiAccessLogKB: 0.35,
  quiet: { consumerMs: 50, consumerLogKB: 0.8, batchSize: 1 },
  busy: { consumerMs: 120, consumerLogKB: 2, batchSize: 10 },
  /** Receive and delete per batch. */
  sqsRequestsPerConsumerInvocation: 2,
} as const;

/** docs/cost.md's reference shapes: one event per delivery, every event fresh with a side effect (2 WRU). */
export function referenceShape(name: 'quiet' | 'busy'): TrafficShape {
  const consumer = ASSUMPTIONS[name];
  return {
    deliveriesPerEvent: 1,
    receiverMs: ASSUMPTIONS.receiverMs,
    receiverMemoryMb: DEFAULT_RECEIVER_MEMORY_MB,
    consumerInvocationsPerEvent: 1 / consumer.batchSize,
    consumerMsPerInvocation: consumer.consumerMs,
    consumerMemoryMb: DEFAULT_CONSUMER_MEMORY_MB,
    sqsSendsPerDelivery: 1,
    sqsRequestsPerConsumerInvocation: ASSUMPTIONS.sqsRequestsPerConsumerInvocation,
    wruPerEvent: 2,
    rruPerEvent: 0,
    receiverLogKBPerDelivery: ASSUMPTIONS.receiverLogKB,
    apiAccessLogKBPerDelivery: ASSUMPTIONS.apiAccessLogKB,
    logKBPerConsumerInvocation: consumer.consumerLogKB,
  };
}

/**
 * A measured consumer run turned into a shape; what the consumer bench does not run comes from ASSUMPTIONS.
 * Without `consumerBilledMs`, each invocation is billed the busy shape's assumed duration: DynamoDB Local on a
 * shared machine answers in tens of milliseconds where DynamoDB answers in a few, so the durations measured
 * here would price the emulator's queueing, not Lambda's bill.
 */
export function measuredShape(measured: {
  readonly events: number;
  readonly deliveries: number;
  readonly consumerInvocations: number;
  readonly consumerBilledMs?: number;
  readonly wru: number;
  readonly rru: number;
  readonly consumerLogBytes: number;
  /** Bytes the receiver logged per delivery, measured; absent: ASSUMPTIONS.receiverLogKB. */
  readonly receiverLogBytesPerDelivery?: number;
}): TrafficShape {
  return {
    deliveriesPerEvent: measured.deliveries / measured.events,
    receiverMs: ASSUMPTIONS.receiverMs,
    receiverMemoryMb: DEFAULT_RECEIVER_MEMORY_MB,
    consumerInvocationsPerEvent: measured.consumerInvocations / measured.events,
    consumerMsPerInvocation:
      measured.consumerBilledMs === undefined
        ? ASSUMPTIONS.busy.consumerMs
        : measured.consumerBilledMs / measured.consumerInvocations,
    consumerMemoryMb: DEFAULT_CONSUMER_MEMORY_MB,
    sqsSendsPerDelivery: 1,
    sqsRequestsPerConsumerInvocation: ASSUMPTIONS.sqsRequestsPerConsumerInvocation,
    wruPerEvent: measured.wru / measured.events,
    rruPerEvent: measured.rru / measured.events,
    receiverLogKBPerDelivery:
      measured.receiverLogBytesPerDelivery === undefined
        ? ASSUMPTIONS.receiverLogKB
        : measured.receiverLogBytesPerDelivery / 1000,
    apiAccessLogKBPerDelivery: ASSUMPTIONS.apiAccessLogKB,
    logKBPerConsumerInvocation: measured.consumerLogBytes / 1000 / measured.consumerInvocations,
  };
}
