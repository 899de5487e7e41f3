/**
 * The user's handlers in a schedule, written as the documentation tells users to write them: `onMessage` runs
 * its side effect; `onStatus` acts only when the ledger says the status `advanced` (README, DESIGN §3) and
 * records what it saw. A side effect is an operation that takes time and may fail before it does anything
 * (the handler contract: throw before the effect), defer it with `RetryLater` (a downstream Retry-After), give
 * up on it with `DeadLetter` (a downstream refusing the input: the consumer moves the record to its lane's DLQ
 * once it was received `afterReceives` times, 1 to 3, journaled with the keys), or take seconds; when its
 * invocation dies during it, the effect may or may not have happened (a call already on the wire). During a
 * backend outage every effect refuses, with an error or a Retry-After.
 *
 * With `turns`, inbound messages go to `onConversationTurn` with that burst window instead: one side effect per
 * turn, effecting each of its messages. Every message handler call's start and return are journaled (the
 * per-conversation order invariant reads them).
 *
 * Whether a call gives up is drawn from a stream of its own (`dead-letter`), so that the handlers' other draws
 * stay what they were for every seed whose plan has no `DeadLetter`.
 */

import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import {
  type ConversationTurnContext,
  DeadLetter,
  defineWebhookHandlers,
  type MessageContext,
  RetryLater,
  type WebhookHandlers,
} from '../../functions/consumer/handler-api.ts';
import type { FaultPlan, FaultTally } from './faults.ts';
import type { ProtocolJournal } from './protocol-journal.ts';
import type { Scheduler } from './scheduler.ts';
import type { Trace } from './trace.ts';

/** The `reason` of every `DeadLetter` the simulated handlers throw (the DLQ copy's `deadLetterReason`). */
export const DEAD_LETTER_REASON = 'simulated';

export class InjectedHandlerError extends Error {
  constructor(key: string) {
    super(`Injected handler failure for ${key}`);
    this.name = 'InjectedHandlerError';
  }
}

/** The side effects' backend is down until `downUntil` (virtual epoch ms). */
export interface BackendOutage {
  readonly downUntil: number;
  /** It answers with this Retry-After, which the handler passes on as `RetryLater`; otherwise an error. */
  readonly retryAfterSeconds?: number;
}

export interface SimulatedHandlersOptions {
  readonly scheduler: Scheduler;
  readonly plan: FaultPlan;
  readonly random: SeededRandom;
  readonly faults: FaultTally;
  readonly journal: ProtocolJournal;
  readonly trace: Trace;
  readonly outage?: BackendOutage;
  /** Inbound messages are handled in turns, with this burst window (ms). */
  readonly turns?: { readonly burstWindowMs: number };
}

export function simulatedHandlers(options: SimulatedHandlersOptions): WebhookHandlers {
  const { scheduler, plan, random, faults, journal, trace, outage, turns } = options;
  const deadLetterRandom = random.fork('dead-letter');
  const backendDown = () => outage !== undefined && scheduler.now < outage.downUntil;

  const sideEffect = (keys: readonly string[]): Promise<void> => {
    const key = keys.join(' ');
    const worker = scheduler.currentWorker;
    const fails = random.chance(plan.handlerErrorRate);
    const defersFor = random.chance(plan.handlerRetryLaterRate) ? random.int(0, 60) : undefined;
    const slow = random.chance(plan.handlerSlowRate);
    const givesUpAfter = deadLetterRandom.chance(plan.handlerDeadLetterRate)
      ? deadLetterRandom.int(1, 3)
      : undefined;
    if (slow) faults.add('handler-slow');
    const label = `effect ${key}`;
    return scheduler.schedule({
      worker,
      label,
      delayMs: slow ? random.int(1000, 8000) : random.int(1, 30),
      complete: () => {
        if (fails) {
          faults.add('handler-error');
          trace.add(scheduler.now, worker, label, 'handler threw before its effect');
          throw new InjectedHandlerError(key);
        }
        if (backendDown()) {
          faults.add('backend-down');
          const retryAfter = outage?.retryAfterSeconds;
          trace.add(
            scheduler.now,
            worker,
            label,
            `backend down${retryAfter === undefined ? '' : `, Retry-After ${retryAfter}`}`,
          );
          throw retryAfter === undefined
            ? new InjectedHandlerError(key)
            : new RetryLater({ afterSeconds: retryAfter });
        }
        if (givesUpAfter !== undefined) {
          faults.add('handler-dead-letter');
          journal.recordDeadLetterThrow({
            keys,
            worker,
            reason: DEAD_LETTER_REASON,
            afterReceives: givesUpAfter,
            at: scheduler.now,
          });
          trace.add(
            scheduler.now,
            worker,
            label,
            `handler gave up before its effect (DeadLetter, afterReceives ${givesUpAfter})`,
          );
          throw new DeadLetter({ reason: DEAD_LETTER_REASON, afterReceives: givesUpAfter });
        }
        if (defersFor !== undefined) {
          faults.add('handler-retry-later');
          trace.add(scheduler.now, worker, label, `handler deferred it by ${defersFor} s before its effect`);
          throw new RetryLater({ afterSeconds: defersFor, reason: 'simulated' });
        }
        for (const effected of keys)
          journal.recordEffect({ key: effected, worker, at: scheduler.now, atCrash: false });
        trace.add(scheduler.now, worker, label, 'effected');
      },
      abandon: () => {
        const happened =
          !fails &&
          defersFor === undefined &&
          givesUpAfter === undefined &&
          !backendDown() &&
          random.chance(0.5);
        if (happened) {
          for (const effected of keys)
            journal.recordEffect({ key: effected, worker, at: scheduler.now, atCrash: true });
        }
        trace.add(
          scheduler.now,
          worker,
          label,
          `invocation died during it: ${happened ? 'effected' : 'no effect'}`,
        );
      },
    });
  };

  const handled = async (keys: readonly string[]): Promise<void> => {
    const finished = journal.recordHandlerStart(keys, scheduler.currentWorker, scheduler.now);
    await sideEffect(keys);
    finished();
  };
  const inbound =
    turns === undefined
      ? { onMessage: (context: MessageContext) => handled([context.key]) }
      : {
          onConversationTurn: (context: ConversationTurnContext) =>
            handled(context.messages.map((message) => message.key)),
          burstWindowMs: turns.burstWindowMs,
        };
  return defineWebhookHandlers({
    ...inbound,
    onStatus: async (context) => {
      const worker = scheduler.currentWorker;
      journal.recordStatusCall({
        key: context.key,
        worker,
        change: context.ledgerChange,
        current: context.ledger.current,
      });
      trace.add(
        scheduler.now,
        worker,
        `onStatus ${context.key}`,
        `${context.ledgerChange}, current ${context.ledger.current}`,
      );
      if (context.ledgerChange !== 'advanced') return;
      await sideEffect([context.key]);
    },
  });
}
