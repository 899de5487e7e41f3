/**
 * The lanes' SQS queues at scale, in virtual time: a standard queue (the status lane) and a FIFO queue grouped
 * by conversation (the message lane), each with its visibility timeout, receive counts and redrive to its DLQ
 * after `maxReceiveCount` receives. Built for millions of messages: visible messages wait in a deque, a
 * message in flight comes back by a timer, a FIFO group is handed out only when none of its messages is in
 * flight (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html),
 * and a FIFO deduplication id absorbs a repeat within 5 minutes
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-exactly-once-processing.html).
 * The protocol simulator's queues (../standard-queue.ts, ../fifo-queue.ts) model SQS's duplicate deliveries and
 * stale handles for a few messages; these model throughput and waits, not those faults.
 */
import type { Engine, Timer } from '../virtual-time/engine.ts';

export interface LaneMessage {
  readonly messageId: string;
  readonly body: string;
  readonly attributes: Record<string, { DataType: string; StringValue?: string }>;
  readonly sentAt: number;
  readonly groupId: string | undefined;
  readonly deduplicationId: string | undefined;
  readonly sequenceNumber: string | undefined;
  receiveCount: number;
  /** The receipt handle of its current receive; undefined while visible. */
  handle: string | undefined;
  /** Which scheduled return is current (a visibility change supersedes the earlier one). */
  returnToken: number;
  /** The current return's timer, cancelled when the message is deleted or its visibility changed. */
  returnTimer: Timer | undefined;
  firstReceivedAt: number | undefined;
  deleted: boolean;
  /** What its sender tracks it by (the simulation: the event key it carries); the queue never reads it. */
  tag: string | undefined;
}

export interface Received {
  readonly message: LaneMessage;
  readonly receiptHandle: string;
}

export interface QueueSettings {
  readonly visibilityTimeoutMs: number;
  readonly maxReceiveCount: number;
}

/** Both queue kinds, as the event source and the SQS client see them. */
export abstract class LaneQueue {
  readonly name: string;
  readonly settings: QueueSettings;
  protected readonly engine: Engine;
  readonly #inFlight = new Map<string, LaneMessage>();
  #handles = 0;
  #ids = 0;
  sent = 0;
  deduplicated = 0;
  deadLettered = 0;
  /** Messages sent and not yet deleted or dead-lettered. */
  backlog = 0;
  #onArrival: (() => void) | undefined;
  #onSent: ((message: LaneMessage) => void) | undefined;
  #onLeft: ((message: LaneMessage) => void) | undefined;

  constructor(name: string, settings: QueueSettings, engine: Engine) {
    this.name = name;
    this.settings = settings;
    this.engine = engine;
  }

  /** Called once per message that becomes visible (the event source wakes a waiting poller). */
  onArrival(listener: () => void): void {
    this.#onArrival = listener;
  }

  /** Called once per message sent (not for a copy its FIFO deduplication id dropped), before it is visible. */
  onSent(listener: (message: LaneMessage) => void): void {
    this.#onSent = listener;
  }

  /** Called once per message that left the queue: deleted, or moved to the DLQ. */
  onLeft(listener: (message: LaneMessage) => void): void {
    this.#onLeft = listener;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  abstract get visible(): number;
  abstract receive(max: number): Received[];
  protected abstract makeVisible(message: LaneMessage): void;
  /** The message left the queue (deleted, or dead-lettered); `fromFlight`: it was in flight. */
  protected abstract forget(message: LaneMessage, fromFlight: boolean): void;

  protected newMessage(
    body: string,
    attributes: LaneMessage['attributes'],
    fifo?: { groupId: string; deduplicationId: string },
  ): LaneMessage {
    this.sent++;
    this.backlog++;
    const id = ++this.#ids;
    const message: LaneMessage = {
      messageId: `${this.name}-${id}`,
      body,
      attributes,
      sentAt: this.engine.now,
      groupId: fifo?.groupId,
      deduplicationId: fifo?.deduplicationId,
      sequenceNumber: fifo === undefined ? undefined : String(id).padStart(20, '0'),
      receiveCount: 0,
      handle: undefined,
      returnToken: 0,
      returnTimer: undefined,
      firstReceivedAt: undefined,
      deleted: false,
      tag: undefined,
    };
    this.#onSent?.(message);
    return message;
  }

  protected arrived(): void {
    this.#onArrival?.();
  }

  /** Hands the message out (or dead-letters it past its receives): undefined when it went to the DLQ. */
  protected handOut(message: LaneMessage): Received | undefined {
    if (message.receiveCount >= this.settings.maxReceiveCount) {
      // SQS moves a message to the DLQ when a receive would exceed maxReceiveCount.
      message.deleted = true;
      this.deadLettered++;
      this.backlog--;
      this.forget(message, false);
      this.#onLeft?.(message);
      return undefined;
    }
    message.receiveCount++;
    message.firstReceivedAt ??= this.engine.now;
    const handle = `${message.messageId}#${++this.#handles}`;
    message.handle = handle;
    this.#inFlight.set(handle, message);
    this.#returnAfter(message, this.settings.visibilityTimeoutMs);
    return { message, receiptHandle: handle };
  }

  #returnAfter(message: LaneMessage, delayMs: number): void {
    const token = ++message.returnToken;
    if (message.returnTimer !== undefined) this.engine.cancel(message.returnTimer);
    message.returnTimer = this.engine.after(delayMs, () => {
      if (message.returnToken !== token || message.deleted || message.handle === undefined) return;
      message.returnTimer = undefined;
      this.#inFlight.delete(message.handle);
      message.handle = undefined;
      this.makeVisible(message);
    });
  }

