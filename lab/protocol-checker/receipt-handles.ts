/**
 * A queue model's receipt handles, the same on standard and FIFO queues: every receive issues a new one, and a
 * delete or visibility change with a superseded handle of a message still queued succeeds as a call but takes
 * effect only by chance (`staleHandleEffectRate`), as SQS documents.
 */
import type { SeededRandom } from '../../cli/local/seeded-random.ts';

export type MessageState = 'queued' | 'deleted' | 'dead-letter';

export interface QueueMessage {
  readonly messageId: string;
  readonly body: string;
  /** The workload's id of the body, to know which events a dead-lettered message carried. */
  readonly bodyId: string;
  readonly sentAt: number;
  receiveCount: number;
  visibleAt: number;
  latestHandle: string | undefined;
  state: MessageState;
  /** When the redrive moved it to the dead-letter queue (or its consumer did, see `deadLetteredBy`). */
  deadLetteredAt?: number;
  /**
   * `consumer`: the queue deleted it, but its consumer had moved a copy to the lane's DLQ first (set on the
   * checker's view of the message at the end, never by the queue models).
   */
  readonly deadLetteredBy?: 'consumer';
}

/** What a call with a receipt handle did. */
export type HandleOutcome = 'applied' | 'stale-applied' | 'stale-ignored' | 'unknown-handle';

export class ReceiptHandles<Message extends QueueMessage> {
  readonly #prefix: string;
  readonly #random: SeededRandom;
  readonly #staleHandleEffectRate: number;
  readonly #byHandle = new Map<string, Message>();
  #issued = 0;

  constructor(prefix: string, random: SeededRandom, staleHandleEffectRate: number) {
    this.#prefix = prefix;
    this.#random = random;
    this.#staleHandleEffectRate = staleHandleEffectRate;
  }

  /** A fresh handle for `message`, which supersedes its earlier ones. */
  issue(message: Message): string {
    const receiptHandle = `${this.#prefix}-${++this.#issued}`;
    message.latestHandle = receiptHandle;
    this.#byHandle.set(receiptHandle, message);
    return receiptHandle;
  }

  delete(receiptHandle: string): HandleOutcome {
    return this.#apply(receiptHandle, (message) => {
      message.state = 'deleted';
    });
  }

  changeVisibility(receiptHandle: string, now: number, visibilityTimeoutSeconds: number): HandleOutcome {
    return this.#apply(receiptHandle, (message) => {
      message.visibleAt = now + visibilityTimeoutSeconds * 1000;
    });
  }

  #apply(receiptHandle: string, change: (message: Message) => void): HandleOutcome {
    const message = this.#byHandle.get(receiptHandle);
    if (message === undefined) return 'unknown-handle';
    if (message.state !== 'queued') return 'applied';
    if (message.latestHandle === receiptHandle) {
      change(message);
      return 'applied';
    }
    if (!this.#random.chance(this.#staleHandleEffectRate)) return 'stale-ignored';
    change(message);
    return 'stale-applied';
  }
}
