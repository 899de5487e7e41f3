/**
 * The receiver's side of a schedule: each planned body is enqueued at its time (the receiver acknowledged it
 * to Meta then, so the queues hold the only copy), Meta's re-sends included, as its lane pieces
 * (lane-pieces.ts): every part stored in one step, a conversation's part in the FIFO message queue with its
 * group and deduplication id (a repeat within 5 minutes is absorbed there), the rest in the status queue.
 */
import type { FaultTally } from './faults.ts';
import type { FifoQueue } from './fifo-queue.ts';
import type { LanePiece } from './lane-pieces.ts';
import type { Scheduler } from './scheduler.ts';
import type { StandardQueue } from './standard-queue.ts';
import type { Trace } from './trace.ts';

export interface ArrivalQueues {
  readonly status: StandardQueue;
  /** Absent when every piece is on the status lane. */
  readonly message?: FifoQueue;
}

export class ReceiverArrivals {
  readonly #pending: number[] = [];

  constructor(
    pieces: readonly LanePiece[],
    options: { scheduler: Scheduler; queues: ArrivalQueues; faults: FaultTally; trace: Trace },
  ) {
    const { scheduler, queues, faults, trace } = options;
    const bodies = new Map<string, LanePiece[]>();
    for (const piece of pieces) {
      const group = bodies.get(piece.sourceBodyId);
      if (group === undefined) bodies.set(piece.sourceBodyId, [piece]);
      else group.push(piece);
    }
    for (const [bodyId, bodyPieces] of bodies) {
      const { sendAt, origin } = bodyPieces[0] as LanePiece;
      this.#pending.push(sendAt);
      scheduler.schedule({
        worker: 'receiver',
        label: `enqueue ${bodyId}`,
        delayMs: sendAt - scheduler.now,
        complete: () => {
          this.#pending.splice(this.#pending.indexOf(sendAt), 1);
          if (origin === 'meta-retry') faults.add('meta-retry');
          for (const piece of bodyPieces) {
            const stored = this.#store(piece, queues, scheduler.now);
            if (stored.deduplicated) faults.add('fifo-deduplicated');
            trace.add(
              scheduler.now,
              'receiver',
              `enqueue ${piece.bodyId} (${origin})`,
              `${stored.messageId}${stored.deduplicated ? ' (deduplicated)' : ''}: ${piece.keys.join(' ')}`,
            );
          }
        },
      });
    }
  }

  /** When the next body arrives, if any is left. */
  nextArrivalAt(): number | undefined {
    return this.#pending.length === 0 ? undefined : Math.min(...this.#pending);
  }

  done(): boolean {
    return this.#pending.length === 0;
  }

  #store(piece: LanePiece, queues: ArrivalQueues, now: number): { messageId: string; deduplicated: boolean } {
    if (piece.lane === 'status') {
      return { messageId: queues.status.send(piece.body, piece.bodyId, now).messageId, deduplicated: false };
    }
    if (queues.message === undefined || piece.fifo === undefined) {
      throw new Error(`${piece.bodyId} is a message-lane part, but the schedule has no message queue`);
    }
    const sent = queues.message.send(piece.body, piece.bodyId, now, {
      groupId: piece.fifo.messageGroupId,
      deduplicationId: piece.fifo.messageDeduplicationId,
    });
    return { messageId: sent.message.messageId, deduplicated: sent.deduplicated };
  }
}
