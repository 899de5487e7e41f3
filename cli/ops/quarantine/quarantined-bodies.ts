/**
 * Quarantine queue messages back into the bodies they hold, as `SqsQuarantineQueue.quarantine` wrote them:
 * the base64 of the raw bytes with `reason`, `receivedAt`, `deliveryId`, and for a body too large for one
 * message, chunks of the base64 text sharing a `quarantineId`, numbered `chunk` of `chunks`. A body is
 * known by its `quarantineId`, or by its message id when it fits one message. Pure.
 */
import { isUtf8 } from 'node:buffer';
import { extractEvents } from 'whatsapp-webhook-dedup/functions/events/extract-events';
import type { QuarantineAttributeName } from 'whatsapp-webhook-dedup/functions/queue/outgoing-message';
import type { QueuedMessage } from '../adapters/queue-messages.ts';

export interface QuarantinedBody {
  readonly id: string;
  readonly reason: string | undefined;
  readonly receivedAt: string | undefined;
  readonly deliveryId: string | undefined;
  /** Chunks the body was cut into (1 when it fit one message). */
  readonly chunks: number;
  /** Its messages in chunk order (fewer than `chunks` when some are missing). */
  readonly messages: readonly QueuedMessage[];
  /** The body's bytes, when every chunk is present. */
  readonly bytes: Buffer | undefined;
  /** The receiver's proof of the bytes (functions/commons/provenance.ts), checked before a requeue. */
  readonly proof: string | undefined;
}

export interface BodySummary {
  readonly id: string;
  readonly reason: string | undefined;
  readonly receivedAt: string | undefined;
  readonly deliveryId: string | undefined;
  readonly chunks: number;
  readonly chunksPresent: number;
  /** Undefined when chunks are missing. */
  readonly bytes: number | undefined;
  /**
   * What the body reads as now: `N events` (and, for items without a usable id, e.g. `1 message without a
   * usable id`), or why it holds none.
   */
  readonly reads: string;
}

/** Groups messages into bodies, in the order their first message was read. */
export function groupQuarantined(messages: readonly QueuedMessage[]): QuarantinedBody[] {
  const groups = new Map<string, QueuedMessage[]>();
  for (const message of messages) {
    const id = attribute(message, 'quarantineId') ?? message.messageId;
    groups.set(id, [...(groups.get(id) ?? []), message]);
  }
  return [...groups].map(([id, group]) => {
    const sorted = [...group].sort((a, b) => chunkNumber(a) - chunkNumber(b));
    const first = sorted[0] as QueuedMessage;
    const chunks = Number(attribute(first, 'chunks') ?? 1);
    const numbers = new Set(sorted.map(chunkNumber));
    const complete = Array.from({ length: chunks }, (_, index) => index + 1).every((n) => numbers.has(n));
    return {
      id,
      reason: attribute(first, 'reason'),
      receivedAt: attribute(first, 'receivedAt'),
      deliveryId: attribute(first, 'deliveryId'),
      chunks,
      messages: sorted,
      bytes: complete ? decode(first, uniqueChunks(sorted)) : undefined,
      proof: attribute(first, 'proof'),
    };
  });
}

export function summarise(body: QuarantinedBody): BodySummary {
  return {
    id: body.id,
    reason: body.reason,
    receivedAt: body.receivedAt,
    deliveryId: body.deliveryId,
    chunks: body.chunks,
    chunksPresent: new Set(body.messages.map(chunkNumber)).size,
    bytes: body.bytes?.byteLength,
    reads: body.bytes === undefined ? 'incomplete: chunks missing' : readsAs(body.bytes),
  };
}

/** The body as text when it is UTF-8, else undefined (show it as base64). */
export function bodyText(bytes: Buffer): string | undefined {
  return isUtf8(bytes) ? bytes.toString('utf8') : undefined;
}

function readsAs(bytes: Buffer): string {
  const extraction = extractEvents(bytes);
  if (!extraction.ok) return `${extraction.reason} (${extraction.detail})`;
  const events = `${extraction.events.length} event${extraction.events.length === 1 ? '' : 's'}`;
  // A message or status without a usable id is no event (docs/design.md §1): say what was set aside.
  const unkeyed = new Map<string, number>();
  for (const { problem } of extraction.unkeyed) unkeyed.set(problem, (unkeyed.get(problem) ?? 0) + 1);
  return [events, ...[...unkeyed].map(([problem, count]) => `${count} ${problem}`)].join(', ');
}

function decode(first: QueuedMessage, messages: readonly QueuedMessage[]): Buffer {
  const text = messages.map((message) => message.body).join('');
  return attribute(first, 'contentEncoding') === 'base64'
    ? Buffer.from(text, 'base64')
    : Buffer.from(text, 'utf8');
}

/** One message per chunk number (a chunk read twice counts once). */
function uniqueChunks(sorted: readonly QueuedMessage[]): QueuedMessage[] {
  return sorted.filter(
    (message, index) =>
      index === 0 || chunkNumber(sorted[index - 1] as QueuedMessage) !== chunkNumber(message),
  );
}

function chunkNumber(message: QueuedMessage): number {
  return Number(attribute(message, 'chunk') ?? 1);
}

function attribute(message: QueuedMessage, name: QuarantineAttributeName): string | undefined {
  return message.attributes[name]?.StringValue;
}
