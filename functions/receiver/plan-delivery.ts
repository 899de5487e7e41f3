/**
 * Which parts of a delivery go into which queue (docs/design.md §7 and §8). Pure.
 *
 * A subscriber without a message lane gets the body whole in its queue, as before lanes. A subscriber with one
 * gets each conversation's inbound messages (`splitByLane`) in its message lane, if it wants `messages`, and
 * the rest in its status lane, if the rest holds an event of a field it wants. A body without inbound messages,
 * or with no subscriber having a lane, is never split by lane: the common status delivery costs what it did.
 *
 * Any piece above the queue message size is then cut by `splitDelivery`; each message-lane part keeps its
 * conversation and carries its own event keys.
 */
import { MESSAGE_LANE_FIELD } from '../../contract/lanes.ts';
import { type SubscriberQueue, wantsField } from '../../contract/subscribers.ts';
import { extractEvents } from '../events/extract-events.ts';
import type { DeliveryPart, DeliveryRoute } from '../queue/delivery-queue-port.ts';
import { splitByLane } from './split-by-lane.ts';
import { splitDelivery } from './split-delivery.ts';

export interface DeliveryPlan {
  /** Every distinct part, each stored in the queues whose route names it. */
  readonly parts: readonly DeliveryPart[];
  /** Only routes with at least one part. */
  readonly routes: readonly DeliveryRoute[];
  /** Pieces that cannot be cut to the message size (one event alone is larger): to quarantine. */
  readonly oversized: readonly string[];
}

export interface ReadBody {
  /** The body as it is to be enqueued. */
  readonly text: string;
  /** UTF-8 bytes of `text`. */
  readonly bytes: number;
  /** How many of its events are inbound messages. */
  readonly inboundMessages: number;
}

/** A piece of the delivery before the size split: the body, a conversation's messages, or the rest. */
interface Piece {
  readonly text: string;
  readonly bytes: number;
  readonly conversationId?: string;
  readonly eventKeys?: readonly string[];
}

interface PieceRoute {
  readonly subscriber: string;
  readonly queueUrl: string;
  readonly pieces: readonly number[];
  readonly ordered: boolean;
}

export function planDelivery(
  body: ReadBody,
  targets: readonly SubscriberQueue[],
  maximumBodyBytes: number,
): DeliveryPlan {
  const whole: Piece = { text: body.text, bytes: body.bytes };
  if (body.inboundMessages === 0 || !targets.some(({ messageQueueUrl }) => messageQueueUrl !== undefined)) {
    const routes = targets.map(({ name, queueUrl }) => ({
      subscriber: name,
      queueUrl,
      pieces: [0],
      ordered: false,
    }));
    return fitToMessageSize([whole], routes, maximumBodyBytes);
  }

  const pieces: Piece[] = [];
  const add = (piece: Piece) => pieces.push(piece) - 1;
  let wholeIndex: number | undefined;
  const { messageParts, rest } = splitByLane(body.text);
  const messagePieces = messageParts.map(({ conversationId, text, eventKeys }) =>
    add({ text, bytes: Buffer.byteLength(text, 'utf8'), conversationId, eventKeys }),
  );
  const restPiece =
    rest === undefined ? undefined : add({ text: rest.text, bytes: Buffer.byteLength(rest.text) });
  const routes: PieceRoute[] = [];
  for (const { name, queueUrl, fields, messageQueueUrl, messageLaneOrdered } of targets) {
    if (messageQueueUrl === undefined) {
      wholeIndex ??= add(whole);
      routes.push({ subscriber: name, queueUrl, pieces: [wholeIndex], ordered: false });
      continue;
    }
    if (wantsField(fields, MESSAGE_LANE_FIELD)) {
      routes.push({
        subscriber: name,
        queueUrl: messageQueueUrl,
        pieces: messagePieces,
        ordered: messageLaneOrdered === true,
      });
    }
    if (restPiece !== undefined && rest?.eventFields.some((field) => wantsField(fields, field))) {
      routes.push({ subscriber: name, queueUrl, pieces: [restPiece], ordered: false });
    }
  }
  return fitToMessageSize(pieces, routes, maximumBodyBytes);
}

/** Cuts the pieces above the message size into parts and points the routes at them. */
function fitToMessageSize(
  pieces: readonly Piece[],
  routes: readonly PieceRoute[],
  maximumBodyBytes: number,
): DeliveryPlan {
  const parts: DeliveryPart[] = [];
  const oversized: string[] = [];
  const partsOf = pieces.map((piece) => {
    const first = parts.length;
    if (piece.bytes <= maximumBodyBytes) {
      parts.push(partOf(piece, piece.text, piece.eventKeys));
    } else {
      const split = splitDelivery(piece.text, maximumBodyBytes);
      for (const text of split.parts) parts.push(partOf(piece, text, undefined));
      oversized.push(...split.oversized);
    }
    return Array.from({ length: parts.length - first }, (_, offset) => first + offset);
  });
  return {
    parts,
    routes: routes.flatMap(({ subscriber, queueUrl, pieces: routed, ordered }) => {
      const indexes = routed.flatMap((piece) => partsOf[piece] ?? []);
      if (indexes.length === 0) return [];
      return [
        ordered
          ? { subscriber, queueUrl, parts: indexes, ordered }
          : { subscriber, queueUrl, parts: indexes },
      ];
    }),
    oversized,
  };
}

function partOf(piece: Piece, text: string, eventKeys: readonly string[] | undefined): DeliveryPart {
  if (piece.conversationId === undefined) return { body: text };
  return { body: text, conversationId: piece.conversationId, eventKeys: eventKeys ?? keysOf(text) };
}

function keysOf(text: string): string[] {
  const extraction = extractEvents(text);
  return extraction.ok ? extraction.events.map((event) => event.key) : [];
}
