/**
 * The lanes' SQS queues at scale, in virtual time: a standard queue (the status lane), fair between the tenants
 * its messages' MessageGroupIds name (StandardLaneQueue, FAIR_QUEUE), and a FIFO queue grouped by conversation
 * (the message lane), each with its visibility timeout, receive counts and redrive to its DLQ after
 * `maxReceiveCount` receives. Built for millions of messages: visible messages wait in a deque, a
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
  /** Its MessageGroupId: a FIFO queue's group, or a standard (fair) queue's tenant; undefined without one. */
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
  /** When its current receive took it; undefined while visible. */
  receivedAt: number | undefined;
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

  /** `ids`: its MessageGroupId, and on a FIFO queue its deduplication id too. */
  protected newMessage(
    body: string,
    attributes: LaneMessage['attributes'],
    ids?: { groupId: string; deduplicationId?: string },
  ): LaneMessage {
    this.sent++;
    this.backlog++;
    const id = ++this.#ids;
    const message: LaneMessage = {
      messageId: `${this.name}-${id}`,
      body,
      attributes,
      sentAt: this.engine.now,
      groupId: ids?.groupId,
      deduplicationId: ids?.deduplicationId,
      sequenceNumber: ids?.deduplicationId === undefined ? undefined : String(id).padStart(20, '0'),
      receiveCount: 0,
      handle: undefined,
      returnToken: 0,
      returnTimer: undefined,
      firstReceivedAt: undefined,
      receivedAt: undefined,
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
    message.receivedAt = this.engine.now;
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

  /** The front item, left in place. */
  peek(): T | undefined {
    return this.#items[this.#head];
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

/**
 * SQS fair queues: a standard queue's messages sent with a MessageGroupId are its tenants'
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues-detailed.html).
 * A tenant is noisy when it has more than `inFlightShare` of the queue's messages in flight and at least
 * `minimumInFlight` of its own, or more than `processingTimeShare` of the consumers' recent processing time; it
 * is quiet again once its backlog is empty or it has sent nothing for `quietAfterMs`.
 */
export const FAIR_QUEUE = {
  inFlightShare: 0.1,
  minimumInFlight: 30,
  processingTimeShare: 0.1,
  /** What "recent" processing time covers: assumed, AWS publishes no window. */
  processingWindowMs: 60_000,
  quietAfterMs: 5 * 60_000,
} as const;

const WINDOW_SECONDS = FAIR_QUEUE.processingWindowMs / 1000;

/** Milliseconds of processing within the last `WINDOW_SECONDS` whole seconds, in one-second buckets. */
class RecentProcessing {
  readonly #buckets = new Float64Array(WINDOW_SECONDS);
  #second = 0;
  #sum = 0;

  add(now: number, ms: number): void {
    const second = this.#advance(now);
    this.#buckets[second % WINDOW_SECONDS] = (this.#buckets[second % WINDOW_SECONDS] ?? 0) + ms;
    this.#sum += ms;
  }

  total(now: number): number {
    this.#advance(now);
    return this.#sum;
  }

  #advance(now: number): number {
    const second = Math.floor(now / 1000);
    if (second - this.#second >= WINDOW_SECONDS) {
      this.#buckets.fill(0);
      this.#sum = 0;
    } else {
      for (let s = this.#second + 1; s <= second; s++) {
        this.#sum -= this.#buckets[s % WINDOW_SECONDS] ?? 0;
        this.#buckets[s % WINDOW_SECONDS] = 0;
      }
    }
    this.#second = Math.max(this.#second, second);
    return this.#second;
  }
}

/** One tenant's visible messages, each with its place in the queue's order, and what detection reads. */
class Tenant {
  /** undefined: the messages sent without a MessageGroupId, each a tenant of its own. */
  readonly id: string | undefined;
  readonly visible = new Deque<LaneMessage>();
  readonly order = new Deque<number>();
  inFlight = 0;
  noisy = false;
  lastSentAt = Number.NEGATIVE_INFINITY;
  readonly processing = new RecentProcessing();

  constructor(id: string | undefined) {
    this.id = id;
  }
}

/**
 * A standard queue, first in first out in practice (every message that becomes visible, sent or back from its
 * visibility timeout, joins the back) and, unless `fair: false`, a fair queue between the tenants its messages'
 * MessageGroupIds name (FAIR_QUEUE): while a tenant is noisy, a receive hands out every quiet tenant's visible
 * message first, oldest first, then the noisy tenants', the one with the fewest messages in flight first, so
 * that a noisy tenant's messages are delayed, never dropped. Without fairness, or with no noisy tenant, the
 * order is the queue's.
 *
 * Approximations of what AWS documents (its own thresholds are approximate, "a distributed system"):
 * - detection runs at each receive, on the tenants with a visible message (the only ones whose order it can
 *   change); a tenant's processing time is the time its messages spent in flight (receive to delete or to the
 *   end of their visibility timeout), counted when they leave flight, over the last `processingWindowMs`
 *   (assumed);
 * - a tenant found noisy stays noisy until one of the two exits AWS lists (AWS also says the priority lasts
 *   until its shares fall to the quiet tenants' level: while its backlog waits and the quiet tenants use little
 *   of the consumers, its shares stay high, so this model keeps it noisy without measuring them again);
 * - "its backlog is empty" is read as "none of its messages visible"; a tenant whose messages are all in flight
 *   is quiet and detected again at the next receive if still above a threshold; a tenant that has sent nothing
 *   for `quietAfterMs` is not detected again until it sends;
 * - a message without a MessageGroupId is its own tenant, always quiet: one message is never 30 in flight, and
 *   its processing time is taken as never a tenth of the consumers' recent time;
 * - a record built from a received message (event-source.ts) does not carry a standard message's
 *   MessageGroupId: the unordered consumer of the status lane does not read it.
 */
export class StandardLaneQueue extends LaneQueue {
  readonly #fair: boolean;
  readonly #tenants = new Map<string, Tenant>();
  readonly #ungrouped = new Tenant(undefined);
  /** The tenants with a visible message. */
  readonly #waiting = new Set<Tenant>();
  readonly #processing = new RecentProcessing();
  #visibleCount = 0;
  #order = 0;

  constructor(name: string, settings: QueueSettings, engine: Engine, options: { fair?: boolean } = {}) {
    super(name, settings, engine);
    this.#fair = options.fair ?? true;
  }

  get visible(): number {
    return this.#visibleCount;
  }

  /** A tenant's visible and in-flight messages and whether it is noisy now (as the last receive found it). */
  tenant(groupId: string): { visible: number; inFlight: number; noisy: boolean } | undefined {
    const tenant = this.#tenants.get(groupId);
    return tenant === undefined
      ? undefined
      : { visible: tenant.visible.length, inFlight: tenant.inFlight, noisy: tenant.noisy };
  }

  send(body: string, attributes: LaneMessage['attributes'], groupId?: string): LaneMessage {
    const message = this.newMessage(body, attributes, groupId === undefined ? undefined : { groupId });
    const tenant = this.#tenantOf(message);
    tenant.lastSentAt = this.engine.now;
    this.#enqueue(tenant, message);
    return message;
  }

  receive(max: number): Received[] {
    if (this.#fair) this.#detect();
    const out: Received[] = [];
    while (out.length < max) {
      const tenant = this.#next();
      if (tenant === undefined) break;
      const message = tenant.visible.shift() as LaneMessage;
      tenant.order.shift();
      this.#visibleCount--;
      if (tenant.visible.length === 0) {
        // Its backlog is empty: quiet again.
        this.#waiting.delete(tenant);
        tenant.noisy = false;
      }
      const received = this.handOut(message);
      if (received === undefined) continue;
      tenant.inFlight++;
      out.push(received);
    }
    return out;
  }

  protected makeVisible(message: LaneMessage): void {
    const tenant = this.#tenantOf(message);
    this.#leftFlight(tenant, message);
    this.#enqueue(tenant, message);
  }

  protected forget(message: LaneMessage, fromFlight: boolean): void {
    if (fromFlight) this.#leftFlight(this.#tenantOf(message), message);
  }

  #tenantOf(message: LaneMessage): Tenant {
    if (message.groupId === undefined) return this.#ungrouped;
    let tenant = this.#tenants.get(message.groupId);
    if (tenant === undefined) {
      tenant = new Tenant(message.groupId);
      this.#tenants.set(message.groupId, tenant);
    }
    return tenant;
  }

  #enqueue(tenant: Tenant, message: LaneMessage): void {
    tenant.visible.push(message);
    tenant.order.push(++this.#order);
    this.#visibleCount++;
    this.#waiting.add(tenant);
    this.arrived();
  }

  #leftFlight(tenant: Tenant, message: LaneMessage): void {
    const now = this.engine.now;
    tenant.inFlight--;
    const ms = now - (message.receivedAt ?? now);
    message.receivedAt = undefined;
    tenant.processing.add(now, ms);
    this.#processing.add(now, ms);
  }

  /** Flags the noisy tenants among those waiting, and clears those that have sent nothing for long. */
  #detect(): void {
    const now = this.engine.now;
    const inFlight = this.inFlight;
    let recent: number | undefined;
    for (const tenant of this.#waiting) {
      if (tenant.id === undefined) continue;
      if (now - tenant.lastSentAt >= FAIR_QUEUE.quietAfterMs) {
        tenant.noisy = false;
        continue;
      }
      if (tenant.noisy) continue;
      const concurrency =
        tenant.inFlight >= FAIR_QUEUE.minimumInFlight &&
        tenant.inFlight > FAIR_QUEUE.inFlightShare * inFlight;
      recent ??= this.#processing.total(now);
      const processing = recent > 0 && tenant.processing.total(now) > FAIR_QUEUE.processingTimeShare * recent;
      tenant.noisy = concurrency || processing;
    }
  }

  /** Whose message a receive takes next: the oldest quiet one's, else the noisy tenant with fewest in flight. */
  #next(): Tenant | undefined {
    let quiet: Tenant | undefined;
    let quietOrder = Number.POSITIVE_INFINITY;
    let noisy: Tenant | undefined;
    let noisyOrder = Number.POSITIVE_INFINITY;
    for (const tenant of this.#waiting) {
      const order = tenant.order.peek() as number;
      if (!(this.#fair && tenant.noisy)) {
        if (order < quietOrder) {
          quiet = tenant;
          quietOrder = order;
        }
      } else if (
        noisy === undefined ||
        tenant.inFlight < noisy.inFlight ||
        (tenant.inFlight === noisy.inFlight && order < noisyOrder)
      ) {
        noisy = tenant;
        noisyOrder = order;
      }
    }
    return quiet ?? noisy;
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
