/**
 * Moves the records a consumer gives up on into its lane's dead-letter queue (FIFO or standard), in one
 * `SendMessageBatch` per ten records: the consumer does it on a record's last receive (contract/lanes.ts,
 * "the conversation moves on") so that the records queued behind it, whose receive counts rose with every
 * retry of it, are run in the same invocation instead of following it into the DLQ by SQS redrive. Each
 * keeps its body, its message attributes and its conversation as group; its deduplication id is its queue
 * message id, so a resend after a lost answer is not stored twice (on a FIFO queue). A record a handler gave
 * up on (`DeadLetter`) also carries the handler's reason and details.
 */
import { type MessageAttributeValue, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeadLetterPort, DeadLetterReason, QueueRecord } from './consumer-queue-port.ts';

const MAX_BATCH_ENTRIES = 10;

/** The attribute naming why a record is in the DLQ without SQS's `DeadLetterQueueSourceArn`. */
export const DEAD_LETTERED_BY_ATTRIBUTE = 'deadLetteredBy';
/** A handler's `DeadLetter` reason, and its details as JSON. */
export const DEAD_LETTER_REASON_ATTRIBUTE = 'deadLetterReason';
export const DEAD_LETTER_DETAILS_ATTRIBUTE = 'deadLetterDetails';

export interface SqsConversationDeadLettersOptions {
  readonly sqs: SQSClient;
  readonly deadLetterQueueUrl: string;
  /** The receive on which a record that fails again is moved (the lane's retry budget). */
  readonly maxReceives: number;
}

export class SqsConversationDeadLetters implements DeadLetterPort {
  readonly maxReceives: number;
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;

  constructor(options: SqsConversationDeadLettersOptions) {
    this.#sqs = options.sqs;
    this.#queueUrl = options.deadLetterQueueUrl;
    this.maxReceives = options.maxReceives;
  }

  /** @throws when SQS refused or failed any entry: the records then stay in the lane. */
  async move(
    records: readonly QueueRecord[],
    reasons?: ReadonlyMap<string, DeadLetterReason>,
  ): Promise<void> {
    for (let start = 0; start < records.length; start += MAX_BATCH_ENTRIES) {
      const chunk = records.slice(start, start + MAX_BATCH_ENTRIES);
      const output = await this.#sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: this.#queueUrl,
          Entries: chunk.map((record, index) => ({
            Id: String(index),
            MessageBody: record.body,
            MessageAttributes: {
              ...sdkAttributes(record.messageAttributes),
              [DEAD_LETTERED_BY_ATTRIBUTE]: { DataType: 'String', StringValue: 'consumer' },
              ...reasonAttributes(reasons?.get(record.messageId)),
            },
            ...(record.attributes?.MessageGroupId === undefined
              ? {}
              : {
                  MessageGroupId: record.attributes.MessageGroupId,
                  MessageDeduplicationId: record.messageId,
                }),
          })),
        }),
      );
      const failed = output.Failed ?? [];
      if (failed.length > 0) {
        throw new Error(
          `${failed.length} record(s) not moved to the dead-letter queue: ${[...new Set(failed.map(({ Code }) => Code))].join(', ')}`,
        );
      }
    }
  }
}

function reasonAttributes(reason: DeadLetterReason | undefined): Record<string, MessageAttributeValue> {
  if (reason === undefined) return {};
  return {
    [DEAD_LETTER_REASON_ATTRIBUTE]: { DataType: 'String', StringValue: reason.reason },
    ...(Object.keys(reason.details).length === 0
      ? {}
      : {
          [DEAD_LETTER_DETAILS_ATTRIBUTE]: {
            DataType: 'String',
            StringValue: JSON.stringify(reason.details),
          },
        }),
  };
}

/** Lambda's record attributes (`stringValue`, `dataType`) as SendMessage takes them. */
function sdkAttributes(attributes: QueueRecord['messageAttributes']): Record<string, MessageAttributeValue> {
  const result: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value.stringValue !== undefined) {
      result[name] = { DataType: value.dataType, StringValue: value.stringValue };
    } else if (value.binaryValue !== undefined) {
      result[name] = { DataType: value.dataType, BinaryValue: Buffer.from(value.binaryValue, 'base64') };
    }
  }
  return result;
}
