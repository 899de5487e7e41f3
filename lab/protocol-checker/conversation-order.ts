/**
 * Per-conversation order (DESIGN §8), checked on a quiescent schedule from the journal's message handler
 * calls: a message's handler starts only after the handler of every message of its conversation accepted
 * before it has returned, unless that earlier message went to the DLQ first. A message's conversation is the
 * product's rule over the ids Meta sent (`conversations`: the workload's, by `conversationCustomer` and
 * `conversationId`), not the FIFO group the receiver under test put it in: a customer whose phone number came
 * with one message and not with the next is one conversation, whichever groups their parts went to.
 * Accepted order is the order in which the receiver stored the conversation's parts in the message lane's
 * queue (a key's first part counts; a part the queue absorbed as a duplicate adds nothing). In one
 * `onConversationTurn` call, the messages must come in that order, and they count as started together.
 *
 * Turns (bursts): a turn whose handler returned in an invocation that went on has every one of its claims
 * completed by that invocation (a turn's claims are completed together); one whose handler threw completed
 * none of them.
 */
import type { FifoMessage } from './fifo-queue.ts';
import type { Violation } from './invariants.ts';
import type { HandlerCall, ProtocolJournal } from './protocol-journal.ts';

export interface ConversationOrderInput {
  readonly journal: ProtocolJournal;
  /** The message lane's queue messages, in the order they were stored. */
  readonly messages: readonly FifoMessage[];
  /** The keys each stored body carries, by bodyId. */
  readonly keysOf: ReadonlyMap<string, readonly string[]>;
  /** Each inbound message's conversation by the product's rule, by its key. */
  readonly conversations: ReadonlyMap<string, string>;
}

export interface ConversationOrderReport {
  readonly violations: readonly Violation[];
  /** Handler calls checked against an earlier accepted message of their conversation (a pair per message). */
  readonly pairsChecked: number;
  /** Turn handler calls of several messages whose claims were checked. */
  readonly turnsChecked: number;
}

export function checkConversationOrder(input: ConversationOrderInput): ConversationOrderReport {
  const violations: Violation[] = [];
  let pairsChecked = 0;
  const accepted = new Map<string, string[]>();
  const deadLetteredAt = new Map<string, number>();
  for (const message of input.messages) {
    for (const key of input.keysOf.get(message.bodyId) ?? []) {
      const conversation = input.conversations.get(key);
      if (conversation === undefined) {
        violations.push({
          invariant: 'simulator',
          detail: `${key} reached the message lane with no conversation`,
        });
        continue;
      }
      const keys = accepted.get(conversation) ?? [];
      accepted.set(conversation, keys);
      if (!keys.includes(key)) keys.push(key);
      if (message.state === 'dead-letter' && message.deadLetteredAt !== undefined) {
        deadLetteredAt.set(key, Math.min(message.deadLetteredAt, deadLetteredAt.get(key) ?? Infinity));
      }
    }
  }
  const callsOf = new Map<string, HandlerCall[]>();
  for (const call of input.journal.handlerCalls) {
    for (const key of call.keys) {
      const calls = callsOf.get(key);
      if (calls === undefined) callsOf.set(key, [call]);
      else calls.push(call);
    }
  }
  const finished = (key: string, beforeSeq: number) =>
    (callsOf.get(key) ?? []).some((call) => call.finishSeq !== undefined && call.finishSeq < beforeSeq);

  for (const [conversation, keys] of accepted) {
    for (const [index, key] of keys.entries()) {
      for (const call of callsOf.get(key) ?? []) {
        for (const earlier of keys.slice(0, index)) {
          // Its message went to the DLQ: the conversation moved on, and a later copy of it may come anywhere.
          const dead = deadLetteredAt.get(earlier);
          if (dead !== undefined && dead <= call.startedAt) continue;
          pairsChecked++;
          if (finished(earlier, call.startSeq)) continue;
          const inCall = call.keys.indexOf(earlier);
          if (inCall >= 0) {
            if (inCall > call.keys.indexOf(key)) {
              violations.push({
                invariant: 'conversation-order',
                detail: `${conversation}: call ${call.call} (${call.worker}) handed ${key} before ${earlier}, accepted before it`,
              });
            }
            continue;
          }
          violations.push({
            invariant: 'conversation-order',
            detail: `${conversation}: ${key}'s handler started (call ${call.call}, ${call.worker} at ${call.startedAt}) before the handler of ${earlier}, accepted before it, had returned, and ${earlier} was not dead-lettered`,
          });
        }
      }
    }
  }
  const turnsChecked = checkTurnsCompletedTogether(input.journal, violations);
  return { violations, pairsChecked, turnsChecked };
}

function checkTurnsCompletedTogether(journal: ProtocolJournal, violations: Violation[]): number {
  let checked = 0;
  for (const call of journal.handlerCalls) {
    if (call.keys.length < 2) continue;
    const fate = journal.fates.get(call.worker);
    if (fate !== 'returned' && fate !== 'threw') continue;
    checked++;
    const after = call.finishSeq ?? call.startSeq;
    const completed = call.keys.filter((key) =>
      journal.answers.some(
        (answer) =>
          answer.worker === call.worker &&
          answer.pk === key &&
          answer.operation === 'complete' &&
          answer.seq > after,
      ),
    );
    const expected = call.finishSeq === undefined ? [] : call.keys;
    if (completed.length !== expected.length) {
      violations.push({
        invariant: 'conversation-order',
        detail: `turn call ${call.call} (${call.worker}) of ${call.keys.join(' ')} ${call.finishSeq === undefined ? 'threw' : 'returned'}, and completed ${completed.length === 0 ? 'none' : completed.join(' ')} of its claims`,
      });
    }
  }
  return checked;
}
