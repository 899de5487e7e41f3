/**
 * What the receiver enqueues for each planned body, lane by lane (docs/design.md §8): the product's
 * `splitByLane` cuts the body into one message-lane part per conversation and the rest (statuses) for the
 * status lane; each part carries its FIFO ids as the receiver computes them (`fifoIds`: the conversation as
 * the group, the SHA-256 of its event keys as the deduplication id). An unusable body goes whole to the status
 * lane, whose consumer quarantines it.
 *
 * A piece's keys come from the workload's own events (the conversation of each message is computed here from
 * its `from`), not from the split under test: a split that disagrees is a simulator failure.
 */
import { conversationId } from '../../contract/lanes.ts';
import { type FifoIds, fifoIds } from '../../functions/queue/outgoing-message.ts';
import { splitByLane } from '../../functions/receiver/split-by-lane.ts';
import { PHONE_NUMBER_ID } from '../support/webhooks/webhook-bodies.ts';
import type { PlannedBody, PlannedEvent } from './workload.ts';

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
export function lanePieces(bodies: readonly PlannedBody[], split: boolean): LanePiece[] {
  return bodies.flatMap((body) =>
    split && body.origin !== 'unusable' ? splitBody(body) : [wholeOnStatusLane(body)],
  );
}

function wholeOnStatusLane(body: PlannedBody): LanePiece {
  return { ...body, lane: 'status', sourceBodyId: body.bodyId };
}

function conversationOf(event: PlannedEvent): string | undefined {
  return event.kind === 'message' ? conversationId(PHONE_NUMBER_ID, event.message.from) : undefined;
}

function splitBody(body: PlannedBody): LanePiece[] {
  const split = splitByLane(body.body);
  const expected = [...new Set(body.content.flatMap((event) => conversationOf(event) ?? []))];
  const got = split.messageParts.map((part) => part.conversationId);
  if (got.join(' ') !== expected.join(' ')) {
    throw new Error(`splitByLane cut ${body.bodyId} into [${got.join(' ')}], not [${expected.join(' ')}]`);
  }
  const pieces: LanePiece[] = split.messageParts.map((part, index) => {
    const content = body.content.filter((event) => conversationOf(event) === part.conversationId);
    return {
      ...body,
      bodyId: `${body.bodyId}/${index + 1}`,
      body: part.text,
      keys: content.map((event) => event.key),
      content,
      lane: 'message',
      sourceBodyId: body.bodyId,
      fifo: fifoIds(part.conversationId, part.eventKeys, part.text),
      conversationId: part.conversationId,
    };
  });
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
