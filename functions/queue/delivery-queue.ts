/**
 * The SQS adapter of both functions: the receiver writes delivery parts to the delivery queue
 * (`SqsDeliveryQueue`); both quarantine bodies in the dead-letter queue (the consumer through
 * `SqsDeadLetterQueue` alone), so that a quarantined body looks the same whichever side put it there. Owns
 * batching, size accounting and the retry policy; knows nothing about WhatsApp.
 */
import { randomUUID } from 'node:crypto';
import {
  type MessageAttributeValue,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { EnqueueFailedError } from './errors.ts';

export type QuarantineReason =
  /** The signed body is not UTF-8 JSON. */
  | 'invalid-json'
  /** JSON, but not `{"object":"whatsapp_business_account","entry":[…]}`. */
  | 'not-whatsapp-envelope'
  /** One event (or one change/entry that cannot be cut) is larger than a queue message. */
  | 'event-too-large'
  /** SQS refused a part as the sender's fault (e.g. `InvalidMessageContents`); retrying would not help. */
  | 'rejected-by-queue';

export interface DeliveryMeta {
  /** Correlates the messages of one delivery (API Gateway's request id); at most 64 characters are kept. */
  readonly deliveryId: string;
  /** ISO-8601 time the receiver got the request. */
  readonly receivedAt: string;
  /** Epoch ms after which no new retry starts (one attempt is always made). */
  readonly retryDeadline: number;
}

export interface RejectedPart {
  /** Index of the part in the `enqueue` call. */
  readonly part: number;
  /** The SQS error code, e.g. `InvalidMessageContents`. */
  readonly code: string;
}

export interface EnqueueResult {
  /** Parts SQS refused as the sender's fault; not retried. The caller decides where they go. */
  readonly rejected: readonly RejectedPart[];
}

export interface QuarantineResult {
  /** Dead-letter messages written: 1, or more when the base64 body had to be spread over chunks. */
  readonly messages: number;
}

/** What the receiver's orchestration needs from a queue. */
export interface DeliveryQueuePort {
  /** Largest part body `enqueue` takes, in UTF-8 bytes: the message size limit minus our attributes. */
  readonly maximumBodyBytes: number;
  /** @throws EnqueueFailedError when some part is still unstored after the retries. */
  enqueue(parts: readonly string[], meta: DeliveryMeta): Promise<EnqueueResult>;
  /** @throws EnqueueFailedError when the body could not be stored in the dead-letter queue. */
  quarantine(raw: Uint8Array, reason: QuarantineReason, meta: DeliveryMeta): Promise<QuarantineResult>;
}

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
 * Bytes of every delivery message's size budget kept for our message attributes (SQS counts each attribute's
 * name, type and value against the message size limit). A delivery part's attributes take at most ~160.
 */
export const MESSAGE_ATTRIBUTES_RESERVE_BYTES = 256;

const MAX_DELIVERY_ID_LENGTH = 64;

export interface SqsDeadLetterQueueOptions {
  readonly sqs: SQSClient;
  readonly deadLetterQueueUrl: string;
  /** The queues' `MaximumMessageSize`: the limit of one message and of one batch request (body + attributes). */
  readonly maximumMessageSizeBytes: number;
  readonly retryPolicy?: RetryPolicy;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  readonly now?: () => number;
}

export interface SqsDeliveryQueueOptions extends SqsDeadLetterQueueOptions {
  readonly deliveryQueueUrl: string;
}

interface OutgoingMessage {
  readonly body: string;
  readonly attributes: Record<string, MessageAttributeValue>;
  readonly bytes: number;
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

/** The dead-letter queue alone: the consumer quarantines but never enqueues deliveries. */
export class SqsDeadLetterQueue implements Pick<DeliveryQueuePort, 'quarantine'> {
  readonly #options: SqsDeadLetterQueueOptions;
  readonly #sender: SqsBatchSender;

