/**
 * An SQS FIFO queue in high-throughput mode, with its redrive to a FIFO dead-letter queue, in virtual time:
 *
 * - message groups: a group is locked while any of its messages is in flight (received, neither deleted nor
 *   visible again); a receive hands out up to `maxMessages` messages, from unlocked groups only, as many of a
 *   group as it can, each group's in the order they were sent;
 * - no duplicate delivery of an in-flight message (unlike the standard queue): a message comes back only once
 *   its visibility timeout ran out, or its visibility was changed, with a fresh receipt handle and one more
 *   receive count; Lambda's event source on top of it is still at least once (a lost delete, a timeout);
 * - a delete or visibility change with a superseded receipt handle may or may not take effect, chosen by seed,
 *   as on the standard queue;
 * - a message at the head of its group already received `maxReceiveCount` times is moved to the dead-letter
 *   queue by the next receive that would hand it out, which unblocks its group;
 * - deduplication scoped to the message group: a message whose deduplication id its group saw within the last
 *   5 minutes is accepted but not stored again.
 * The order in which a receive visits the groups is drawn by seed.
 */
import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import { ReceiptHandles } from './receipt-handles.ts';
import type {
  Delivery,
  HandleOutcome,
  MessageState,
  QueueMessage,
  QueueSettings,
  ReceiveResult,
} from './standard-queue.ts';

/** SQS's deduplication interval. */
export const DEDUPLICATION_INTERVAL_MS = 5 * 60 * 1000;

export type FifoQueueSettings = Omit<QueueSettings, 'duplicateDeliveryRate'>;

/** What the event source and the SQS link need of a queue model (StandardQueue and FifoQueue). */
export interface QueueModel {
  readonly settings: Pick<QueueSettings, 'visibilityTimeoutMs' | 'maxReceiveCount'>;
  receive(now: number, maxMessages: number): ReceiveResult;
  delete(receiptHandle: string): HandleOutcome;
  changeVisibility(receiptHandle: string, now: number, visibilityTimeoutSeconds: number): HandleOutcome;
  nextVisibleAt(): number | undefined;
  drained(): boolean;
  messages(): readonly QueueMessage[];
}

export interface FifoMessage extends QueueMessage {
  readonly groupId: string;
  readonly deduplicationId: string;
  /** SQS's `SequenceNumber`: increasing in send order. */
  readonly sequenceNumber: string;
}

export interface FifoSendResult {
  readonly message: FifoMessage;
  /** Its deduplication id was seen in its group within 5 minutes: `message` is the one stored then. */
  readonly deduplicated: boolean;
}

export class FifoQueue implements QueueModel {
  readonly #settings: FifoQueueSettings;
  readonly #random: SeededRandom;
  readonly #messages: FifoMessage[] = [];
  readonly #groups = new Map<string, FifoMessage[]>();
  /** `<group> <deduplication id>` → the message stored for it. */
  readonly #deduplication = new Map<string, FifoMessage>();
  readonly #handles: ReceiptHandles<FifoMessage>;

  constructor(settings: FifoQueueSettings, random: SeededRandom) {
    this.#settings = settings;
    this.#random = random;
    this.#handles = new ReceiptHandles('frh', random, settings.staleHandleEffectRate);
  }

  get settings(): FifoQueueSettings {
    return this.#settings;
  }

  send(
    body: string,
    bodyId: string,
    now: number,
    ids: { readonly groupId: string; readonly deduplicationId: string },
  ): FifoSendResult {
    const scope = `${ids.groupId} ${ids.deduplicationId}`;
    const seen = this.#deduplication.get(scope);
    if (seen !== undefined && now < seen.sentAt + DEDUPLICATION_INTERVAL_MS) {
      return { message: seen, deduplicated: true };
    }
    const position = this.#messages.length + 1;
    const message: FifoMessage = {
      messageId: `fifo-${String(position).padStart(3, '0')}`,
      body,
      bodyId,
      sentAt: now,
      receiveCount: 0,
      visibleAt: now,
      latestHandle: undefined,
      state: 'queued' as MessageState,
      groupId: ids.groupId,
      deduplicationId: ids.deduplicationId,
      sequenceNumber: String(position).padStart(20, '0'),
    };
    this.#messages.push(message);
    const group = this.#groups.get(ids.groupId);
    if (group === undefined) this.#groups.set(ids.groupId, [message]);
    else group.push(message);
    this.#deduplication.set(scope, message);
    return { message, deduplicated: false };
  }

  receive(now: number, maxMessages: number): ReceiveResult {
    const deliveries: Delivery[] = [];
    const deadLettered: QueueMessage[] = [];
    for (const group of this.#random.shuffle([...this.#groups.values()])) {
      if (deliveries.length >= maxMessages) break;
      const queued = group.filter((message) => message.state === 'queued');
      if (queued.some((message) => message.visibleAt > now)) continue;
      for (const message of queued) {
        if (deliveries.length >= maxMessages) break;
        if (message.receiveCount >= this.#settings.maxReceiveCount) {
          message.state = 'dead-letter';
          message.deadLetteredAt = now;
          deadLettered.push(message);
          continue;
        }
        message.receiveCount++;
        message.visibleAt = now + this.#settings.visibilityTimeoutMs;
        const receiptHandle = this.#handles.issue(message);
        deliveries.push({ message, receiptHandle, receiveCount: message.receiveCount, duplicate: false });
      }
    }
    return { deliveries, deadLettered };
  }

  delete(receiptHandle: string): HandleOutcome {
    return this.#handles.delete(receiptHandle);
  }

  changeVisibility(receiptHandle: string, now: number, visibilityTimeoutSeconds: number): HandleOutcome {
    return this.#handles.changeVisibility(receiptHandle, now, visibilityTimeoutSeconds);
  }

  /**
   * When a receive may next hand something out, or undefined when nothing is queued: a group whose messages
   * are all visible can be received now; a locked one once its last in-flight message is visible again (a
   * delete may unlock it sooner: the event source polls again after each invocation).
   */
  nextVisibleAt(): number | undefined {
    let next: number | undefined;
    for (const group of this.#groups.values()) {
      const queued = group.filter((message) => message.state === 'queued');
      if (queued.length === 0) continue;
      const at = Math.max(...queued.map((message) => message.visibleAt));
      if (next === undefined || at < next) next = at;
    }
    return next;
  }

  drained(): boolean {
    return this.#messages.every((message) => message.state !== 'queued');
  }

  messages(): readonly FifoMessage[] {
    return this.#messages;
  }
}

export function isFifoMessage(message: QueueMessage): message is FifoMessage {
  return 'groupId' in message;
}
