/**
 * The receiver's side of a schedule: each planned body is enqueued at its time (the receiver acknowledged it
 * to Meta then, so the queue holds the only copy), Meta's re-sends included.
 */
import type { FaultTally } from './faults.ts';
import type { Scheduler } from './scheduler.ts';
import type { StandardQueue } from './standard-queue.ts';
import type { Trace } from './trace.ts';
import type { PlannedBody } from './workload.ts';

export class ReceiverArrivals {
  readonly #pending: number[] = [];

  constructor(
    bodies: readonly PlannedBody[],
    options: { scheduler: Scheduler; queue: StandardQueue; faults: FaultTally; trace: Trace },
  ) {
    const { scheduler, queue, faults, trace } = options;
    for (const body of bodies) {
      this.#pending.push(body.sendAt);
      scheduler.schedule({
        worker: 'receiver',
        label: `enqueue ${body.bodyId}`,
        delayMs: body.sendAt - scheduler.now,
        complete: () => {
          this.#pending.splice(this.#pending.indexOf(body.sendAt), 1);
          const message = queue.send(body.body, body.bodyId, scheduler.now);
          if (body.origin === 'meta-retry') faults.add('meta-retry');
          trace.add(
            scheduler.now,
            'receiver',
            `enqueue ${body.bodyId} (${body.origin})`,
            `${message.messageId}: ${body.keys.join(' ')}`,
          );
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
}
