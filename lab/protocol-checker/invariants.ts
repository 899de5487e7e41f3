/**
 * The protocol's promises, checked on a quiescent schedule (every message deleted or dead-lettered, no
 * invocation running):
 *
 * 1. at least once: every event of every body the receiver acknowledged was effected, unless every queue
 *    message carrying it was dead-lettered (then it waits in the DLQ; such keys are counted apart, as
 *    exempt). For a status, whose handler acts only on `advanced`: it was handled, and effected when it
 *    advanced the ledger; and the highest status of each ledger (a message's, or a group send
 *    participant's) was effected (it is `advanced` whenever it comes). A body the consumer could not use is
 *    quarantined. A message is dead-lettered by SQS redrive only after the queue counted `maxReceiveCount`
 *    receives of it, each of them handed to an invocation. A message counts as dead-lettered too when its
 *    consumer moved a copy to the lane's DLQ and the DLQ stored it (invariant 5 says when it may).
 * 2. a second effect only from the effect→complete window: each effect of a key after its first is excused by
 *    one window that opened before it. A window is an effect made while its attempt held the claim (its
 *    owner, lease not lapsed), whose attempt then did not complete the claim: its invocation crashed or
 *    timed out before `complete` answered, or `complete` failed on a transient error past its retries. An
 *    effect whose `complete` was refused (the claim was lost), whose attempt never tried to complete it, or
 *    made without holding the claim, opens no window, whatever happened to its invocation afterwards.
 * 3. the status ledger: every status event's change (`advanced` or `merged`) is what an independent model
 *    says it is, from the order in which the statuses of its message (of its participant, in a group send)
 *    were first recorded (advanced when it ranks above every status recorded before it); no handler saw
 *    another; the ledger never moves a message backwards (every ledger write was watched), and ends at or
 *    above every status its handlers saw.
 * 4. the change a status handler sees is the same on every attempt of that key.
 * 5. a consumer's own dead-lettering: each entry it sends to its lane's DLQ copies a record its invocation
 *    received (FIFO ids: the record's group, its message id as deduplication id); one carrying a handler's
 *    `deadLetterReason` follows a `DeadLetter` with that reason, thrown in the same invocation on the record's
 *    events (on the ordered lane, its conversation's: a turn gives up on all its records) asking for no more
 *    receives than the record had; one without it, the lane's receive budget reached (the ordered lane's last
 *    receive). A send the consumer was answered `ok` leaves its records out of the invocation's
 *    `batchItemFailures` (SQS deletes them: nothing runs again from them); one that failed, as a whole or
 *    an entry, keeps every record of it in (they come back; a copy the DLQ stored meanwhile stays there); the
 *    invocation returns only once it was answered. With invariant 1 (a record deleted without a stored copy
 *    answers for nothing), an event a handler gave up on is effected or in the DLQ, never lost.
 */

import { rankOfStatus } from '../../functions/ledger/status-rank.ts';
import { isFifoMessage } from './fifo-queue.ts';
import type { AppliedWrite, EffectRecord, LaneDeadLetterSend, ProtocolJournal } from './protocol-journal.ts';
import type { QuarantinedMessage } from './sqs-link.ts';
import type { QueueMessage } from './standard-queue.ts';
import type { PlannedEvent, Workload } from './workload.ts';

export type InvariantName =
  | 'at-least-once'
  | 'dead-letter'
  | 'double-effect'
  | 'ledger-change'
  | 'ledger-backwards'
  | 'unstable-change'
  | 'conversation-order'
  | 'quiescence'
  | 'simulator';

export interface Violation {
  readonly invariant: InvariantName;
  readonly detail: string;
}

/**
 * Why an effect's attempt did not complete its claim. `crash`, `timeout` and `completion-failed` open the
 * effect→complete window; `claim-lost` (complete refused), `no-complete` (never tried) and `claim-not-held`
 * (the effect ran while its attempt did not hold the claim) do not.
 */
export type WindowCause =
  | 'crash'
  | 'timeout'
  | 'completion-failed'
  | 'claim-lost'
  | 'no-complete'
  | 'claim-not-held';

export const WINDOW_CAUSES: readonly WindowCause[] = [
  'crash',
  'timeout',
  'completion-failed',
  'claim-lost',
  'no-complete',
  'claim-not-held',
];

