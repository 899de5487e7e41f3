/**
 * The queue adapter's failures. Kept apart from the adapter (which imports the AWS SDK), so that the
 * receiver's orchestration can tell them apart without importing it.
 */

/** Some message is still unstored after the retries (HTTP 503, so that Meta retries the delivery). */
export class EnqueueFailedError extends Error {
  constructor(
    readonly queue: 'delivery' | 'dead-letter',
    /** Messages not stored. */
    readonly unstored: number,
    readonly total: number,
    /** The last SQS error name or entry code seen, for logs. */
    readonly lastError: string,
  ) {
    super(`${unstored} of ${total} messages could not be stored in the ${queue} queue (${lastError}).`);
    this.name = 'EnqueueFailedError';
  }
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
