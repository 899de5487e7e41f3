/**
 * Sends messages to one queue in SendMessageBatch calls: packs them in order into batches that fit SQS's
 * entry and size limits, retries the entries that failed for a reason a retry can fix (full-jitter backoff,
 * bounded by attempts and by the caller's deadline) and reports those SQS refused as the sender's fault.
 */
import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { mapWithConcurrency } from '../commons/bounded-concurrency.ts';
import type { DeliveryMeta } from './delivery-queue-port.ts';
import { EnqueueFailedError, type QueueRole } from './errors.ts';
import type { OutgoingMessage } from './outgoing-message.ts';

export interface RetryPolicy {
  /** Calls per message, the first included. */
  readonly maxAttempts: number;
  /** Full-jitter exponential backoff: a retry waits random(0, min(maxDelayMs, baseDelayMs × 2^(retry−1))). */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * 5 calls, waits of at most 50 + 100 + 200 + 400 ms: a throttled queue usually recovers within that, and a
 * queue that does not is better reported to Meta (5xx, it retries for days) than waited for. The caller's
 * `retryDeadline` bounds the total time as well.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 50, maxDelayMs: 800 };

/** SendMessageBatch takes at most 10 entries (SQS quota). */
export const MAX_BATCH_ENTRIES = 10;
/**
 * Batches of an ordered lane in flight at once: a thousand conversations take ten round trips, and more at once
 * would only queue at the endpoint (locally, in the very process that answers Meta).
 */
const MAX_BATCHES_IN_FLIGHT = 10;

export interface SqsBatchSenderOptions {
  readonly sqs: SQSClient;
  /** The queues' `MaximumMessageSize`: the limit of one message and of one batch request (body + attributes). */
  readonly maximumMessageSizeBytes: number;
  readonly retryPolicy?: RetryPolicy;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
}

/** A message SQS refused as the sender's fault: its index in the `sendAll` call and the SQS error code. */
export interface RefusedMessage {
  readonly index: number;
  readonly code: string;
}

export class SqsBatchSender {
  readonly #options: SqsBatchSenderOptions;
  readonly #retryPolicy: RetryPolicy;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #clock: () => number;

  constructor(options: SqsBatchSenderOptions) {
    this.#options = options;
    this.#retryPolicy = options.retryPolicy ?? DEFAULT_RETRY_POLICY;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? Date.now;
  }

