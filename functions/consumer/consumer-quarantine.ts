import type { QuarantinePort } from '../queue/delivery-queue-port.ts';
import type { ConsumerQuarantineReason, QuarantineBody } from './consumer-ports.ts';

/** Time the consumer gives the quarantine write (with its own retries) before it fails the record instead. */
export const QUARANTINE_BUDGET_MS = 3000;

/**
 * The consumer's quarantine, over the same quarantine adapter as the receiver's (`SqsQuarantineQueue`), so that a quarantined body looks the same
 * whichever side put it there (base64 body, `reason`, `contentEncoding`, `receivedAt`, `deliveryId` = the SQS
 * message id here).
 */
export function createConsumerQuarantine(
  queue: QuarantinePort,
  clock: () => number = Date.now,
): QuarantineBody {
  return async (record, reason: ConsumerQuarantineReason) => {
    const proof = record.messageAttributes?.proof?.stringValue;
    await queue.quarantine(Buffer.from(record.body, 'utf8'), reason, {
      deliveryId: record.messageId,
      receivedAt: new Date(clock()).toISOString(),
      retryDeadline: clock() + QUARANTINE_BUDGET_MS,
      // The receiver proved the record's bytes; the consumer, which holds no provenance key, passes it on.
      ...(proof === undefined ? {} : { proof }),
    });
  };
}
