/**
 * The fault model of one schedule: rates drawn from the seed (a schedule may be calm, or harsh on one axis),
 * and a tally of the faults actually injected, by kind, for the runner's summary.
 */
import type { SeededRandom } from '../../cli/local/seeded-random.ts';

export const FAULT_KINDS = [
  /** An invocation died at one of its await points (its requests in flight may or may not have landed). */
  'crash',
  /** An invocation ran into its function timeout and was killed there. */
  'timeout',
  /** DynamoDB refused a request with ProvisionedThroughputExceededException, without applying it. */
  'dynamodb-throttled',
  /** DynamoDB applied a write, its answer was lost, and the SDK sent the same request again. */
  'dynamodb-answer-lost-retried',
  /** DynamoDB applied a write, its answer was lost, and the call failed (TimeoutError). */
  'dynamodb-answer-lost-error',
  /** A DynamoDB request took between 0.3 s and 3 s. */
  'dynamodb-slow',
  /** A handler threw before its side effect. */
  'handler-error',
  /** A handler threw `RetryLater` before its side effect (a downstream asked to be called later). */
  'handler-retry-later',
  /**
   * A handler threw `DeadLetter` before its side effect (retrying cannot help): the consumer moves the record to
   * its lane's DLQ once its receive count reaches the `afterReceives` asked (1 to 3), and retries it before.
   */
  'handler-dead-letter',
  /** A side effect refused because its backend was down (a downstream outage scenario). */
  'backend-down',
  /** A handler took seconds, possibly past its invocation's deadline. */
  'handler-slow',
  /** SQS handed out a message that was still in flight. */
  'sqs-duplicate-delivery',
  /** A delete or visibility change with a superseded receipt handle did not take effect. */
  'sqs-stale-handle-ignored',
  /** The consumer's SQS call failed (InternalError), without taking effect. */
  'sqs-request-failed',
  /** Meta sent events again, re-batched into a new body. */
  'meta-retry',
  /** The FIFO message queue absorbed a conversation's part: its group saw its deduplication id within 5 minutes. */
  'fifo-deduplicated',
  /** A TTL sweep deleted an expired item. */
  'ttl-deletion',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultPlan {
  /** Chance that an invocation crashes at one of its await points (chosen uniformly among the first 40). */
  readonly crashRate: number;
  readonly dynamodbThrottleRate: number;
  readonly dynamodbAnswerLostRate: number;
  /** Of the lost answers, the share the SDK retries (the others fail the call). */
  readonly answerLostRetriedShare: number;
  readonly dynamodbSlowRate: number;
  readonly handlerErrorRate: number;
  /** Chance that a side effect is deferred with `RetryLater` instead. */
  readonly handlerRetryLaterRate: number;
  /** Chance that a handler gives up on its event with `DeadLetter` instead. */
  readonly handlerDeadLetterRate: number;
  readonly handlerSlowRate: number;
  readonly duplicateDeliveryRate: number;
  readonly staleHandleEffectRate: number;
  readonly sqsRequestFailureRate: number;
  /** Re-batched re-sends by Meta. */
  readonly metaRetries: number;
  readonly ttlSweeps: number;
}

export function drawFaultPlan(random: SeededRandom): FaultPlan {
  return {
    crashRate: random.pick([0, 0.1, 0.3]),
    dynamodbThrottleRate: random.pick([0, 0.03, 0.15]),
    dynamodbAnswerLostRate: random.pick([0, 0.03, 0.15]),
    answerLostRetriedShare: random.pick([0, 0.5, 1]),
    dynamodbSlowRate: random.pick([0, 0.05]),
    handlerErrorRate: random.pick([0, 0.1, 0.3]),
    handlerSlowRate: random.pick([0, 0.05, 0.2]),
    duplicateDeliveryRate: random.pick([0, 0.1, 0.3]),
    staleHandleEffectRate: random.pick([0, 0.5, 1]),
    sqsRequestFailureRate: random.pick([0, 0.2]),
    metaRetries: random.int(0, 3),
    ttlSweeps: random.int(0, 2),
    // Drawn last: the draws above stay what they were for every seed.
    handlerRetryLaterRate: random.pick([0, 0.1, 0.3]),
    // Drawn after it, for the same reason.
    handlerDeadLetterRate: random.pick([0, 0.05, 0.2]),
  };
}

/** No fault at all, for scenarios that inject one thing on purpose. */
export const CALM_PLAN: FaultPlan = {
  crashRate: 0,
  dynamodbThrottleRate: 0,
  dynamodbAnswerLostRate: 0,
  answerLostRetriedShare: 0,
  dynamodbSlowRate: 0,
  handlerErrorRate: 0,
  handlerRetryLaterRate: 0,
  handlerDeadLetterRate: 0,
  handlerSlowRate: 0,
  duplicateDeliveryRate: 0,
  staleHandleEffectRate: 0,
  sqsRequestFailureRate: 0,
  metaRetries: 0,
  ttlSweeps: 0,
};

export class FaultTally {
  readonly counts = new Map<FaultKind, number>();

  add(kind: FaultKind, count = 1): void {
    if (count > 0) this.counts.set(kind, (this.counts.get(kind) ?? 0) + count);
  }

  total(): number {
    let total = 0;
    for (const count of this.counts.values()) total += count;
    return total;
  }

  /** Adds another tally's counts into this one. */
  merge(other: FaultTally): void {
    for (const [kind, count] of other.counts) this.add(kind, count);
  }

  toRecord(): Record<FaultKind, number> {
    return Object.fromEntries(FAULT_KINDS.map((kind) => [kind, this.counts.get(kind) ?? 0])) as Record<
      FaultKind,
      number
    >;
  }
}
