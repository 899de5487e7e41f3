/**
 * The delivery queue of the receiver: every part of a delivery as one message with `part`/`parts`,
 * `receivedAt` and `deliveryId` attributes; quarantines go to the dead-letter queue. Knows nothing about
 * WhatsApp: the receiver decides what the parts are.
 */
import type {
  DeliveryMeta,
  DeliveryQueuePort,
  EnqueueResult,
  QuarantineReason,
  QuarantineResult,
} from './delivery-queue-port.ts';
import {
  commonAttributes,
  MESSAGE_ATTRIBUTES_RESERVE_BYTES,
  numberAttribute,
  outgoing,
} from './outgoing-message.ts';
import { SqsBatchSender } from './sqs-batch-sender.ts';
import { SqsDeadLetterQueue, type SqsDeadLetterQueueOptions } from './sqs-dead-letter-queue.ts';

export interface SqsDeliveryQueueOptions extends SqsDeadLetterQueueOptions {
  readonly deliveryQueueUrl: string;
}

export class SqsDeliveryQueue implements DeliveryQueuePort {
  readonly maximumBodyBytes: number;
  readonly #deliveryQueueUrl: string;
  readonly #sender: SqsBatchSender;
  readonly #deadLetters: SqsDeadLetterQueue;

  constructor(options: SqsDeliveryQueueOptions) {
    this.#deadLetters = new SqsDeadLetterQueue(options);
    this.#sender = new SqsBatchSender(options);
    this.#deliveryQueueUrl = options.deliveryQueueUrl;
    this.maximumBodyBytes = options.maximumMessageSizeBytes - MESSAGE_ATTRIBUTES_RESERVE_BYTES;
  }

  async enqueue(parts: readonly string[], meta: DeliveryMeta): Promise<EnqueueResult> {
    const messages = parts.map((body, index) =>
      outgoing(body, {
        ...commonAttributes(meta),
        part: numberAttribute(index + 1),
        parts: numberAttribute(parts.length),
      }),
    );
    const rejected = await this.#sender.sendAll(this.#deliveryQueueUrl, 'delivery', messages, meta);
    return { rejected: rejected.map(({ index, code }) => ({ part: index, code })) };
  }

  quarantine(raw: Uint8Array, reason: QuarantineReason, meta: DeliveryMeta): Promise<QuarantineResult> {
    return this.#deadLetters.quarantine(raw, reason, meta);
  }
}