/** Causes that excuse a second effect (docs/consumer.md, "the effect→complete window"). */
export const EXCUSING_CAUSES: ReadonlySet<WindowCause> = new Set(['crash', 'timeout', 'completion-failed']);

export interface OpenWindow {
  readonly key: string;
  readonly worker: string;
  readonly cause: WindowCause;
  /** The effect's place in the journal's order. */
  readonly seq: number;
}

export interface DoubleEffect {
  readonly key: string;
  readonly effects: number;
  readonly windows: readonly OpenWindow[];
}

export interface InvariantReport {
  readonly violations: readonly Violation[];
  /** Effects that did not end in their attempt's completion, with why. */
  readonly windows: readonly OpenWindow[];
  readonly doubleEffects: readonly DoubleEffect[];
  /** Acknowledged events checked by invariant 1. */
  readonly eventsChecked: number;
  /** Acknowledged events not checked, as the DLQ holds them (see `exemptKeys`). */
  readonly eventsExempt: number;
  /** Of those, the events a deleted message handed to a dead-lettered holder of their claim. */
  readonly eventsHandedOff: number;
}

export interface InvariantInput {
  readonly workload: Workload;
  readonly journal: ProtocolJournal;
  readonly messages: readonly QueueMessage[];
  readonly quarantined: readonly QuarantinedMessage[];
  /** Ledger partition key → current rank at the end. */
  readonly finalLedgerRanks: ReadonlyMap<string, number>;
  /** The redrive policy of the message's queue (one number: every message's). */
  readonly maxReceiveCount: number | ((message: QueueMessage) => number);
  /**
   * The receive from which a lane's consumer moves a failing record to the DLQ without a handler giving up on
   * it (invariant 5). @default - never
   */
  readonly consumerMaxReceives?: (lane: LaneDeadLetterSend['lane']) => number;
}

export function checkInvariants(input: InvariantInput): InvariantReport {
  const violations: Violation[] = [];
  const effects = countBy(input.journal.effects.map((effect) => effect.key));
  const { exempt, handedOff } = exemptKeys(input);
  const expectedChanges = expectedLedgerChanges(input.journal, input.workload);
  const counts = checkAtLeastOnce(input, effects, exempt, expectedChanges, violations);
  checkQuarantine(input, violations);
  checkDeadLetters(input, violations);
  checkConsumerDeadLetters(input, violations);
  const windows = openWindows(input.journal);
  const doubleEffects = checkDoubleEffects(input.journal.effects, windows, violations);
  checkLedgerChanges(input.journal, input.workload, violations);
  checkLedger(input, violations);
  checkStableChange(input.journal, violations);
  return { violations, windows, doubleEffects, ...counts, eventsHandedOff: handedOff.size };
}

function checkAtLeastOnce(
  input: InvariantInput,
  effects: ReadonlyMap<string, number>,
  exempt: ReadonlySet<string>,
  expectedChanges: ReadonlyMap<string, LedgerChange>,
  violations: Violation[],
): { eventsChecked: number; eventsExempt: number } {
  const acknowledged = new Set(input.workload.bodies.flatMap((body) => body.keys));
  const calls = groupBy(input.journal.statusCalls, (call) => call.key);
  let eventsExempt = 0;
  for (const key of acknowledged) {
    if (exempt.has(key)) {
      eventsExempt++;
      continue;
    }
    const event = input.workload.events.get(key) as PlannedEvent;
    const effected = (effects.get(key) ?? 0) > 0;
    if (event.kind === 'message') {
      if (!effected) violations.push({ invariant: 'at-least-once', detail: `${key} was never effected` });
      continue;
    }
    const expected = expectedChanges.get(key);
    if (calls.get(key) === undefined || expected === undefined) {
      violations.push({ invariant: 'at-least-once', detail: `${key}: onStatus was never called` });
    } else if (expected.change === 'advanced' && !effected) {
      violations.push({
        invariant: 'at-least-once',
        detail: `${key}: it advanced the ledger, but it was never effected`,
      });
    }
  }
  for (const [ledger, statuses] of input.workload.outbound) {
    const { key } = statuses.reduce((top, event) =>
      rankOfStatus(event.status) > rankOfStatus(top.status) ? event : top,
    );
    if (!exempt.has(key) && (effects.get(key) ?? 0) === 0) {
      violations.push({
        invariant: 'at-least-once',
        detail: `${key}: the highest status of ${ledger} advances whenever it comes, but was never effected`,
      });
    }
  }
  return { eventsChecked: acknowledged.size - eventsExempt, eventsExempt };
}

