/**
 * What the receiver enqueues for each planned body, lane by lane (docs/design.md §8): the product's
 * `splitByLane` cuts the body into one message-lane part per conversation and the rest (statuses) for the
 * status lane; each part carries its FIFO ids as the receiver computes them (`fifoIds`: the conversation as
 * the group, the SHA-256 of its event keys as the deduplication id). An unusable body goes whole to the status
 * lane, whose consumer quarantines it.
 *
 * A piece's keys come from the workload's own events (each message's conversation is the one the workload
 * planned, by the product's rule over the ids it generated), not from the split under test: a split that
 * disagrees is a simulator failure. A mutant receiver (`conversationRule`) groups the messages by another
 * rule instead, each group in a body of its own, as a receiver with that rule would enqueue them.
 */

import { envelope, type InboundMessage, messagesChange } from '../../cli/meta-traffic/webhook-bodies.ts';
import { type FifoIds, fifoIds } from '../../functions/queue/outgoing-message.ts';
import { type ConversationPart, splitByLane } from '../../functions/receiver/split-by-lane.ts';
import type { PlannedBody, PlannedMessage } from './workload.ts';

/** A receiver's conversation of an inbound message (a mutant's, in place of the product's). */
export type ConversationRule = (message: InboundMessage) => string;

export type PieceLane = 'message' | 'status';

/** One queue message of a body: its bodyId is `<body>` for the status lane, `<body>/<n>` for a conversation. */
export interface LanePiece extends PlannedBody {
  readonly lane: PieceLane;
  /** The body it was cut from. */
  readonly sourceBodyId: string;
  /** For a message-lane part. */
  readonly fifo?: FifoIds;
  readonly conversationId?: string;
}

/** Every body's pieces, bodies in workload order; with `split: false`, each body whole on the status lane. */
export function lanePieces(
  bodies: readonly PlannedBody[],
  split: boolean,
  conversationRule?: ConversationRule,
): LanePiece[] {
  return bodies.flatMap((body) =>
    split && body.origin !== 'unusable' ? splitBody(body, conversationRule) : [wholeOnStatusLane(body)],
  );
}

function wholeOnStatusLane(body: PlannedBody): LanePiece {
  return { ...body, lane: 'status', sourceBodyId: body.bodyId };
}

function splitBody(body: PlannedBody, conversationRule: ConversationRule | undefined): LanePiece[] {
  const split = splitByLane(body.body);
  const messages = body.content.filter((event): event is PlannedMessage => event.kind === 'message');
  const parts =
    conversationRule === undefined
      ? productParts(body, split.messageParts, messages)
      : mutantParts(messages, conversationRule);
  const pieces: LanePiece[] = parts.map((part, index) => ({
    ...body,
    bodyId: `${body.bodyId}/${index + 1}`,
    body: part.text,
    keys: part.content.map((event) => event.key),
    content: part.content,
    lane: 'message',
    sourceBodyId: body.bodyId,
    fifo: fifoIds(part.conversationId, part.eventKeys, part.text),
    conversationId: part.conversationId,
  }));
  const statuses = body.content.filter((event) => event.kind === 'status');
  if (statuses.length > 0) {
    if (split.rest === undefined) throw new Error(`splitByLane left no rest of ${body.bodyId}`);
    pieces.push({
      ...body,
      body: split.rest.text,
      keys: statuses.map((event) => event.key),
      content: statuses,
      lane: 'status',
      sourceBodyId: body.bodyId,
    });
  }
  return pieces;
}

interface MessagePart {
  readonly conversationId: string;
  readonly text: string;
  /** The keys the receiver read from it (its FIFO deduplication id). */
  readonly eventKeys: readonly string[];
  readonly content: readonly PlannedMessage[];
}

/** The product's parts, which must be the conversations the workload planned, in first-seen order. */
function productParts(
  body: PlannedBody,
  parts: readonly ConversationPart[],
  messages: readonly PlannedMessage[],
): MessagePart[] {
  const expected = [...new Set(messages.map((event) => event.conversation))];
  const got = parts.map((part) => part.conversationId);
  if (got.join(' ') !== expected.join(' ')) {
    throw new Error(`splitByLane cut ${body.bodyId} into [${got.join(' ')}], not [${expected.join(' ')}]`);
  }
  return parts.map((part) => ({
    ...part,
    content: messages.filter((event) => event.conversation === part.conversationId),
  }));
}

/** A receiver with another conversation rule: a part per conversation by that rule, in first-seen order. */
function mutantParts(messages: readonly PlannedMessage[], rule: ConversationRule): MessagePart[] {
  const conversations = [...new Set(messages.map((event) => rule(event.message)))];
  return conversations.map((conversationId) => {
    const content = messages.filter((event) => rule(event.message) === conversationId);
    const eventKeys = content.map((event) => event.key);
    return {
      conversationId,
      text: envelope([messagesChange(content.map((event) => event.message))]),
      eventKeys,
      content,
    };
  });
}
