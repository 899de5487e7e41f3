/**
 * A body in one queue message or, when it is too large for one, in chunks that carry a shared id, their 1-based
 * index and their count, each chunk as large as the message limit leaves room for beside the chunk attributes.
 * How a body is cut is the caller's (base64-chunks.ts, text-chunks.ts): joining the chunks in order gives the
 * body back.
 */
import { randomUUID } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import {
  attributesBytes,
  numberAttribute,
  type OutgoingMessage,
  stringAttribute,
} from './outgoing-message.ts';

/** The attribute names of a chunked body: the id shared by its chunks, the chunk's index and their count. */
export interface ChunkAttributeNames {
  readonly id: string;
  readonly chunk: string;
  readonly chunks: string;
}

export interface ChunkedBody {
  /** The body as the message carries it. */
  readonly text: string;
  /** Its UTF-8 bytes, as SQS counts them. */
  readonly bytes: number;
  /** The body cut into pieces of at most `maximumBytes` UTF-8 bytes each, in order. */
  cut(maximumBytes: number): string[];
}

export function chunkedMessages(
  body: ChunkedBody,
  attributes: Record<string, MessageAttributeValue>,
  maximumMessageSizeBytes: number,
  names: ChunkAttributeNames,
  newId: () => string = randomUUID,
): OutgoingMessage[] {
  const wholeBytes = body.bytes + attributesBytes(attributes);
  if (wholeBytes <= maximumMessageSizeBytes) return [{ body: body.text, attributes, bytes: wholeBytes }];
  const id = newId();
  const chunkAttributes = (chunk: number, chunks: number) => ({
    ...attributes,
    [names.id]: stringAttribute(id),
    [names.chunk]: numberAttribute(chunk),
    [names.chunks]: numberAttribute(chunks),
  });
  const widest = chunkAttributes(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const pieces = body.cut(maximumMessageSizeBytes - attributesBytes(widest));
  return pieces.map((piece, index) => {
    const pieceAttributes = chunkAttributes(index + 1, pieces.length);
    return {
      body: piece,
      attributes: pieceAttributes,
      bytes: Buffer.byteLength(piece, 'utf8') + attributesBytes(pieceAttributes),
    };
  });
}
