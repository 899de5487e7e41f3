/**
 * One SQS message as the adapters send it: body and attributes, sized as SQS counts them against the message
 * size limit, with the attributes every delivery and quarantine message carries.
 */
import { createHash } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { proofOf } from '../commons/provenance.ts';
import type { DeliveryMeta } from './delivery-queue-port.ts';

/** The longest `deliveryId` attribute, in UTF-8 bytes: the rest of a longer request id is cut. */
const MAX_DELIVERY_ID_BYTES = 64;

/**
 * The attribute names our messages carry, written here and in the adapters, read by `npm run ops`: the writers
 * check their attributes against these (`satisfies`), the readers take only these names, so a renamed
 * attribute fails the typecheck on both sides.
 */
export type DeliveryAttributeName =
  | 'receivedAt'
  | 'deliveryId'
  | 'part'
  | 'parts'
  | 'conversation'
  /** The receiver's proof of the part's bytes (functions/commons/provenance.ts). */
  | 'proof';
export type QuarantineAttributeName =
  | 'receivedAt'
  | 'deliveryId'
  | 'reason'
  | 'contentEncoding'
  | 'quarantineId'
  | 'chunk'
  | 'chunks'
  | 'proof';
/** The archive queue's messages (`SqsArchiveQueue`), read by the archiver (functions/archive). */
export type ArchiveAttributeName =
  | 'receivedAt'
  | 'deliveryId'
  | 'verdict'
  | 'subscribers'
  /** `utf8` (the body is the delivery's text) or `base64`; absent on messages of versions before text. */
  | 'contentEncoding'
  | 'archiveId'
  | 'chunk'
  | 'chunks'
  | 'proof';
/** The archive queue's chunk attributes: the id a body's chunks share, the chunk's index and their count. */
export const ARCHIVE_CHUNK_ATTRIBUTES = {
  id: 'archiveId',
  chunk: 'chunk',
  chunks: 'chunks',
} as const satisfies Record<'id' | 'chunk' | 'chunks', ArchiveAttributeName>;
export type MessageAttributesOf<Name extends string> = Partial<Record<Name, MessageAttributeValue>>;

export interface OutgoingMessage {
  readonly body: string;
  readonly attributes: Record<string, MessageAttributeValue>;
  readonly bytes: number;
  /** For a FIFO queue. */
  readonly fifo?: FifoIds;
  /** For a standard queue: the fair queue's tenant (docs/design.md §10). Ignored when `fifo` is given. */
  readonly messageGroupId?: string;
}

/** What a FIFO queue's message carries: its group, and the id SQS deduplicates it on for 5 minutes. */
export interface FifoIds {
  readonly messageGroupId: string;
  readonly messageDeduplicationId: string;
}

export function outgoing(
  body: string,
  attributes: Record<string, MessageAttributeValue>,
  fifo?: FifoIds,
): OutgoingMessage {
  const bytes = Buffer.byteLength(body, 'utf8') + attributesBytes(attributes);
  return fifo === undefined ? { body, attributes, bytes } : { body, attributes, bytes, fifo };
}

/** A message for a standard queue that SQS serves fairly between `group`s; as it is without a group. */
export function inFairnessGroup(message: OutgoingMessage, group: string | undefined): OutgoingMessage {
  return group === undefined ? message : { ...message, messageGroupId: messageGroupIdOf(group) };
}

