/**
 * The receiver's delivery side: the parts of one delivery, each as one message with `part`/`parts`,
 * `receivedAt` and `deliveryId` attributes (and `conversation` for a message-lane part), into the queues the
 * routes name, the queues in parallel; on an ordered lane with its FIFO ids. Knows nothing about WhatsApp or
 * fields: the receiver decides the parts and which queue gets which.
 */

import type { ProofSigner } from '../commons/provenance.ts';
import { ConversationSendOrder } from './conversation-send-order.ts';
import type {
  DeliveryMeta,
  DeliveryPart,
  DeliveryRoute,
  FanOutPort,
  FanOutResult,
  RejectedPart,
} from './delivery-queue-port.ts';
import { EnqueueFailedError } from './errors.ts';
import {
  deliveryPartAttributes,
  fifoIds,
  inFairnessGroup,
  MESSAGE_ATTRIBUTES_RESERVE_BYTES,
  type OutgoingMessage,
  outgoing,
} from './outgoing-message.ts';
import { SqsBatchSender, type SqsBatchSenderOptions } from './sqs-batch-sender.ts';

export interface SubscriberFanOutOptions extends SqsBatchSenderOptions {
  /**
   * Proves each part's bytes (functions/commons/provenance.ts), so that a consumer quarantining a record passes
   * on a proof it could not make.
   */
  readonly proofs?: ProofSigner;
}

export class SubscriberFanOut implements FanOutPort {
  readonly maximumBodyBytes: number;
  readonly #sender: SqsBatchSender;
  readonly #order = new ConversationSendOrder();
  readonly #proofs: ProofSigner | undefined;

  constructor(options: SubscriberFanOutOptions) {
    this.#sender = new SqsBatchSender(options);
    this.#proofs = options.proofs;
    this.maximumBodyBytes = options.maximumMessageSizeBytes - MESSAGE_ATTRIBUTES_RESERVE_BYTES;
  }

  async enqueue(
    parts: readonly DeliveryPart[],
    routes: readonly DeliveryRoute[],
    meta: DeliveryMeta,
  ): Promise<FanOutResult> {
    // Built once: every queue that gets a part gets the same message (with FIFO ids on an ordered lane).
    const proofs = await Promise.all(parts.map((part) => this.#proofs?.(part.body)));
    const standard = parts.map((part, index) =>
      inFairnessGroup(
        outgoing(
          part.body,
          deliveryPartAttributes(meta, index, parts.length, part.conversationId, proofs[index]),
        ),
        part.fairnessGroup,
      ),
    );
    const fifo = new Map<number, OutgoingMessage>();
    const fifoMessage = (index: number): OutgoingMessage => {
      const part = parts[index] as DeliveryPart;
      const { body, attributes } = standard[index] as OutgoingMessage;
      const message =
        fifo.get(index) ??
        outgoing(body, attributes, fifoIds(part.conversationId ?? '-', part.eventKeys ?? [], body));
      fifo.set(index, message);
      return message;
    };
    // Settled, not raced: each queue gets its full retries even when another has already failed, so that a
    // retry of the delivery finds as many queues as possible already served.
    const outcomes = await Promise.allSettled(
      routes.map((route) => {
        const routed = route.parts.map((index) =>
          route.ordered === true ? fifoMessage(index) : (standard[index] as OutgoingMessage),
        );
        const send = () => this.#sender.sendAll(route.queueUrl, 'delivery', routed, meta);
        if (route.ordered !== true) return send();
        const conversations = route.parts.map((index) => parts[index]?.conversationId ?? '-');
        return this.#order.run(route.queueUrl, conversations, send);
      }),
    );
    const rejected: RejectedPart[] = [];
    const failed: { subscriber: string; error: unknown }[] = [];
    let unstoredTotal = 0;
    outcomes.forEach((outcome, routeIndex) => {
      const route = routes[routeIndex] as DeliveryRoute;
      if (outcome.status === 'rejected') {
        unstoredTotal += route.parts.length;
        failed.push({ subscriber: route.subscriber, error: outcome.reason });
        return;
      }
      for (const { index, code } of outcome.value) {
        rejected.push({ subscriber: route.subscriber, part: route.parts[index] as number, code });
      }
    });
    if (failed.length > 0) throw unstoredIn(failed, unstoredTotal);
    return { rejected };
  }
}

/** `total`: the messages of the failed queues. */
function unstoredIn(failed: readonly { subscriber: string; error: unknown }[], total: number): unknown {
  const unexpected = failed.find(({ error }) => !(error instanceof EnqueueFailedError));
  if (unexpected !== undefined) return unexpected.error;
  const errors = failed.map(({ error }) => error as EnqueueFailedError);
  return new EnqueueFailedError(
    'delivery',
    errors.reduce((sum, error) => sum + error.unstored, 0),
    total,
    errors.at(-1)?.lastError ?? '',
    [...new Set(failed.map(({ subscriber }) => subscriber))],
  );
}
