/**
 * The retry budget: how long a record keeps coming back while its handler fails, before SQS moves it to the
 * dead-letter queue. The consumer (functions/consumer/retry-policy.ts) draws each delay from these bounds;
 * `resolveSettings` checks the sums; docs/consumer.md prints them (`npm run retry-budget`). Plain arithmetic.
 *
 * A record that fails on its n-th receive (`ApproximateReceiveCount` = n) is made visible again after a delay
 * drawn uniformly between the floor and the ceiling of receive n:
 *
 *   ceiling(n) = min(retryMaxDelaySeconds, retryBaseDelaySeconds × 2^(n−1))
 *   floor(n)   = ⌈ceiling(n) / 2⌉
 *
 * Half fixed, half jitter ("equal jitter"): the floor is what lets the budget promise a duration at all (with
 * full jitter every delay may be close to 0), the jitter spreads the records of one outage apart when it ends.
 * SQS counts receives, not failures: receive n+1 comes at least floor(1) + … + floor(n) after the first, and
 * the record reaches the DLQ on the receive after its `maxReceiveCount`-th.
 */

/** SQS refuses a visibility timeout reaching past 12 hours after the receive (ChangeMessageVisibility). */
export const SQS_MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200;
/**
 * The longest delay the consumer sets: 12 hours less Lambda's longest function timeout (15 min) and longest
 * batching window (5 min), the most that can pass between the receive and the visibility change.
 */
export const MAX_RETRY_DELAY_SECONDS = SQS_MAX_VISIBILITY_TIMEOUT_SECONDS - 15 * 60 - 5 * 60;
/**
 * A downstream outage of a day (a CRM or bot backend down) keeps records out of the DLQ (docs/decisions.md,
 * "resolveSettings refuses budgets that cannot ride out a day or outlive a queue").
 */
export const MIN_OUTAGE_RIDDEN_OUT_SECONDS = 24 * 3600;

export interface RetryBudget {
  /** Ceiling of the delay after a first failed receive. */
  readonly retryBaseDelaySeconds: number;
  /** Ceiling of every delay, backoff and `RetryLater` alike. */
  readonly retryMaxDelaySeconds: number;
  /** Receives before SQS moves a record to the DLQ (the queue's redrive policy). */
  readonly maxReceiveCount: number;
}

export type BackoffSettings = Pick<RetryBudget, 'retryBaseDelaySeconds' | 'retryMaxDelaySeconds'>;

/** The longest delay after failed receive `receiveCount` (1 = the first receive). */
export function backoffCeilingSeconds(receiveCount: number, settings: BackoffSettings): number {
  const n = Number.isFinite(receiveCount) ? Math.max(1, Math.floor(receiveCount)) : 1;
  // 2 ** 1100 is Infinity, which min() turns into the cap: no overflow to guard against.
  return Math.min(settings.retryMaxDelaySeconds, settings.retryBaseDelaySeconds * 2 ** (n - 1));
}

/** The shortest delay after failed receive `receiveCount`: half the ceiling, rounded up. */
export function backoffFloorSeconds(receiveCount: number, settings: BackoffSettings): number {
  return Math.ceil(backoffCeilingSeconds(receiveCount, settings) / 2);
}

/**
 * The longest downstream outage a record rides out when its first receive fails as the outage starts: its
 * last receive (the `maxReceiveCount`-th) comes at least this long after the first, whatever the draws.
 */
export function outageRiddenOutSeconds(budget: RetryBudget): number {
  let total = 0;
  for (let n = 1; n < budget.maxReceiveCount; n++) total += backoffFloorSeconds(n, budget);
  return total;
}

/** The sum of the ceilings over every receive: the longest a record backs off before the DLQ. */
export function longestBackoffSeconds(budget: RetryBudget): number {
  let total = 0;
  for (let n = 1; n <= budget.maxReceiveCount; n++) total += backoffCeilingSeconds(n, budget);
  return total;
}

/** The smallest `maxReceiveCount` with which `settings` ride out an outage of `seconds`. */
export function receivesToRideOut(seconds: number, settings: BackoffSettings): number {
  if (!(settings.retryBaseDelaySeconds >= 1 && settings.retryMaxDelaySeconds >= 1)) return Infinity;
  let receives = 1;
  let covered = 0;
  while (covered < seconds) {
    covered += backoffFloorSeconds(receives, settings);
    receives++;
  }
  return receives;
}

/**
 * What bounds a record's stay in one queue: its retry budget, with `maxReceiveCount` the receives the queue
 * allows before it redrives, and the timings of one receive.
 */
export interface QueueStay extends RetryBudget {
  readonly visibilityTimeoutSeconds: number;
  readonly consumerTimeoutSeconds: number;
  readonly maxBatchingWindowSeconds: number;
}

/**
 * The latest a record can still be in the delivery queue after its first receive, had every receive ended
 * in the longest delay the consumer sets (`RetryLater` may ask for the cap from the first receive on): per
 * receive, the record becomes visible again after the visibility timeout when no change is made (a crash),
 * or after the invocation's time plus the delay set at its end.
 */
export function longestTimeInQueueSeconds(s: QueueStay): number {
  const perReceive = Math.max(
    s.visibilityTimeoutSeconds,
    s.maxBatchingWindowSeconds + s.consumerTimeoutSeconds + s.retryMaxDelaySeconds,
  );
  return s.maxReceiveCount * perReceive;
}