  /**
   * Sends every message, retrying only those that failed for a reason a retry can fix. Messages with FIFO ids
   * (an ordered lane) are stored in order within their group: a group's batches go one after the other (other
   * groups' in parallel), a group's messages after a failed one wait for its retry, and the retry resends the failed message with every later
   * message of its group, so that no retry sends a message after a later one of its conversation. A later
   * message SQS stored in the batch where an earlier one failed is absorbed by its deduplication id on the
   * resend and keeps its place: nothing a sender can do moves it back.
   */
  async sendAll(
    queueUrl: string,
    queue: QueueRole,
    messages: readonly OutgoingMessage[],
    meta: DeliveryMeta,
  ): Promise<RefusedMessage[]> {
    for (const message of messages) {
      if (message.bytes > this.#options.maximumMessageSizeBytes) {
        throw new RangeError(
          `A ${queue} message of ${message.bytes} bytes exceeds ${this.#options.maximumMessageSizeBytes}.`,
        );
      }
    }
    const ordered = messages.some((message) => message.fifo !== undefined);
    const rejected: RefusedMessage[] = [];
    const stored = new Set<number>();
    let pending = messages.map((_, index) => index);
    let lastError = '';
    for (let attempt = 1; ; attempt++) {
      const outcome = ordered
        ? await this.#sendInOrder(queueUrl, messages, pending)
        : await this.#sendInParallel(queueUrl, messages, pending);
      for (const index of outcome.stored) stored.add(index);
      rejected.push(...outcome.rejected);
      if (outcome.lastError !== undefined) lastError = outcome.lastError;
      pending = outcome.retry;
      if (pending.length === 0) break;
      if (attempt >= this.#retryPolicy.maxAttempts) break;
      const delay = this.#backoff(attempt);
      if (this.#clock() + delay >= meta.retryDeadline) break;
      await this.#sleep(delay);
    }
    const unstored = pending.filter((index) => !stored.has(index)).length;
    if (pending.length > 0) throw new EnqueueFailedError(queue, unstored, messages.length, lastError);
    return rejected.sort((a, b) => a.index - b.index);
  }

  async #sendInParallel(
    queueUrl: string,
    messages: readonly OutgoingMessage[],
    pending: readonly number[],
  ): Promise<AttemptOutcome> {
    const outcomes = await Promise.all(
      this.#batches(messages, pending).map((batch) => this.#sendBatch(queueUrl, messages, batch)),
    );
    const attempt: AttemptOutcome = { stored: [], retry: [], rejected: [] };
    for (const outcome of outcomes) {
      attempt.stored.push(...outcome.stored);
      attempt.retry.push(...outcome.retryable);
      attempt.rejected.push(...outcome.rejected);
      if (outcome.lastError !== undefined) attempt.lastError = outcome.lastError;
    }
    return attempt;
  }

  /**
   * A conversation's messages go in one batch where they fit, several conversations to a batch, and those
   * batches in parallel: only the batches of one conversation too large for one batch go one after the other.
   * Sending every batch in turn would make a body of a thousand conversations a hundred round trips long.
   */
  async #sendInOrder(
    queueUrl: string,
    messages: readonly OutgoingMessage[],
    pending: readonly number[],
  ): Promise<AttemptOutcome> {
    const groupOf = (index: number) => messages[index]?.fifo?.messageGroupId ?? '';
    const byGroup = new Map<string, number[]>();
    for (const index of pending) {
      const group = byGroup.get(groupOf(index));
      if (group === undefined) byGroup.set(groupOf(index), [index]);
      else group.push(index);
    }
    const wholeGroups: number[][] = [];
    const sequences: number[][][] = [];
    for (const members of byGroup.values()) {
      const batches = this.#batches(messages, members);
      if (batches.length === 1) wholeGroups.push(members);
      else sequences.push(batches);
    }
    for (const batch of this.#packGroups(messages, wholeGroups)) sequences.push([batch]);
    const outcomes = await mapWithConcurrency(sequences, MAX_BATCHES_IN_FLIGHT, (batches) =>
      this.#sendSequence(queueUrl, messages, batches, groupOf),
    );
    const attempt: AttemptOutcome = { stored: [], retry: [], rejected: [] };
    for (const outcome of outcomes) {
      attempt.stored.push(...outcome.stored);
      attempt.retry.push(...outcome.retry);
      attempt.rejected.push(...outcome.rejected);
      if (outcome.lastError !== undefined) attempt.lastError = outcome.lastError;
    }
    attempt.retry.sort((a, b) => a - b);
    return attempt;
  }

  /** Batches of one or more whole groups each, in first-seen order. */
  #packGroups(messages: readonly OutgoingMessage[], groups: readonly number[][]): number[][] {
    const bytesOf = (index: number) => messages[index]?.bytes ?? 0;
    const batches: number[][] = [];
    let batch: number[] = [];
    let batchBytes = 0;
    for (const group of groups) {
      const bytes = group.reduce((sum, index) => sum + bytesOf(index), 0);
      if (
        batch.length > 0 &&
        (batch.length + group.length > MAX_BATCH_ENTRIES ||
          batchBytes + bytes > this.#options.maximumMessageSizeBytes)
      ) {
        batches.push(batch);
        batch = [];
        batchBytes = 0;
      }
      batch.push(...group);
      batchBytes += bytes;
    }
    if (batch.length > 0) batches.push(batch);
    return batches;
  }

  /** `batches` one after the other; a group's messages after a failed one wait for its retry. */
  async #sendSequence(
    queueUrl: string,
    messages: readonly OutgoingMessage[],
    batches: readonly number[][],
    groupOf: (index: number) => string,
  ): Promise<AttemptOutcome> {
    /** Groups with a message that failed in this attempt: their later messages go with its retry. */
    const held = new Set<string>();
    const attempt: AttemptOutcome = { stored: [], retry: [], rejected: [] };
    for (const batch of batches) {
      const sendable = batch.filter((index) => !held.has(groupOf(index)));
      const outcome =
        sendable.length === 0
          ? { stored: [], retryable: [], rejected: [] }
          : await this.#sendBatch(queueUrl, messages, sendable);
      const failed = new Set(outcome.retryable);
      for (const index of batch) {
        const group = groupOf(index);
        if (failed.has(index)) held.add(group);
        // Resent even when stored in this batch: behind a failed one of its group, it must follow its retry.
        if (held.has(group)) attempt.retry.push(index);
      }
      attempt.stored.push(...outcome.stored);
      attempt.rejected.push(...outcome.rejected);
      if (outcome.lastError !== undefined) attempt.lastError = outcome.lastError;
    }
    return attempt;
  }