function checkQuarantine(input: InvariantInput, violations: Violation[]): void {
  const unusable = new Set(
    input.workload.bodies.filter((body) => body.origin === 'unusable').map((body) => body.bodyId),
  );
  const quarantinedIds = new Set(input.quarantined.map((message) => message.deliveryId));
  for (const message of input.messages) {
    if (
      unusable.has(message.bodyId) &&
      message.state === 'deleted' &&
      !quarantinedIds.has(message.messageId)
    ) {
      violations.push({
        invariant: 'at-least-once',
        detail: `${message.messageId} (unusable body) was deleted without being quarantined`,
      });
    }
  }
}

/**
 * Redriven only once the queue counted `maxReceiveCount` receives, each handed to an invocation. (A consumer's
 * own moves are checked by {@link checkConsumerDeadLetters}.)
 */
function checkDeadLetters(input: InvariantInput, violations: Violation[]): void {
  const receipts = countBy(input.journal.receipts.map((receipt) => receipt.messageId));
  for (const message of input.messages) {
    if (message.state !== 'dead-letter' || message.deadLetteredBy === 'consumer') continue;
    const handed = receipts.get(message.messageId) ?? 0;
    const maxReceiveCount =
      typeof input.maxReceiveCount === 'number' ? input.maxReceiveCount : input.maxReceiveCount(message);
    if (message.receiveCount < maxReceiveCount) {
      violations.push({
        invariant: 'dead-letter',
        detail: `${message.messageId} was dead-lettered after ${message.receiveCount} receives, below maxReceiveCount ${maxReceiveCount}`,
      });
    } else if (handed !== message.receiveCount) {
      violations.push({
        invariant: 'dead-letter',
        detail: `${message.messageId} was dead-lettered at receive count ${message.receiveCount}, but invocations got it ${handed} times`,
      });
    }
  }
}

/** Invariant 5: every record a consumer sent to its lane's DLQ, see the header. */
function checkConsumerDeadLetters(input: InvariantInput, violations: Violation[]): void {
  const { journal } = input;
  const keysOf = new Map(input.workload.bodies.map((body) => [body.bodyId, body.keys]));
  const byId = new Map(input.messages.map((message) => [message.messageId, message]));
  const receipts = groupBy(journal.receipts, (receipt) => `${receipt.invocation} ${receipt.messageId}`);
  const thrownBy = groupBy(journal.deadLetterThrows, (thrown) => thrown.worker);
  // The keys a handler may have given up on for `message`: its own, and on the ordered lane its conversation's.
  const givenUpKeys = (message: QueueMessage): Set<string> => {
    const related = isFifoMessage(message)
      ? input.messages.filter((other) => isFifoMessage(other) && other.groupId === message.groupId)
      : [message];
    return new Set(related.flatMap((other) => keysOf.get(other.bodyId) ?? []));
  };
  const movedOk = new Set(
    journal.laneDeadLetterSends
      .filter((send) => send.answer === 'ok')
      .flatMap((send) => send.entries.map((entry) => `${send.worker} ${entry.messageId}`)),
  );
  const fail = (detail: string) => violations.push({ invariant: 'dead-letter', detail });
  for (const send of journal.laneDeadLetterSends) {
    const dlq = `the ${send.lane} lane's DLQ`;
    const returned = journal.fates.get(send.worker) === 'returned';
    if (returned && send.answer === undefined) {
      fail(`${send.worker} returned before its send to ${dlq} was answered`);
    }
    const reportedFailed = new Set(journal.batchItemFailures.get(send.worker) ?? []);
    for (const entry of send.entries) {
      const message = entry.messageId === undefined ? undefined : byId.get(entry.messageId);
      if (message === undefined) {
        fail(`${send.worker} sent ${dlq} a copy of no queue message (its deliveryId attribute was not kept)`);
        continue;
      }
      const id = message.messageId;
      const receiveCount = receipts.get(`${send.worker} ${id}`)?.[0]?.receiveCount;
      if (receiveCount === undefined) {
        fail(`${send.worker} sent ${id} to ${dlq} without having received it`);
        continue;
      }
      if (isFifoMessage(message) && (entry.groupId !== message.groupId || entry.deduplicationId !== id)) {
        fail(
          `${send.worker} sent ${id} to ${dlq} with group ${entry.groupId} and deduplication id ${entry.deduplicationId}, not its group ${message.groupId} and its message id`,
        );
      }
      if (entry.reason === undefined) {
        const budget = input.consumerMaxReceives?.(send.lane) ?? Number.POSITIVE_INFINITY;
        if (receiveCount < budget) {
          fail(
            `${send.worker} moved ${id} to ${dlq} on receive ${receiveCount}, before the lane's budget of ${budget}, and no handler gave up on it`,
          );
        }
      } else {
        const keys = givenUpKeys(message);
        const givenUp = (thrownBy.get(send.worker) ?? []).some(
          (thrown) =>
            thrown.seq < send.seq &&
            thrown.reason === entry.reason &&
            thrown.afterReceives <= receiveCount &&
            thrown.keys.some((key) => keys.has(key)),
        );
        if (!givenUp) {
          fail(
            `${send.worker} moved ${id} to ${dlq} on receive ${receiveCount} (${entry.reason}), but no handler of that invocation gave up on it with afterReceives ≤ ${receiveCount}`,
          );
        }
      }
      if (!returned) continue;
      if (send.answer === 'ok' && reportedFailed.has(id)) {
        fail(`${send.worker} moved ${id} to ${dlq}, then reported it failed: it comes back`);
      } else if (
        send.answer === 'failed' &&
        !reportedFailed.has(id) &&
        !movedOk.has(`${send.worker} ${id}`)
      ) {
        fail(
          `${send.worker}'s send of ${id} to ${dlq} failed${entry.landed ? '' : ' (not stored)'}, yet it reported the record handled: SQS deletes it`,
        );
      }
    }
  }
}