  constructor(options: SqsDeadLetterQueueOptions) {
    if (options.maximumMessageSizeBytes <= MESSAGE_ATTRIBUTES_RESERVE_BYTES * 2) {
      throw new RangeError(`maximumMessageSizeBytes ${options.maximumMessageSizeBytes} is too small.`);
    }
    this.#options = options;
    this.#sender = new SqsBatchSender(options);
  }

  /**
   * Body: the base64 of the raw bytes, lossless for any bytes (SQS refuses some characters and all invalid
   * UTF-8). Attributes: `reason`, `contentEncoding=base64`, `receivedAt`, `deliveryId`; a body too large for
   * one message is cut into chunks of the base64 text with `quarantineId`, `chunk` (1-based) and `chunks`:
   * concatenate the chunks in order, then decode.
   */
  async quarantine(raw: Uint8Array, reason: QuarantineReason, meta: DeliveryMeta): Promise<QuarantineResult> {
    const base64 = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64');
    const attributes = {
      ...commonAttributes(meta),
      reason: stringAttribute(reason),
      contentEncoding: stringAttribute('base64'),
    };
    const limit = this.#options.maximumMessageSizeBytes;
    let messages: OutgoingMessage[];
    if (base64.length + attributesBytes(attributes) <= limit) {
      messages = [outgoing(base64, attributes)];
    } else {
      const quarantineId = randomUUID();
      const widestChunkAttributes = {
        ...attributes,
        quarantineId: stringAttribute(quarantineId),
        chunk: numberAttribute(Number.MAX_SAFE_INTEGER),
        chunks: numberAttribute(Number.MAX_SAFE_INTEGER),
      };
      const chunkChars = limit - attributesBytes(widestChunkAttributes);
      const chunks = Math.ceil(base64.length / chunkChars);
      messages = Array.from({ length: chunks }, (_, index) =>
        outgoing(base64.slice(index * chunkChars, (index + 1) * chunkChars), {
          ...attributes,
          quarantineId: stringAttribute(quarantineId),
          chunk: numberAttribute(index + 1),
          chunks: numberAttribute(chunks),
        }),
      );
    }
    const rejected = await this.#sender.sendAll(
      this.#options.deadLetterQueueUrl,
      'dead-letter',
      messages,
      meta,
    );
    if (rejected.length > 0) {
      throw new EnqueueFailedError('dead-letter', rejected.length, messages.length, rejected[0]?.code ?? '');
    }
    return { messages: messages.length };
  }
}

/** Batching and retries shared by both queues. */
class SqsBatchSender {
  readonly #options: SqsDeadLetterQueueOptions;
  readonly #retryPolicy: RetryPolicy;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;

  constructor(options: SqsDeadLetterQueueOptions) {
    this.#options = options;
    this.#retryPolicy = options.retryPolicy ?? DEFAULT_RETRY_POLICY;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
  }

