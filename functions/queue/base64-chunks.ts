/**
 * A body kept as base64 (lossless for any bytes: SQS refuses some characters and all invalid UTF-8), in one
 * message or, when it is too large for one, in chunks of its base64 text that carry a shared id, their
 * 1-based index and their count: concatenate the chunks in order, then decode. The quarantine queue stores
 * every body this way, the archive queue those it cannot send as text (text-chunks.ts).
 */
import { randomUUID } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { type ChunkAttributeNames, chunkedMessages } from './chunked-body.ts';
import type { OutgoingMessage } from './outgoing-message.ts';

export function base64Messages(
  raw: Uint8Array,
  attributes: Record<string, MessageAttributeValue>,
  maximumMessageSizeBytes: number,
  names: ChunkAttributeNames,
  newId: () => string = randomUUID,
): OutgoingMessage[] {
  const base64 = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64');
  const body = {
    text: base64,
    bytes: base64.length,
    cut: (maximumBytes: number) =>
      Array.from({ length: Math.ceil(base64.length / maximumBytes) }, (_, index) =>
        base64.slice(index * maximumBytes, (index + 1) * maximumBytes),
      ),
  };
  return chunkedMessages(body, attributes, maximumMessageSizeBytes, names, newId);
}