/**
 * Every effect that did not end in its attempt's completion, and why. An attempt is one invocation working
 * on one key; whether it held the claim at its effect is read from the claim item as the writes before the
 * effect left it; the cause from what its `complete` was answered after the effect, then from how its
 * invocation ended.
 */
function openWindows(journal: ProtocolJournal): OpenWindow[] {
  const ownerWorker = new Map<string, string>();
  const timelines = new Map<string, { seq: number; claim: AppliedWrite['claim'] }[]>();
  const timeline = (pk: string) => {
    const entries = timelines.get(pk) ?? [];
    timelines.set(pk, entries);
    return entries;
  };
  for (const write of journal.writes) {
    if (!write.succeeded || write.operation === 'ledger') continue;
    if (write.operation === 'claim' && write.claim !== undefined)
      ownerWorker.set(write.claim.owner, write.worker);
    timeline(write.pk).push({ seq: write.seq, claim: write.claim });
  }
  for (const deletion of journal.ttlDeletions)
    timeline(deletion.pk).push({ seq: deletion.seq, claim: undefined });
  for (const entries of timelines.values()) entries.sort((a, b) => a.seq - b.seq);

  const heldAtEffect = (effect: EffectRecord): boolean => {
    const before = (timelines.get(effect.key) ?? []).filter((entry) => entry.seq < effect.seq);
    const claim = before.at(-1)?.claim;
    return (
      claim !== undefined &&
      claim.state === 'processing' &&
      ownerWorker.get(claim.owner) === effect.worker &&
      (claim.leaseUntil === undefined || effect.at <= claim.leaseUntil)
    );
  };
  const windows: OpenWindow[] = [];
  for (const effect of journal.effects) {
    const ofAttempt = <T extends { worker: string; pk: string; operation: string; seq: number }>(
      records: readonly T[],
    ) =>
      records.filter(
        (record) =>
          record.worker === effect.worker &&
          record.pk === effect.key &&
          record.operation === 'complete' &&
          record.seq > effect.seq,
      );
    if (ofAttempt(journal.writes).some((write) => write.succeeded)) continue;
    const window = (cause: WindowCause) =>
      windows.push({ key: effect.key, worker: effect.worker, cause, seq: effect.seq });
    if (!heldAtEffect(effect)) {
      window('claim-not-held');
      continue;
    }
    const answers = ofAttempt(journal.answers).map((answer) => answer.answer);
    const fate = journal.fates.get(effect.worker);
    const died = fate === 'crash' || fate === 'timeout' ? fate : undefined;
    if (answers.includes('ConditionalCheckFailedException')) window('claim-lost');
    else if (died !== undefined) window(died);
    else window(answers.length > 0 ? 'completion-failed' : 'no-complete');
  }
  return windows;
}

