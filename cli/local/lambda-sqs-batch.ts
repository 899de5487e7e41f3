/**
 * What Lambda's SQS event source does with a batch, whatever its clock and transport: the records it passes to
 * the function (`toLambdaRecord`, from a ReceiveMessage result) and what it makes of the answer
 * (`parseBatchResponse`, the `ReportBatchItemFailures` rules). The local stack's poller over fauxqs, the
 * protocol checker's and the capacity simulation's event sources in virtual time, and the bench's in-memory
 * one all use these two, so that the four agree on what a batch is and which of its records to delete.
 */
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSMessageAttribute, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from 'aws-lambda';

/** Region part of an SQS ARN (`arn:aws:sqs:<region>:<account>:<name>`). */
export function regionOfArn(arn: string): string {
  const region = arn.split(':')[3];
  if (!region) throw new Error(`Not an SQS queue ARN: ${arn}`);
  return region;
}

/** Turns a ReceiveMessage result into the record Lambda's SQS event source would pass to the function. */
export function toLambdaRecord(message: Message, queueArn: string): SQSRecord {
  if (!message.MessageId || !message.ReceiptHandle || message.Body === undefined) {
    throw new Error('ReceiveMessage returned a message without MessageId, ReceiptHandle or Body.');
  }
  const system = message.Attributes ?? {};
  const attributes: SQSRecordAttributes = {
    ApproximateReceiveCount: system.ApproximateReceiveCount ?? '1',
    SentTimestamp: system.SentTimestamp ?? String(Date.now()),
    SenderId: system.SenderId ?? '000000000000',
    ApproximateFirstReceiveTimestamp: system.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  };
  for (const name of [
    'AWSTraceHeader',
    'SequenceNumber',
    'MessageGroupId',
    'MessageDeduplicationId',
    'DeadLetterQueueSourceArn',
  ] as const) {
    const value = system[name];
    if (value !== undefined) attributes[name] = value;
  }
  const record: SQSRecord = {
    messageId: message.MessageId,
    receiptHandle: message.ReceiptHandle,
    body: message.Body,
    attributes,
    messageAttributes: toLambdaMessageAttributes(message.MessageAttributes ?? {}),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: regionOfArn(queueArn),
  };
  if (message.MD5OfMessageAttributes) record.md5OfMessageAttributes = message.MD5OfMessageAttributes;
  return record;
}

function toLambdaMessageAttributes(attributes: Record<string, MessageAttributeValue>): SQSMessageAttributes {
  const result: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(attributes)) {
    // Lambda always sends both list fields, empty, and binary values base64-encoded.
    const attribute: SQSMessageAttribute = {
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map(toBase64),
      dataType: value.DataType ?? 'String',
    };
    if (value.StringValue !== undefined) attribute.stringValue = value.StringValue;
    if (value.BinaryValue !== undefined) attribute.binaryValue = toBase64(value.BinaryValue);
    result[name] = attribute;
  }
  return result;
}

function toBase64(bytes: Uint8Array | string): string {
  return typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('base64');
}

/**
 * Lambda's rules for `ReportBatchItemFailures`: nothing, null or an empty list means every record
 * succeeded; a list of known `itemIdentifier`s fails only those; anything malformed fails the whole batch.
 */
export function parseBatchResponse(
  result: unknown,
  records: readonly Pick<SQSRecord, 'messageId'>[],
): { outcome: 'success' | 'partial-failure' | 'invalid-response'; failedIds: Set<string> } {
  const all = new Set(records.map((r) => r.messageId));
  if (result === undefined || result === null) return { outcome: 'success', failedIds: new Set() };
  if (typeof result !== 'object') return { outcome: 'invalid-response', failedIds: all };
  const failures = (result as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return { outcome: 'success', failedIds: new Set() };
  if (!Array.isArray(failures)) return { outcome: 'invalid-response', failedIds: all };
  const failedIds = new Set<string>();
  for (const failure of failures) {
    const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof id !== 'string' || !all.has(id)) return { outcome: 'invalid-response', failedIds: all };
    failedIds.add(id);
  }
  return { outcome: failedIds.size === 0 ? 'success' : 'partial-failure', failedIds };
}