  /** Sends every message, retrying only those that failed for a reason a retry can fix. */
  async sendAll(
    queueUrl: string,
    queue: 'delivery' | 'dead-letter',
    messages: readonly OutgoingMessage[],
    meta: DeliveryMeta,
  ): Promise<{ index: number; code: string }[]> {
    for (const message of messages) {
      if (message.bytes > this.#options.maximumMessageSizeBytes) {
        throw new RangeError(
          `A ${queue} message of ${message.bytes} bytes exceeds ${this.#options.maximumMessageSizeBytes}.`,
        );
      }
    }
    const rejected: { index: number; code: string }[] = [];
    let pending = messages.map((_, index) => index);
    let lastError = '';
    for (let attempt = 1; ; attempt++) {
      const outcomes = await Promise.all(
        this.#packBatches(messages, pending).map((batch) => this.#sendBatch(queueUrl, messages, batch)),
      );
      pending = [];
      for (const outcome of outcomes) {
        pending.push(...outcome.retryable);
        rejected.push(...outcome.rejected);
        if (outcome.lastError !== undefined) lastError = outcome.lastError;
      }
      if (pending.length === 0) break;
      if (attempt >= this.#retryPolicy.maxAttempts) break;
      const delay = this.#backoff(attempt);
      if (this.#now() + delay >= meta.retryDeadline) break;
      await this.#sleep(delay);
    }
    if (pending.length > 0) throw new EnqueueFailedError(queue, pending.length, messages.length, lastError);
    return rejected.sort((a, b) => a.index - b.index);
  }

  #backoff(retry: number): number {
    const { baseDelayMs, maxDelayMs } = this.#retryPolicy;
    return Math.floor(this.#random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (retry - 1)));
  }

  /** Groups messages in order into batches of ≤ 10 entries whose bodies and attributes fit one request. */
  #packBatches(messages: readonly OutgoingMessage[], indexes: readonly number[]): number[][] {
    const batches: number[][] = [];
    let batch: number[] = [];
    let batchBytes = 0;
    for (const index of indexes) {
      const bytes = messages[index]?.bytes ?? 0;
      if (
        batch.length === MAX_BATCH_ENTRIES ||
        (batch.length > 0 && batchBytes + bytes > this.#options.maximumMessageSizeBytes)
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

  async #sendBatch(
    queueUrl: string,
    messages: readonly OutgoingMessage[],
    batch: readonly number[],
  ): Promise<{ retryable: number[]; rejected: { index: number; code: string }[]; lastError?: string }> {
    const entries: SendMessageBatchRequestEntry[] = batch.map((index) => ({
      Id: `m${index}`,
      MessageBody: messages[index]?.body,
      MessageAttributes: messages[index]?.attributes,
    }));
    let response: SendMessageBatchCommandOutput;
    try {
      response = await this.#options.sqs.send(
        new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }),
      );
    } catch (error) {
      // The whole call failed (throttled, 5xx, network, timeout): every entry of it may be retried.
      return { retryable: [...batch], rejected: [], lastError: errorName(error) };
    }
    const succeeded = new Set((response.Successful ?? []).map((entry) => entry.Id));
    const failures = new Map((response.Failed ?? []).map((entry) => [entry.Id, entry]));
    const retryable: number[] = [];
    const rejected: { index: number; code: string }[] = [];
    let lastError: string | undefined;
    for (const index of batch) {
      const id = `m${index}`;
      if (succeeded.has(id)) continue;
      const failure = failures.get(id);
      const code = failure?.Code ?? 'MissingFromResponse';
      lastError = code;
      if (failure?.SenderFault === true && !/throttl/i.test(code)) rejected.push({ index, code });
      else retryable.push(index);
    }
    return lastError === undefined ? { retryable, rejected } : { retryable, rejected, lastError };
  }
}

function outgoing(body: string, attributes: Record<string, MessageAttributeValue>): OutgoingMessage {
  return { body, attributes, bytes: Buffer.byteLength(body, 'utf8') + attributesBytes(attributes) };
}

function commonAttributes(meta: DeliveryMeta): Record<string, MessageAttributeValue> {
  return {
    receivedAt: stringAttribute(meta.receivedAt),
    deliveryId: stringAttribute(meta.deliveryId.slice(0, MAX_DELIVERY_ID_LENGTH) || '-'),
  };
}

const stringAttribute = (value: string): MessageAttributeValue => ({
  DataType: 'String',
  StringValue: value,
});
const numberAttribute = (value: number): MessageAttributeValue => ({
  DataType: 'Number',
  StringValue: String(value),
});

/** What SQS counts for message attributes: each name, data type and value. */
export function attributesBytes(attributes: Record<string, MessageAttributeValue>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(attributes)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '');
    bytes += Buffer.byteLength(value.StringValue ?? '') + (value.BinaryValue?.byteLength ?? 0);
  }
  return bytes;
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'UnknownError';
}