/** Each effect after a key's first needs an excusing window that opened before it; each window excuses one. */
function checkDoubleEffects(
  effects: readonly EffectRecord[],
  windows: readonly OpenWindow[],
  violations: Violation[],
): DoubleEffect[] {
  const windowAt = new Map(windows.map((window) => [window.seq, window]));
  const doubles: DoubleEffect[] = [];
  for (const [key, keyEffects] of groupBy(effects, (effect) => effect.key)) {
    if (keyEffects.length < 2) continue;
    const keyWindows = keyEffects.flatMap((effect) => windowAt.get(effect.seq) ?? []);
    doubles.push({ key, effects: keyEffects.length, windows: keyWindows });
    let open = 0;
    let unexcused = 0;
    for (const [index, effect] of keyEffects.entries()) {
      if (index > 0) {
        if (open > 0) open--;
        else unexcused++;
      }
      const window = windowAt.get(effect.seq);
      if (window !== undefined && EXCUSING_CAUSES.has(window.cause)) open++;
    }
    if (unexcused > 0) {
      const story = keyEffects
        .map((effect) => `${effect.worker}@${effect.at}:${windowAt.get(effect.seq)?.cause ?? 'completed'}`)
        .join(', ');
      violations.push({
        invariant: 'double-effect',
        detail: `${key} effected ${keyEffects.length} times, ${unexcused} without a window open before it (effects: ${story})`,
      });
    }
  }
  return doubles;
}

export interface LedgerChange {
  readonly change: 'advanced' | 'merged';
  readonly seq: number;
}

/**
 * The model of the ledger: a status advances when it ranks above every status of its message (of its
 * participant, for a group send) recorded before it (in the item's current life: TTL deleting the item starts
 * afresh), else it is merged. Keyed by the status event's key, found in the workload by the ledger item and
 * the status (a recording the workload has no event for keeps the item's key); several entries when the
 * status was recorded in several lives, in order.
 */
function expectedLedgerChangeHistory(
  journal: ProtocolJournal,
  workload: Workload,
): Map<string, LedgerChange[]> {
  const keyOf = new Map(
    [...workload.outbound.values()].flat().map((event) => [`${event.ledger} ${event.status}`, event.key]),
  );
  const highest = new Map<string, number>();
  const history = new Map<string, LedgerChange[]>();
  for (const recording of journal.ledgerRecordings) {
    const life = `${recording.pk} ${recording.life}`;
    const rank = rankOfStatus(recording.status);
    const change = rank > (highest.get(life) ?? Number.NEGATIVE_INFINITY) ? 'advanced' : 'merged';
    highest.set(life, Math.max(rank, highest.get(life) ?? Number.NEGATIVE_INFINITY));
    const key = keyOf.get(`${recording.pk} ${recording.status}`) ?? `${recording.pk} ${recording.status}`;
    const entries = history.get(key);
    if (entries === undefined) history.set(key, [{ change, seq: recording.seq }]);
    else entries.push({ change, seq: recording.seq });
  }
  return history;
}

/** The first expected change of each status event. */
function expectedLedgerChanges(journal: ProtocolJournal, workload: Workload): Map<string, LedgerChange> {
  return new Map(
    [...expectedLedgerChangeHistory(journal, workload)].map(([key, entries]) => [
      key,
      entries[0] as LedgerChange,
    ]),
  );
}

/** Every handler call saw the change the model expects of its status at that point. */
function checkLedgerChanges(journal: ProtocolJournal, workload: Workload, violations: Violation[]): void {
  const history = expectedLedgerChangeHistory(journal, workload);
  for (const call of journal.statusCalls) {
    const expected = (history.get(call.key) ?? []).filter((entry) => entry.seq < call.seq).at(-1);
    if (expected === undefined) {
      violations.push({
        invariant: 'ledger-change',
        detail: `${call.key}: ${call.worker}'s handler saw ${call.change}, but the ledger never recorded the status`,
      });
    } else if (call.change !== expected.change) {
      violations.push({
        invariant: 'ledger-change',
        detail: `${call.key}: ${call.worker}'s handler saw ${call.change}; from the order its message's statuses were first recorded, it ${expected.change}`,
      });
    }
  }
}

