/**
 * The receiver's one look inside a signed body: is it a WhatsApp envelope, and how many events does it hold?
 * One native `JSON.parse`, one scan for the nesting depth and one walk; the text that is enqueued is the body
 * as received. Pure.
 */
import { isUtf8 } from 'node:buffer';
import type { EventOrigin } from '../../contract/event-origin.ts';
import { extractEventsFromEnvelope } from '../events/extract-events.ts';
import { nestingExceeds } from '../events/json-spans.ts';
import { distinctOrigins } from '../events/origins.ts';
import { MAX_LOSSLESS_NESTING } from '../events/parse-json.ts';
import type { BodyRejection } from '../events/types.ts';

export type DeliveryReading =
  | {
      readonly ok: true;
      /** The body as text, as received except for the characters SQS refuses (see `escapeForQueue`). */
      readonly text: string;
      /** UTF-8 bytes of `text`. */
      readonly bytes: number;
      readonly events: number;
      /** Events that are inbound messages (`messages[]` items of a `messages` change): the message lane's. */
      readonly inboundMessages: number;
      /** The distinct fields of those events, in first-seen order (for logs). */
      readonly eventFields: readonly string[];
      /**
       * What subscribers are routed on: the distinct field, number and account of its events, id-less items,
       * unknown fields' changes and malformed parts, in first-seen order.
       */
      readonly eventOrigins: readonly EventOrigin[];
      /** Names of undocumented fields (acknowledged without a key, docs/design.md §1), one per change. */
      readonly unknownFields: readonly string[];
      /** Inner parts that yield no event because of their shape (see `extractEventsFromEnvelope`). */
      readonly malformedParts: number;
    }
  | { readonly ok: false; readonly reason: BodyRejection; readonly detail: string };

/**
 * `body` is the raw body: its bytes, or its text when the front end already decoded it (API Gateway's
 * non-base64 bodies); `bodyBytes`, when the caller already knows it, spares measuring a text body. Keys are not claimed from this reading (native numbers lose digits above 2^53): the
 * consumer derives them from its own lossless parse. Never throws.
 */
export function readDelivery(body: Uint8Array | string, bodyBytes?: number): DeliveryReading {
  let text: string;
  if (typeof body === 'string') {
    text = body;
  } else {
    // JSON exchanged between systems is UTF-8 (RFC 8259 §8.1); decoding anything else would alter the body.
    if (!isUtf8(body)) return { ok: false, reason: 'invalid-json', detail: 'body is not valid UTF-8' };
    text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // V8's message quotes the body around the error: it must not reach a log.
    return { ok: false, reason: 'invalid-json', detail: 'body is not valid JSON' };
  }
  // The one place the nesting limit is applied: V8 parses any depth, but the consumer's lossless parser (and so
  // every later read of a part of this body, which nests no deeper) refuses more than MAX_LOSSLESS_NESTING
  // levels. A body accepted here is then readable wherever it or a part of it is read again.
  if (nestingExceeds(text, MAX_LOSSLESS_NESTING)) {
    return {
      ok: false,
      reason: 'invalid-json',
      detail: `JSON nested deeper than ${MAX_LOSSLESS_NESTING} levels`,
    };
  }
  const extraction = extractEventsFromEnvelope(parsed);
  if (!extraction.ok) return extraction;
  const eventFields = new Set<string>();
  let inboundMessages = 0;
  // A message or status without an id is routed like one with: its subscribers' consumers quarantine it.
  for (const event of [...extraction.events, ...extraction.unkeyed]) {
    eventFields.add(event.field);
    if (event.kind === 'message') inboundMessages++;
  }
  const queueText = escapeForQueue(text);
  return {
    ok: true,
    text: queueText,
    bytes:
      queueText !== text
        ? Buffer.byteLength(queueText)
        : typeof body === 'string'
          ? (bodyBytes ?? Buffer.byteLength(body))
          : body.byteLength,
    events: extraction.events.length,
    inboundMessages,
    eventFields: [...eventFields],
    eventOrigins: distinctOrigins(extraction),
    unknownFields: extraction.unknownFields.map((change) => change.field),
    malformedParts: extraction.malformed.length,
  };
}

// SQS accepts #x9 #xA #xD #x20–#xD7FF #xE000–#xFFFD #x10000–#x10FFFF. In JSON that `JSON.parse` accepted,
// decoded from valid UTF-8, only U+FFFE and U+FFFF can fall outside, and only inside strings.
const REFUSED_BY_SQS = /[\uFFFE\uFFFF]/g;

/**
 * Writes the characters SQS refuses as JSON escapes: the decoded value (and so every key) is unchanged,
 * where sending them raw would get the message rejected.
 */
export function escapeForQueue(text: string): string {
  REFUSED_BY_SQS.lastIndex = 0;
  if (!REFUSED_BY_SQS.test(text)) return text;
  return text.replace(REFUSED_BY_SQS, (character) => `\\u${character.charCodeAt(0).toString(16)}`);
}
