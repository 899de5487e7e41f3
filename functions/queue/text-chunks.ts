/**
 * A body sent as its own text where SQS takes it as it is: valid UTF-8 holding only the characters SQS allows in
 * a message body (XML 1.0's: #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF; SQS refuses
 * or replaces any other). Above one message, the text is cut by UTF-8 bytes between characters, so that each
 * chunk is valid text too: concatenate the chunks in order. Meta's bodies are JSON, whose strings escape control
 * characters, so nearly every body travels as text; anything else goes as base64 (base64-chunks.ts).
 */

import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { type ChunkAttributeNames, chunkedMessages } from './chunked-body.ts';
import type { OutgoingMessage } from './outgoing-message.ts';

/**
 * A character SQS does not take in a message body: a control character other than tab, LF and CR, U+FFFE or
 * U+FFFF, or a lone surrogate. (Written on UTF-16 units: the same set as the `u` flag's code-point class, in
 * half its time on a one-byte string.)
 */
const NOT_SQS_TEXT =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding the control characters SQS refuses is the point.
  /[\0-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The body as the text SQS stores unchanged, or `undefined` when it must travel otherwise: bytes that are not
 * UTF-8, or a character SQS refuses. A string is the text of its UTF-8 bytes (as the receiver verifies it).
 */
export function sqsTextOf(body: Uint8Array | string): string | undefined {
  let text: string;
  if (typeof body === 'string') text = body;
  else if (isUtf8(body)) text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  else return undefined;
  return NOT_SQS_TEXT.test(text) ? undefined : text;
}

/** `text` (from `sqsTextOf`) in one message, or in chunks of whole characters when it is too large for one. */
export function textMessages(
  text: string,
  attributes: Record<string, MessageAttributeValue>,
  maximumMessageSizeBytes: number,
  names: ChunkAttributeNames,
  newId: () => string = randomUUID,
): OutgoingMessage[] {
  const body = {
    text,
    bytes: Buffer.byteLength(text, 'utf8'),
    cut: (maximumBytes: number) => cut(text, maximumBytes),
  };
  return chunkedMessages(body, attributes, maximumMessageSizeBytes, names, newId);
}

/** Pieces of at most `maximumBytes` UTF-8 bytes, each ending before a character that would not fit whole. */
function cut(text: string, maximumBytes: number): string[] {
  const bytes = Buffer.from(text, 'utf8');
  const pieces: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + maximumBytes, bytes.length);
    // A continuation byte (10xxxxxx) is inside a character: end before the character's first byte.
    while (end < bytes.length && end > start && ((bytes[end] as number) & 0xc0) === 0x80) end--;
    if (end === start) throw new RangeError(`A chunk of ${maximumBytes} bytes cannot hold one character.`);
    pieces.push(bytes.toString('utf8', start, end));
    start = end;
  }
  return pieces;
}
