/**
 * An SQS standard queue with its redrive to a dead-letter queue, in virtual time:
 *
 * - at-least-once: a receive may hand out again a message that is still in flight (a duplicate delivery, as
 *   when the copy on another SQS host answers), with a fresh receipt handle and one more receive count;
 * - a received message is invisible for the visibility timeout, then visible again if nobody deleted it;
 * - every receive issues a new receipt handle; a delete or visibility change with an older handle of the same
 *   message succeeds as a call but may or may not take effect (SQS documents exactly that), chosen by seed;
 * - a message received `maxReceiveCount` times is moved to the dead-letter queue by the next receive that
 *   would hand it out;
 * - no ordering: each receive shuffles the visible messages.
 */
import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import { type HandleOutcome, type QueueMessage, ReceiptHandles } from './receipt-handles.ts';

export type { HandleOutcome, MessageState, QueueMessage } from './receipt-handles.ts';

export interface QueueSettings {
  readonly visibilityTimeoutMs: number;
  readonly maxReceiveCount: number;
  /** Chance that a receive also hands out each message currently in flight. */
  readonly duplicateDeliveryRate: number;
  /** Chance that a delete or visibility change with a superseded receipt handle takes effect. */
  readonly staleHandleEffectRate: number;
}

export interface Delivery {
  readonly message: QueueMessage;
  readonly receiptHandle: string;
  readonly receiveCount: number;
  /** Handed out while an earlier delivery was still in flight. */
  readonly duplicate: boolean;
}

export interface ReceiveResult {
  readonly deliveries: readonly Delivery[];
  readonly deadLettered: readonly QueueMessage[];
}

export class StandardQueue {
  readonly #settings: QueueSettings;
  readonly #random: SeededRandom;
  readonly #messages: QueueMessage[] = [];
  readonly #handles: ReceiptHandles<QueueMessage>;

  constructor(settings: QueueSettings, random: SeededRandom) {
    this.#settings = settings;
    this.#random = random;
    this.#handles = new ReceiptHandles('rh', random, settings.staleHandleEffectRate);
  }

  get settings(): QueueSettings {
    return this.#settings;
  }

  send(body: string, bodyId: string, now: number): QueueMessage {
    const message: QueueMessage = {
      messageId: `msg-${String(this.#messages.length + 1).padStart(3, '0')}`,
      body,
      bodyId,
      sentAt: now,
      receiveCount: 0,
      visibleAt: now,
      latestHandle: undefined,
      state: 'queued',
    };
    this.#messages.push(message);
    return message;
  }

  receive(now: number, maxMessages: number): ReceiveResult {
    const deliveries: Delivery[] = [];
    const deadLettered: QueueMessage[] = [];
    for (const message of this.#random.shuffle(this.#messages)) {
      if (deliveries.length >= maxMessages || message.state !== 'queued') continue;
      const visible = message.visibleAt <= now;
      if (!visible && !this.#random.chance(this.#settings.duplicateDeliveryRate)) continue;
      if (message.receiveCount >= this.#settings.maxReceiveCount) {
        if (visible) {
          message.state = 'dead-letter';
          message.deadLetteredAt = now;
          deadLettered.push(message);
        }
        continue;
      }
      message.receiveCount++;
      message.visibleAt = Math.max(message.visibleAt, now + this.#settings.visibilityTimeoutMs);
      const receiptHandle = this.#handles.issue(message);
      deliveries.push({ message, receiptHandle, receiveCount: message.receiveCount, duplicate: !visible });
    }
    return { deliveries, deadLettered };
  }

  delete(receiptHandle: string): HandleOutcome {
    return this.#handles.delete(receiptHandle);
  }

  changeVisibility(receiptHandle: string, now: number, visibilityTimeoutSeconds: number): HandleOutcome {
    return this.#handles.changeVisibility(receiptHandle, now, visibilityTimeoutSeconds);
  }

  /** When the next queued message becomes visible, or undefined when none is queued. */
  nextVisibleAt(): number | undefined {
    let next: number | undefined;
    for (const message of this.#messages) {
      if (message.state === 'queued' && (next === undefined || message.visibleAt < next)) {
        next = message.visibleAt;
      }
    }
    return next;
  }

  /** Every message deleted or dead-lettered. */
  drained(): boolean {
    return this.#messages.every((message) => message.state !== 'queued');
  }

  messages(): readonly QueueMessage[] {
    return this.#messages;
  }
}
