/**
 * The SQS calls of the ops commands: counts, a scan that reads a whole queue without consuming it (each
 * message hidden while the scan runs, then released), copies sent to another queue with their attributes,
 * and deletes. Nothing here decides what to move: the commands do, and delete a message only after its copy
 * is stored.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { attributesBytes } from 'whatsapp-webhook-dedup/functions/queue/outgoing-message';
import { MAX_BATCH_ENTRIES, packInBatches } from 'whatsapp-webhook-dedup/functions/queue/sqs-batch-sender';
import { type QueueCounts, readQueueCounts } from '../../local/queue-counts.ts';

export type { QueueCounts };

export interface QueuedMessage {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, MessageAttributeValue>>;
  /** Epoch ms the message was first sent (SQS keeps it when a message moves to a DLQ). */
  readonly sentAt: number | undefined;
  /** `ApproximateReceiveCount`, the receive that read it here included. */
  readonly receiveCount: number | undefined;
  /** For a DLQ message SQS redrive moved: the queue it came from. */
  readonly sourceQueueArn: string | undefined;
  /** A FIFO queue's message: its group (on a message lane, the conversation: never printed). */
  readonly messageGroupId: string | undefined;
}

/**
 * A message to send: its body and attributes, as read from another queue, and for a FIFO queue its group
 * and deduplication id.
 */
export type MessageCopy = Pick<QueuedMessage, 'body' | 'attributes'> & {
  readonly fifo?: { readonly groupId: string; readonly deduplicationId: string };
};

export interface ScanOptions {
  /** Stop after this many messages. */
  readonly limit: number;
  /** How long each message stays hidden from other readers while the scan and its caller work with it. */
  readonly hideSeconds: number;
  readonly onProgress?: (scanned: number) => void;
}

export interface SendOutcome {
  /** Indexes (in the `sendCopies` call) of the copies SQS stored. */
  readonly stored: readonly number[];
  readonly failed: readonly { readonly index: number; readonly code: string }[];
}

/** Long polling of 1 s asks every SQS server, so an empty answer means an empty queue (short polls sample). */
const SCAN_WAIT_SECONDS = 1;

export class QueueMessages {
  readonly #sqs: SQSClient;

  constructor(sqs: SQSClient) {
    this.#sqs = sqs;
  }

  counts(queueUrl: string): Promise<QueueCounts> {
    return readQueueCounts(this.#sqs, queueUrl);
  }

  async queueArn(queueUrl: string): Promise<string> {
    const { Attributes } = await this.#sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    const arn = Attributes?.QueueArn;
    if (arn === undefined) throw new Error(`Queue ${queueUrl} has no QueueArn attribute.`);
    return arn;
  }

  /** Up to `maxMessages` (≤ 10) visible messages, hidden for `hideSeconds`. */
  async receive(queueUrl: string, maxMessages: number, hideSeconds: number): Promise<QueuedMessage[]> {
    const { Messages = [] } = await this.#sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(maxMessages, MAX_BATCH_ENTRIES),
        WaitTimeSeconds: SCAN_WAIT_SECONDS,
        VisibilityTimeout: hideSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    return Messages.map(toQueuedMessage);
  }

  /** Every visible message up to `limit`, each once. The caller releases or deletes them. */
  async scan(queueUrl: string, options: ScanOptions): Promise<QueuedMessage[]> {
    const seen = new Map<string, QueuedMessage>();
    while (seen.size < options.limit) {
      const batch = await this.receive(queueUrl, options.limit - seen.size, options.hideSeconds);
      if (batch.length === 0) break;
      for (const message of batch) seen.set(message.messageId, message);
      options.onProgress?.(seen.size);
    }
    return [...seen.values()];
  }

  /** Makes messages visible again at once; returns how many SQS did not release (they return later). */
  async release(queueUrl: string, messages: readonly QueuedMessage[]): Promise<number> {
    let unreleased = 0;
    for (const batch of chunks(messages, MAX_BATCH_ENTRIES)) {
      const { Failed = [] } = await this.#sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.receiptHandle,
            VisibilityTimeout: 0,
          })),
        }),
      );
      unreleased += Failed.length;
    }
    return unreleased;
  }

  /**
   * Sends each copy once (the SDK retries failed calls; entries SQS refuses are reported, not retried), in
   * batches of at most 10 entries and `maximumRequestBytes`.
   */
  async sendCopies(
    queueUrl: string,
    copies: readonly MessageCopy[],
    maximumRequestBytes: number,
  ): Promise<SendOutcome> {
    const stored: number[] = [];
    const failed: { index: number; code: string }[] = [];
    const sizeOf = (index: number) => {
      const copy = copies[index];
      return copy === undefined ? 0 : Buffer.byteLength(copy.body) + attributesBytes({ ...copy.attributes });
    };
    const indexes = copies.map((_, index) => index);
    for (const batch of packInBatches(indexes, sizeOf, maximumRequestBytes)) {
      const { Successful = [], Failed = [] } = await this.#sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((index) => ({
            Id: String(index),
            MessageBody: copies[index]?.body,
            MessageAttributes: { ...copies[index]?.attributes },
            ...fifoFields(copies[index]),
          })),
        }),
      );
      const codes = new Map(Failed.map((entry) => [entry.Id, entry.Code ?? 'Unknown']));
      const succeeded = new Set(Successful.map((entry) => entry.Id));
      for (const index of batch) {
        if (succeeded.has(String(index))) stored.push(index);
        else failed.push({ index, code: codes.get(String(index)) ?? 'MissingFromResponse' });
      }
    }
    return { stored, failed };
  }

  /** Deletes the messages; returns the ids SQS did not delete. */
  async delete(queueUrl: string, messages: readonly QueuedMessage[]): Promise<string[]> {
    const notDeleted: string[] = [];
    for (const batch of chunks(messages, MAX_BATCH_ENTRIES)) {
      const { Failed = [] } = await this.#sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.receiptHandle,
          })),
        }),
      );
      for (const failure of Failed) notDeleted.push(batch[Number(failure.Id)]?.messageId ?? '?');
    }
    return notDeleted;
  }
}

function toQueuedMessage(message: Message): QueuedMessage {
  const system = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: sendableAttributes(message.MessageAttributes ?? {}),
    sentAt: numberOrUndefined(system.SentTimestamp),
    receiveCount: numberOrUndefined(system.ApproximateReceiveCount),
    sourceQueueArn: system.DeadLetterQueueSourceArn,
    messageGroupId: system.MessageGroupId,
  };
}

function fifoFields(copy: MessageCopy | undefined) {
  return copy?.fifo === undefined
    ? {}
    : { MessageGroupId: copy.fifo.groupId, MessageDeduplicationId: copy.fifo.deduplicationId };
}

/** Only what SendMessage takes back (SQS refuses the list value fields some answers carry). */
function sendableAttributes(
  attributes: Record<string, MessageAttributeValue>,
): Record<string, MessageAttributeValue> {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, { DataType, StringValue, BinaryValue }]) => [
      name,
      {
        DataType,
        StringValue,
        BinaryValue,
      },
    ]),
  );
}

function numberOrUndefined(raw: string | undefined): number | undefined {
  const value = Number(raw);
  return raw === undefined || !Number.isFinite(value) ? undefined : value;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}