// SQS: a group id is 1 to 128 characters, alphanumerics and punctuation (!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~).
const VALID_GROUP_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * A message-lane part's FIFO ids: its conversation as the group (Meta's ids are digits; a conversation id SQS
 * would refuse is replaced by its SHA-256, still one group per conversation), and the SHA-256 hex of its event
 * keys joined by "\n" as the deduplication id, so that a repeat of the same messages within SQS's 5 minutes
 * (Meta's fast retries, a 503 answered after a partial store) is stored once.
 */
export function fifoIds(conversationId: string, eventKeys: readonly string[], body: string): FifoIds {
  return {
    messageGroupId: messageGroupIdOf(conversationId),
    // A part whose keys cannot be read (every message in it lacks an id) is deduplicated on its bytes, so that
    // two different such parts never absorb each other as the empty list of keys would make them.
    messageDeduplicationId: eventKeys.length > 0 ? sha256Hex(eventKeys.join('\n')) : sha256Hex(body),
  };
}

/**
 * The conversation as SQS takes it for a group id: as it is when SQS accepts it (up to 128 printable ASCII
 * characters), else its SHA-256 hex, still one group per conversation. A business-scoped user id alone may
 * have 128 characters, so `<phone_number_id>:<BSUID>` ids are ordinary here.
 */
export function messageGroupIdOf(conversationId: string): string {
  return VALID_GROUP_ID.test(conversationId) ? conversationId : sha256Hex(conversationId);
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export const stringAttribute = (value: string): MessageAttributeValue => ({
  DataType: 'String',
  StringValue: value,
});
export const numberAttribute = (value: number): MessageAttributeValue => ({
  DataType: 'Number',
  StringValue: String(value),
});

export function commonAttributes(
  meta: DeliveryMeta,
): Record<'receivedAt' | 'deliveryId', MessageAttributeValue> {
  return {
    receivedAt: stringAttribute(meta.receivedAt),
    deliveryId: stringAttribute(truncateUtf8(meta.deliveryId, MAX_DELIVERY_ID_BYTES) || '-'),
  };
}

/** The longest prefix of `value` that fits in `maxBytes` of UTF-8, cut between characters. */
export function truncateUtf8(value: string, maxBytes: number): string {
  if (Buffer.byteLength(value, 'utf8') <= maxBytes) return value;
  let bytes = 0;
  let end = 0;
  for (const character of value) {
    const size = Buffer.byteLength(character, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += character.length;
  }
  return value.slice(0, end);
}

/**
 * A delivery part's attributes: `receivedAt`, `deliveryId`, its `part` of `parts`, and for a message-lane part
 * its `conversation` as its message group (for `npm run ops`), so at most 128 ASCII characters.
 */
export function deliveryPartAttributes(
  meta: DeliveryMeta,
  index: number,
  count: number,
  conversationId: string | undefined,
  proof?: string,
): MessageAttributesOf<DeliveryAttributeName> & Record<string, MessageAttributeValue> {
  return {
    ...commonAttributes(meta),
    part: numberAttribute(index + 1),
    parts: numberAttribute(count),
    ...(conversationId !== undefined && { conversation: stringAttribute(messageGroupIdOf(conversationId)) }),
    ...(proof !== undefined && { proof: stringAttribute(proof) }),
  };
}

/** The attribute a stored body's proof travels in, on every queue. */
export function proofAttribute(proof: string | undefined): Partial<Record<'proof', MessageAttributeValue>> {
  return proof === undefined ? {} : { proof: stringAttribute(proof) };
}

/** What SQS counts for message attributes: each name, data type and value. */
export function attributesBytes(attributes: Record<string, MessageAttributeValue>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(attributes)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '');
    bytes += Buffer.byteLength(value.StringValue ?? '') + (value.BinaryValue?.byteLength ?? 0);
  }
  return bytes;
}

/**
 * Bytes of every delivery message's size budget kept for its attributes (SQS counts each attribute's name,
 * type and value against the message size limit): the widest a part's attributes can be, measured on the
 * widest value each can take.
 */
export const MESSAGE_ATTRIBUTES_RESERVE_BYTES = attributesBytes(
  deliveryPartAttributes(
    {
      receivedAt: new Date(8.64e15).toISOString(),
      deliveryId: 'x'.repeat(MAX_DELIVERY_ID_BYTES),
      retryDeadline: 0,
    },
    Number.MAX_SAFE_INTEGER - 1,
    Number.MAX_SAFE_INTEGER,
    'x'.repeat(128),
    proofOf('', ''),
  ),
);
