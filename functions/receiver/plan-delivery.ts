/**
 * Which parts of a delivery go into which queue (docs/design.md §7 and §8). Pure.
 *
 * A subscriber without a message lane gets the body whole in its queue, as before lanes. A subscriber with one
 * gets each conversation's inbound messages (`splitByLane`) in its message lane, if it wants `messages`, and
 * the rest in its status lane, if the rest holds anything of a field it wants (an event, an id-less item, a
 * change of an unknown field). A body without inbound messages, or with no subscriber having a lane, is never
 * split by lane: the common status delivery costs what it did.
 *
 * Any piece above the queue message size is then cut by `splitDelivery`; each message-lane part keeps its
 * conversation and carries its own event keys. Every part is charged to its view's `OutputBudget` as it is
 * made; a body that would exceed it, or a part that cannot be read back, is refused whole, to be quarantined.
 */
import { type EventOrigin, wantsEvent } from '../../contract/event-origin.ts';
import type { SubscriberQueue } from '../../contract/subscribers.ts';
import { extractEvents } from '../events/extract-events.ts';
import type { DeliveryPart, DeliveryRoute } from '../queue/delivery-queue-port.ts';
import { OutputBudget } from './output-budget.ts';
import { splitByLane } from './split-by-lane.ts';
import { splitDelivery } from './split-delivery.ts';

export interface DeliveryPlan {
  readonly ok: true;
  /** Every distinct part, each stored in the queues whose route names it. */
  readonly parts: readonly DeliveryPart[];
  /** Only routes with at least one part. */
  readonly routes: readonly DeliveryRoute[];
  /** Pieces that cannot be cut to the message size (one event alone is larger): to quarantine. */
  readonly oversized: readonly string[];
}

/** A body not to enqueue at all: it is quarantined whole, so that nothing of it is lost or multiplied. */
export interface RefusedDelivery {
  readonly ok: false;
  /**
   * `amplifying-body`: a subscriber's view would exceed its `OutputBudget` (bytes or parts);
   * `unreadable-part`: a part cut from the body could not be read back as an envelope.
   */
  readonly reason: 'amplifying-body' | 'unreadable-part';
  /** Sizes and counts, or the parser's position-only detail: never content. */
  readonly detail: string;
}

export interface ReadBody {
  /** The body as it is to be enqueued. */
  readonly text: string;
  /** UTF-8 bytes of `text`. */
  readonly bytes: number;
  /** How many of its events are inbound messages. */
  readonly inboundMessages: number;
  /** What subscribers are routed on (read-delivery.ts); the first one names the body's fairness group. */
  readonly eventOrigins: readonly EventOrigin[];
}

/** A piece of the delivery before the size split: the body, a conversation's messages, or the rest. */
interface Piece {
  readonly text: string;
  readonly bytes: number;
  readonly conversationId?: string;
  readonly eventKeys?: readonly string[];
  /** Its phone number (else its account): its message group on a standard queue (`fairnessGroupOf`). */
  readonly fairnessGroup: string | undefined;
  /** The view it belongs to (the whole body's, or the lanes'), charged for the parts it is cut into. */
  readonly budget: OutputBudget;
}

interface PieceRoute {
  readonly subscriber: string;
  readonly queueUrl: string;
  readonly pieces: readonly number[];
  readonly ordered: boolean;
}

/**
 * Each subscriber sees one of two views of the body, the whole body or its lanes, and each view is held to
 * an `OutputBudget` of the body's size: past it, the delivery is refused (`amplifying-body`) before more is
 * built than the budget.
 *
 * @example
 * const plan = planDelivery(reading, targets, fanOut.maximumBodyBytes);
 * if (!plan.ok) await quarantine.quarantine(raw, plan.reason, meta);
 */