  #batches(messages: readonly OutgoingMessage[], pending: readonly number[]): number[][] {
    return packInBatches(
      pending,
      (index) => messages[index]?.bytes ?? 0,
      this.#options.maximumMessageSizeBytes,
    );
  }

  #backoff(retry: number): number {
    const { baseDelayMs, maxDelayMs } = this.#retryPolicy;
    return Math.floor(this.#random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (retry - 1)));
  }

  async #sendBatch(
    queueUrl: string,
    messages: readonly OutgoingMessage[],
    batch: readonly number[],
  ): Promise<BatchOutcome> {
    const entries: SendMessageBatchRequestEntry[] = batch.map((index) => {
      const message = messages[index];
      return {
        Id: `m${index}`,
        MessageBody: message?.body,
        MessageAttributes: message?.attributes,
        ...(message?.fifo !== undefined
          ? {
              MessageGroupId: message.fifo.messageGroupId,
              MessageDeduplicationId: message.fifo.messageDeduplicationId,
            }
          : message?.messageGroupId !== undefined && { MessageGroupId: message.messageGroupId }),
      };
    });
    let response: SendMessageBatchCommandOutput;
    try {
      response = await this.#options.sqs.send(
        new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }),
      );
    } catch (error) {
      // The whole call failed (throttled, 5xx, network, timeout): every entry of it may be retried.
      return { stored: [], retryable: [...batch], rejected: [], lastError: errorName(error) };
    }
    const succeeded = new Set((response.Successful ?? []).map((entry) => entry.Id));
    const failures = new Map((response.Failed ?? []).map((entry) => [entry.Id, entry]));
    const stored: number[] = [];
    const retryable: number[] = [];
    const rejected: RefusedMessage[] = [];
    let lastError: string | undefined;
    for (const index of batch) {
      const id = `m${index}`;
      if (succeeded.has(id)) {
        stored.push(index);
        continue;
      }
      const failure = failures.get(id);
      const code = failure?.Code ?? 'MissingFromResponse';
      lastError = code;
      if (failure?.SenderFault === true && !/throttl/i.test(code)) rejected.push({ index, code });
      else retryable.push(index);
    }
    return lastError === undefined
      ? { stored, retryable, rejected }
      : { stored, retryable, rejected, lastError };
  }
}

interface BatchOutcome {
  readonly stored: number[];
  readonly retryable: number[];
  readonly rejected: RefusedMessage[];
  readonly lastError?: string;
}

interface AttemptOutcome {
  readonly stored: number[];
  /** What the next attempt sends, in index order. */
  readonly retry: number[];
  readonly rejected: RefusedMessage[];
  lastError?: string;
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'UnknownError';
}

/**
 * Groups indexes, in order, into SendMessageBatch calls of at most 10 entries whose bodies and attributes
 * (`bytesOf`) fit one request of `maximumRequestBytes`.
 */
export function packInBatches(
  indexes: readonly number[],
  bytesOf: (index: number) => number,
  maximumRequestBytes: number,
): number[][] {
  const batches: number[][] = [];
  let batch: number[] = [];
  let batchBytes = 0;
  for (const index of indexes) {
    const bytes = bytesOf(index);
    if (
      batch.length === MAX_BATCH_ENTRIES ||
      (batch.length > 0 && batchBytes + bytes > maximumRequestBytes)
    ) {
      batches.push(batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push(index);
    batchBytes += bytes;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
