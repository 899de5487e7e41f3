/**
 * Brings failed records back sooner (or later) than the queue's visibility timeout: one
 * `ChangeMessageVisibilityBatch` per ten records, on the receipt handles of this delivery (a record held
 * back for a lease at the lease end, a failed one after its backoff or `RetryLater` delay). Lambda's event
 * source leaves a record reported in `batchItemFailures` on the queue, and SQS makes it visible again when
 * its visibility timeout ends, counted from the last change.
 */
import { ChangeMessageVisibilityBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { RecordRedelivery, RedeliveryScheduler } from './consumer-queue-port.ts';
import { RedeliveryNotScheduledError } from './errors.ts';

const MAX_BATCH_ENTRIES = 10;

export interface SqsRedeliverySchedulerOptions {
  readonly sqs: SQSClient;
  readonly deliveryQueueUrl: string;
}

export class SqsRedeliveryScheduler implements RedeliveryScheduler {
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;

  constructor(options: SqsRedeliverySchedulerOptions) {
    this.#sqs = options.sqs;
    this.#queueUrl = options.deliveryQueueUrl;
  }

  /** @throws RedeliveryNotScheduledError naming the entries SQS refused; the others are changed. */
  async redeliverAfter(redeliveries: readonly RecordRedelivery[]): Promise<void> {
    const entries = redeliveries.flatMap(({ record, delaySeconds }) =>
      record.receiptHandle === undefined
        ? []
        : [{ ReceiptHandle: record.receiptHandle, VisibilityTimeout: Math.round(delaySeconds) }],
    );
    const codes: string[] = [];
    for (let start = 0; start < entries.length; start += MAX_BATCH_ENTRIES) {
      const chunk = entries.slice(start, start + MAX_BATCH_ENTRIES);
      const output = await this.#sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: this.#queueUrl,
          Entries: chunk.map((entry, index) => ({ Id: String(index), ...entry })),
        }),
      );
      for (const failure of output.Failed ?? []) codes.push(failure.Code ?? 'Unknown');
    }
    if (codes.length > 0) throw new RedeliveryNotScheduledError(codes.length, codes);
  }
}