  delete(receiptHandle: string): boolean {
    const message = this.#inFlight.get(receiptHandle);
    if (message === undefined) return false;
    this.#inFlight.delete(receiptHandle);
    message.deleted = true;
    message.handle = undefined;
    // Its return would do nothing now; cancelled, the timer no longer holds the message and its body.
    if (message.returnTimer !== undefined) this.engine.cancel(message.returnTimer);
    message.returnTimer = undefined;
    this.backlog--;
    this.forget(message, true);
    this.#onLeft?.(message);
    return true;
  }

  /** ChangeMessageVisibility: the message comes back `seconds` from now (it stays in flight until then). */
  changeVisibility(receiptHandle: string, seconds: number): boolean {
    const message = this.#inFlight.get(receiptHandle);
    if (message === undefined) return false;
    this.#returnAfter(message, seconds * 1000);
    return true;
  }
}

/** A deque of visible items: push at the back, shift from the front, amortised O(1). */
class Deque<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head > 4096 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}

export class StandardLaneQueue extends LaneQueue {
  readonly #visible = new Deque<LaneMessage>();

  get visible(): number {
    return this.#visible.length;
  }

  send(body: string, attributes: LaneMessage['attributes']): LaneMessage {
    const message = this.newMessage(body, attributes);
    this.makeVisible(message);
    return message;
  }

  receive(max: number): Received[] {
    const out: Received[] = [];
    while (out.length < max) {
      const message = this.#visible.shift();
      if (message === undefined) break;
      const received = this.handOut(message);
      if (received !== undefined) out.push(received);
    }
    return out;
  }

  protected makeVisible(message: LaneMessage): void {
    this.#visible.push(message);
    this.arrived();
  }

  protected forget(): void {
    // A standard message leaves no trace behind it.
  }
}

interface Group {
  readonly id: string;
  /** Its undeleted messages in order; those in flight are at the front. */
  readonly messages: LaneMessage[];
  inFlight: number;
  ready: boolean;
}

/** Five minutes. https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-exactly-once-processing.html */
export const FIFO_DEDUPLICATION_MS = 5 * 60 * 1000;

export class FifoLaneQueue extends LaneQueue {
  readonly #groups = new Map<string, Group>();
  readonly #ready = new Deque<Group>();
  readonly #deduplication = new Map<string, number>();
  #visibleCount = 0;

  get visible(): number {
    return this.#visibleCount;
  }

  /** Groups holding at least one message. */
  get activeGroups(): number {
    return this.#groups.size;
  }

  send(
    body: string,
    attributes: LaneMessage['attributes'],
    fifo: { groupId: string; deduplicationId: string },
  ): { message: LaneMessage | undefined; deduplicated: boolean } {
    const seenAt = this.#deduplication.get(fifo.deduplicationId);
    if (seenAt !== undefined && this.engine.now - seenAt < FIFO_DEDUPLICATION_MS) {
      this.deduplicated++;
      return { message: undefined, deduplicated: true };
    }
    const at = this.engine.now;
    this.#deduplication.set(fifo.deduplicationId, at);
    this.engine.after(FIFO_DEDUPLICATION_MS, () => {
      if (this.#deduplication.get(fifo.deduplicationId) === at)
        this.#deduplication.delete(fifo.deduplicationId);
    });
    const message = this.newMessage(body, attributes, fifo);
    let group = this.#groups.get(fifo.groupId);
    if (group === undefined) {
      group = { id: fifo.groupId, messages: [], inFlight: 0, ready: false };
      this.#groups.set(fifo.groupId, group);
    }
    group.messages.push(message);
    this.#visibleCount++;
    this.#markReady(group);
    this.arrived();
    return { message, deduplicated: false };
  }

  #markReady(group: Group): void {
    if (group.ready || group.inFlight > 0 || group.messages.length === 0) return;
    group.ready = true;
    this.#ready.push(group);
  }

  /** As many messages of one group as fit, then the next group's (SQS's FIFO receive logic). */
  receive(max: number): Received[] {
    const out: Received[] = [];
    while (out.length < max) {
      const group = this.#ready.shift();
      if (group === undefined) break;
      group.ready = false;
      if (group.inFlight > 0) continue;
      for (const message of [...group.messages]) {
        if (out.length >= max) break;
        this.#visibleCount--;
        const received = this.handOut(message);
        if (received === undefined) continue;
        group.inFlight++;
        out.push(received);
      }
      if (group.inFlight === 0) this.#markReady(group);
    }
    return out;
  }

  protected makeVisible(message: LaneMessage): void {
    const group = this.#groups.get(message.groupId ?? '') as Group;
    group.inFlight--;
    this.#visibleCount++;
    if (group.inFlight === 0) {
      this.#markReady(group);
      this.arrived();
    }
  }

  protected forget(message: LaneMessage, fromFlight: boolean): void {
    const group = this.#groups.get(message.groupId ?? '');
    if (group === undefined) return;
    const index = group.messages.indexOf(message);
    if (index >= 0) group.messages.splice(index, 1);
    if (fromFlight) group.inFlight--;
    if (group.messages.length === 0 && group.inFlight === 0) {
      this.#groups.delete(group.id);
      return;
    }
    if (group.inFlight === 0 && !group.ready) {
      this.#markReady(group);
      this.arrived();
    }
  }
}
