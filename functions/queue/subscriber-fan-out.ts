/**
 * The receiver's delivery side: the parts of one delivery, each as one message with `part`/`parts`,
 * `receivedAt` and `deliveryId` attributes, into the queue of every subscriber it is given, the subscribers in
 * parallel. Knows nothing about WhatsApp or fields: the receiver decides the parts and the subscribers.
 */
import type { SubscriberQueue } from '../../contract/subscribers.ts';
import type { DeliveryMeta, FanOutPort, FanOutResult, RejectedPart } from './delivery-queue-port.ts';
import { EnqueueFailedError } from './errors.ts';
import {
  commonAttributes,
  type DeliveryAttributeName,
  MESSAGE_ATTRIBUTES_RESERVE_BYTES,
  type MessageAttributesOf,
  numberAttribute,
  outgoing,
} from './outgoing-message.ts';
import { SqsBatchSender, type SqsBatchSenderOptions } from './sqs-batch-sender.ts';

export class SubscriberFanOut implements FanOutPort {
  readonly maximumBodyBytes: number;
  readonly #sender: SqsBatchSender;

  constructor(options: SqsBatchSenderOptions) {
    this.#sender = new SqsBatchSender(options);
    this.maximumBodyBytes = options.maximumMessageSizeBytes - MESSAGE_ATTRIBUTES_RESERVE_BYTES;
  }

  async enqueue(
    subscribers: readonly SubscriberQueue[],
    parts: readonly string[],
    meta: DeliveryMeta,
  ): Promise<FanOutResult> {
    // Built once: every subscriber gets the same messages.
    const messages = parts.map((body, index) =>
      outgoing(body, {
        ...commonAttributes(meta),
        part: numberAttribute(index + 1),
        parts: numberAttribute(parts.length),
      } satisfies MessageAttributesOf<DeliveryAttributeName>),
    );
    // Settled, not raced: each queue gets its full retries even when another has already failed, so that a
    // retry of the delivery finds as many subscribers as possible already served.
    const outcomes = await Promise.allSettled(
      subscribers.map(({ queueUrl }) => this.#sender.sendAll(queueUrl, 'delivery', messages, meta)),
    );
    const rejected: RejectedPart[] = [];
    const failed: { subscriber: string; error: unknown }[] = [];
    outcomes.forEach((outcome, index) => {
      const subscriber = subscribers[index]?.name ?? '';
      if (outcome.status === 'rejected') failed.push({ subscriber, error: outcome.reason });
      else for (const { index: part, code } of outcome.value) rejected.push({ subscriber, part, code });
    });
    if (failed.length > 0) throw unstoredIn(failed, messages.length);
    return { rejected };
  }
}

/** One error for every subscriber whose queue still misses messages; anything else is rethrown as is. */
function unstoredIn(failed: readonly { subscriber: string; error: unknown }[], total: number): unknown {
  const unexpected = failed.find(({ error }) => !(error instanceof EnqueueFailedError));
  if (unexpected !== undefined) return unexpected.error;
  const errors = failed.map(({ error }) => error as EnqueueFailedError);
  return new EnqueueFailedError(
    'delivery',
    errors.reduce((sum, error) => sum + error.unstored, 0),
    total * failed.length,
    errors.at(-1)?.lastError ?? '',
    failed.map(({ subscriber }) => subscriber),
  );
}
