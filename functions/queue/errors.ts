/**
 * The queue adapter's failures. Kept apart from the adapter (which imports the AWS SDK), so that the
 * receiver's orchestration can tell them apart without importing it.
 */

/**
 * Which queue a message was for: a subscriber's delivery queue, the pipeline's quarantine queue, or its
 * archive queue (the archive lane, docs/design.md "Archive").
 */
export type QueueRole = 'delivery' | 'quarantine' | 'archive';

/** Some message is still unstored after the retries (HTTP 503, so that Meta retries the delivery). */
export class EnqueueFailedError extends Error {
  constructor(
    readonly queue: QueueRole,
    /** Messages not stored. */
    readonly unstored: number,
    readonly total: number,
    /** The last SQS error name or entry code seen, for logs. */
    readonly lastError: string,
    /** Delivery queues: the subscribers whose queue misses messages (none when not known here). */
    readonly subscribers: readonly string[] = [],
  ) {
    super(
      `${unstored} of ${total} messages could not be stored in ${queueName(queue, subscribers)} (${lastError}).`,
    );
    this.name = 'EnqueueFailedError';
  }
}

function queueName(queue: QueueRole, subscribers: readonly string[]): string {
  if (subscribers.length === 0) return `the ${queue} queue`;
  return subscribers.length === 1
    ? `the ${queue} queue of subscriber ${subscribers[0]}`
    : `the ${queue} queues of subscribers ${subscribers.join(', ')}`;
}

/** Some failed records keep the queue's visibility timeout: SQS refused to change theirs. */
export class RedeliveryNotScheduledError extends Error {
  constructor(
    /** Records whose visibility was not changed. */
    readonly failed: number,
    codes: readonly string[],
  ) {
    super(`${failed} record(s) keep the queue's visibility timeout: ${[...new Set(codes)].join(', ')}`);
    this.name = 'RedeliveryNotScheduledError';
  }
}