function checkLedger(input: InvariantInput, violations: Violation[]): void {
  for (const move of input.journal.backwardMoves) {
    violations.push({
      invariant: 'ledger-backwards',
      detail: `${move.pk} moved from rank ${move.from} back to ${move.to}`,
    });
  }
  // An item TTL deleted (its retention over) answers only for the statuses recorded after.
  const deletedAt = new Map(input.journal.ttlDeletions.map((deletion) => [deletion.pk, deletion.seq]));
  for (const call of input.journal.statusCalls) {
    const event = input.workload.events.get(call.key);
    if (event?.kind !== 'status') {
      violations.push({
        invariant: 'simulator',
        detail: `onStatus got ${call.key}, no status of the workload`,
      });
      continue;
    }
    if (call.seq < (deletedAt.get(event.ledger) ?? 0)) continue;
    const rank = input.finalLedgerRanks.get(event.ledger);
    const seen = rankOfStatus(event.status);
    if (rank === undefined || rank < seen) {
      violations.push({
        invariant: 'ledger-backwards',
        detail: `${event.ledger} ends at rank ${rank ?? 'none'}, below ${call.key} that a handler saw`,
      });
    }
  }
}

function checkStableChange(journal: ProtocolJournal, violations: Violation[]): void {
  for (const [key, calls] of groupBy(journal.statusCalls, (call) => call.key)) {
    const changes = [...new Set(calls.map((call) => call.change))];
    if (changes.length > 1) {
      violations.push({
        invariant: 'unstable-change',
        detail: `${key}: handlers saw ${calls.map((call) => `${call.change} (${call.worker})`).join(', ')}`,
      });
    }
  }
}

/**
 * Keys the DLQ answers for: every queue message carrying them was dead-lettered, or each message carrying
 * them that was deleted was acknowledged on a claim held for another message's record — found in flight
 * (another message's record carries the retry, docs/consumer.md) or claimed by the same batch for another
 * record carrying the key too — and that holder message was dead-lettered, or deleted having handed the key
 * on the same way. A message deleted after
 * processing in any other way makes the key checked.
 */
function exemptKeys(input: InvariantInput): { exempt: Set<string>; handedOff: Set<string> } {
  const keysOf = new Map(input.workload.bodies.map((body) => [body.bodyId, body.keys]));
  const carriers = new Map<string, QueueMessage[]>();
  for (const message of input.messages) {
    for (const key of new Set(keysOf.get(message.bodyId) ?? [])) {
      const messages = carriers.get(key);
      if (messages === undefined) carriers.set(key, [message]);
      else messages.push(message);
    }
  }
  const receivedBy = groupBy(input.journal.receipts, (receipt) => receipt.messageId);
  const claimWrites = groupBy(
    input.journal.writes.filter((write) => write.operation === 'claim'),
    (write) => `${write.worker} ${write.pk}`,
  );
  const byId = new Map(input.messages.map((message) => [message.messageId, message]));
  // The claim as the invocation's claim write found or left it: held for which message's record. That holder
  // was dead-lettered, or was deleted having handed the key on in turn (a chain of hand-offs).
  const handedToDeadLetter = (key: string, message: QueueMessage, seen: ReadonlySet<string>): boolean =>
    (receivedBy.get(message.messageId) ?? []).some((receipt) =>
      (claimWrites.get(`${receipt.invocation} ${key}`) ?? []).some((write) => {
        const holder =
          write.claim?.state === 'processing' ? byId.get(write.claim.messageId ?? '') : undefined;
        if (holder === undefined || holder.messageId === message.messageId || seen.has(holder.messageId))
          return false;
        return (
          holder.state === 'dead-letter' ||
          handedToDeadLetter(key, holder, new Set([...seen, message.messageId]))
        );
      }),
    );
  const exempt = new Set<string>();
  const handedOff = new Set<string>();
  for (const [key, messages] of carriers) {
    const deleted = messages.filter((message) => message.state !== 'dead-letter');
    if (deleted.length === messages.length) continue;
    if (deleted.length === 0) exempt.add(key);
    else if (deleted.every((message) => handedToDeadLetter(key, message, new Set()))) {
      exempt.add(key);
      handedOff.add(key);
    }
  }
  return { exempt, handedOff };
}

function countBy(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [item]);
    else group.push(item);
  }
  return groups;
}
