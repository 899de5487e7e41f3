/**
 * A body kept as base64 (lossless for any bytes: SQS refuses some characters and all invalid UTF-8), in one
 * message or, when it is too large for one, in chunks of its base64 text that carry a shared id, their
 * 1-based index and their count: concatenate the chunks in order, then decode. The quarantine queue and the
 * archive queue store bodies this way.
 */
import { randomUUID } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import {
  attributesBytes,
  numberAttribute,
  type OutgoingMessage,
  outgoing,
  stringAttribute,
} from './outgoing-message.ts';

/** The attribute names of a chunked body: the id shared by its chunks, the chunk's index and their count. */
export interface ChunkAttributeNames {
  readonly id: string;
  readonly chunk: string;
  readonly chunks: string;
}

export function base64Messages(
  raw: Uint8Array,
  attributes: Record<string, MessageAttributeValue>,
  maximumMessageSizeBytes: number,
  names: ChunkAttributeNames,
  newId: () => string = randomUUID,
): OutgoingMessage[] {
  const base64 = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64');
  if (base64.length + attributesBytes(attributes) <= maximumMessageSizeBytes) {
    return [outgoing(base64, attributes)];
  }
  const id = newId();
  const chunkAttributes = (chunk: number, chunks: number) => ({
    ...attributes,
    [names.id]: stringAttribute(id),
    [names.chunk]: numberAttribute(chunk),
    [names.chunks]: numberAttribute(chunks),
  });
  const widest = chunkAttributes(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const chunkChars = maximumMessageSizeBytes - attributesBytes(widest);
  const chunks = Math.ceil(base64.length / chunkChars);
  return Array.from({ length: chunks }, (_, index) =>
    outgoing(base64.slice(index * chunkChars, (index + 1) * chunkChars), chunkAttributes(index + 1, chunks)),
  );
}