export function planDelivery(
  body: ReadBody,
  targets: readonly SubscriberQueue[],
  maximumBodyBytes: number,
): DeliveryPlan | RefusedDelivery {
  const budget = () => OutputBudget.forBody(body.bytes, maximumBodyBytes);
  if (body.inboundMessages === 0 || !targets.some(({ messageQueueUrl }) => messageQueueUrl !== undefined)) {
    const whole = wholePiece(body, budget());
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
  const laneBudget = budget();
  const split = splitByLane(body.text, laneBudget);
  if (split.exceeded === true) return amplifying(laneBudget);
  if (split.unreadable !== undefined) {
    return { ok: false, reason: 'unreadable-part', detail: split.unreadable.detail };
  }
  const { messageParts, rest } = split;
  const messagePieces = messageParts.map(({ conversationId, text, eventKeys, origins }) => ({
    index: add({
      text,
      bytes: Buffer.byteLength(text, 'utf8'),
      conversationId,
      eventKeys,
      fairnessGroup: fairnessGroupOf(origins),
      budget: laneBudget,
    }),
    origins,
  }));
  const restPiece =
    rest === undefined
      ? undefined
      : add({
          text: rest.text,
          bytes: Buffer.byteLength(rest.text),
          fairnessGroup: fairnessGroupOf(rest.origins),
          budget: laneBudget,
        });
  const routes: PieceRoute[] = [];
  for (const target of targets) {
    const { name, queueUrl, messageQueueUrl, messageLaneOrdered } = target;
    if (messageQueueUrl === undefined) {
      wholeIndex ??= add(wholePiece(body, budget()));
      routes.push({ subscriber: name, queueUrl, pieces: [wholeIndex], ordered: false });
      continue;
    }
    // A conversation's part goes to the subscribers of its number (or account) only.
    const wanted = messagePieces.filter(({ origins }) =>
      origins.some((origin) => wantsEvent(target, origin)),
    );
    if (wanted.length > 0) {
      routes.push({
        subscriber: name,
        queueUrl: messageQueueUrl,
        pieces: wanted.map(({ index }) => index),
        ordered: messageLaneOrdered === true,
      });
    }
    if (restPiece !== undefined && rest?.origins.some((origin) => wantsEvent(target, origin))) {
      routes.push({ subscriber: name, queueUrl, pieces: [restPiece], ordered: false });
    }
  }
  return fitToMessageSize(pieces, routes, maximumBodyBytes);
}

/** The body whole, charged to its view (the whole view has no other part before the size split). */
function wholePiece(body: ReadBody, budget: OutputBudget): Piece {
  budget.charge(body.bytes);
  return { text: body.text, bytes: body.bytes, fairnessGroup: fairnessGroupOf(body.eventOrigins), budget };
}

/**
 * The message group a part carries on a standard queue, which makes the queue a fair queue between phone
 * numbers (docs/design.md §10): its first phone number, else its first account, else none (SQS then treats the
 * message as a tenant of its own). A part holding several numbers is grouped under its first: Meta writes
 * one number's changes together, so such parts are rare, and each is still delivered.
 */
export function fairnessGroupOf(origins: readonly EventOrigin[]): string | undefined {
  return (
    origins.find(({ phoneNumberId }) => phoneNumberId !== undefined)?.phoneNumberId ??
    origins.find(({ wabaId }) => wabaId !== undefined)?.wabaId
  );
}

function amplifying(budget: OutputBudget): RefusedDelivery {
  const { bytes, parts } = budget.spent;
  return {
    ok: false,
    reason: 'amplifying-body',
    detail: `a view of the body reached ${bytes} bytes in ${parts} parts, past its bound of ${budget.maxBytes} bytes in ${budget.maxParts} parts`,
  };
}

/** Cuts the pieces above the message size into parts and points the routes at them. */
function fitToMessageSize(
  pieces: readonly Piece[],
  routes: readonly PieceRoute[],
  maximumBodyBytes: number,
): DeliveryPlan | RefusedDelivery {
  const parts: DeliveryPart[] = [];
  const oversized: string[] = [];
  const partsOf: number[][] = [];
  for (const piece of pieces) {
    const first = parts.length;
    if (piece.bytes <= maximumBodyBytes) {
      parts.push(partOf(piece, piece.text, piece.eventKeys ?? []));
    } else {
      // The piece is replaced by its parts: they are charged instead, as they are made.
      piece.budget.refund(piece.bytes);
      const split = splitDelivery(piece.text, maximumBodyBytes, piece.budget);
      if (split.exceeded === true) return amplifying(piece.budget);
      for (const text of split.parts) {
        const extraction = piece.conversationId === undefined ? undefined : extractEvents(text);
        if (extraction?.ok === false)
          return { ok: false, reason: 'unreadable-part', detail: extraction.detail };
        parts.push(partOf(piece, text, extraction?.events.map((event) => event.key) ?? []));
      }
      oversized.push(...split.oversized);
    }
    partsOf.push(Array.from({ length: parts.length - first }, (_, offset) => first + offset));
  }
  return {
    ok: true,
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

function partOf(piece: Piece, text: string, eventKeys: readonly string[]): DeliveryPart {
  const group = piece.fairnessGroup === undefined ? {} : { fairnessGroup: piece.fairnessGroup };
  if (piece.conversationId === undefined) return { body: text, ...group };
  return { body: text, conversationId: piece.conversationId, eventKeys, ...group };
}
