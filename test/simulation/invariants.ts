/**
 * The protocol's promises, checked on a quiescent schedule (every message deleted or dead-lettered, no
 * invocation running):
 *
 * 1. at least once: every event of every body the receiver acknowledged was effected, or a message carrying
 *    it is in the dead-letter queue; for a status, whose handler acts only on `advanced`: it was handled,
 *    and effected when its first handler call saw `advanced`, and the highest status of each message was
 *    effected (it is `advanced` whenever it comes). A body the consumer could not use is quarantined.
 * 2. a second effect only from the effect→complete window: effects(k) ≤ 1 + windows(k), where a window is an
 *    effect whose attempt did not complete the claim because its invocation crashed or timed out, or because
 *    `complete` failed on a transient error past its retries. An effect whose attempt lost its claim, or
 *    never tried to complete it, opens no window.
 * 3. the status ledger never moves a message backwards (every ledger write was watched), and ends at or
 *    above every status its handlers saw.
 * 4. the change a status handler sees is the same on every attempt of that key.
 */

import { rankOfStatus } from '../../functions/ledger/status-rank.ts';
import type { ProtocolJournal } from './protocol-journal.ts';
import type { QuarantinedMessage } from './sqs-link.ts';
import type { QueueMessage } from './standard-queue.ts';
import type { PlannedEvent, Workload } from './workload.ts';

export type InvariantName =
  | 'at-least-once'
  | 'double-effect'
  | 'ledger-backwards'
  | 'unstable-change'
  | 'quiescence'
  | 'simulator';

export interface Violation {
  readonly invariant: InvariantName;
  readonly detail: string;
}

export type WindowCause = 'crash' | 'timeout' | 'completion-failed' | 'claim-lost' | 'no-complete';

/** Causes that excuse a second effect (docs/consumer.md, "the effect→complete window"). */
export const EXCUSING_CAUSES: ReadonlySet<WindowCause> = new Set(['crash', 'timeout', 'completion-failed']);

export interface OpenWindow {
  readonly key: string;
  readonly worker: string;
  readonly cause: WindowCause;
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
  /** Events checked by invariant 1 (for the tests' counts). */
  readonly eventsChecked: number;
}

export interface InvariantInput {
  readonly workload: Workload;
  readonly journal: ProtocolJournal;
  readonly messages: readonly QueueMessage[];
  readonly quarantined: readonly QuarantinedMessage[];
  /** Ledger partition key → current rank at the end. */
  readonly finalLedgerRanks: ReadonlyMap<string, number>;
}

export function checkInvariants(input: InvariantInput): InvariantReport {
  const violations: Violation[] = [];
  const effects = countBy(input.journal.effects.map((effect) => effect.key));
  const deadLettered = deadLetteredKeys(input);
  const eventsChecked = checkAtLeastOnce(input, effects, deadLettered, violations);
  checkQuarantine(input, violations);
  const windows = openWindows(input.journal);
  const doubleEffects = checkDoubleEffects(effects, windows, violations);
  checkLedger(input, violations);
  checkStableChange(input.journal, violations);
  return { violations, windows, doubleEffects, eventsChecked };
}

function checkAtLeastOnce(
  input: InvariantInput,
  effects: ReadonlyMap<string, number>,
  deadLettered: ReadonlySet<string>,
  violations: Violation[],
): number {
  const acknowledged = new Set(input.workload.bodies.flatMap((body) => body.keys));
  const calls = groupBy(input.journal.statusCalls, (call) => call.key);
  for (const key of acknowledged) {
    if (deadLettered.has(key)) continue;
    const event = input.workload.events.get(key) as PlannedEvent;
    const effected = (effects.get(key) ?? 0) > 0;
    if (event.kind === 'message') {
      if (!effected) violations.push({ invariant: 'at-least-once', detail: `${key} was never effected` });
      continue;
    }
    const first = calls.get(key)?.[0];
    if (first === undefined) {
      violations.push({ invariant: 'at-least-once', detail: `${key}: onStatus was never called` });
    } else if (first.change === 'advanced' && !effected) {
      violations.push({
        invariant: 'at-least-once',
        detail: `${key}: its first handler call saw advanced, but it was never effected`,
      });
    }
  }
  for (const [wamid, statuses] of input.workload.outbound) {
    const highest = statuses.reduce((top, status) =>
      rankOfStatus(status) > rankOfStatus(top) ? status : top,
    );
    const key = `st:${wamid}:${highest}`;
    if (!deadLettered.has(key) && (effects.get(key) ?? 0) === 0) {
      violations.push({
        invariant: 'at-least-once',
        detail: `${key}: the highest status of ${wamid} advances whenever it comes, but was never effected`,
      });
    }
  }
  return acknowledged.size;
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

/** Effects whose attempt (invocation, key) did not complete the claim, and why. */
function openWindows(journal: ProtocolJournal): OpenWindow[] {
  const completed = new Set(
    journal.writes
      .filter((write) => write.operation === 'complete' && write.succeeded)
      .map((write) => `${write.worker} ${write.pk}`),
  );
  const lastCompleteAnswer = new Map<string, string>();
  for (const answer of journal.answers) {
    if (answer.operation === 'complete')
      lastCompleteAnswer.set(`${answer.worker} ${answer.pk}`, answer.answer);
  }
  const windows: OpenWindow[] = [];
  for (const effect of journal.effects) {
    const attempt = `${effect.worker} ${effect.key}`;
    if (completed.has(attempt)) continue;
    const fate = journal.fates.get(effect.worker);
    const answer = lastCompleteAnswer.get(attempt);
    let cause: WindowCause;
    if (fate === 'crash' || fate === 'timeout') cause = fate;
    else if (answer === undefined) cause = 'no-complete';
    else if (answer === 'ConditionalCheckFailedException') cause = 'claim-lost';
    else cause = 'completion-failed';
    windows.push({ key: effect.key, worker: effect.worker, cause });
  }
  return windows;
}

function checkDoubleEffects(
  effects: ReadonlyMap<string, number>,
  windows: readonly OpenWindow[],
  violations: Violation[],
): DoubleEffect[] {
  const windowsByKey = groupBy(windows, (window) => window.key);
  const doubles: DoubleEffect[] = [];
  for (const [key, count] of effects) {
    if (count < 2) continue;
    const keyWindows = windowsByKey.get(key) ?? [];
    doubles.push({ key, effects: count, windows: keyWindows });
    const excused = keyWindows.filter((window) => EXCUSING_CAUSES.has(window.cause)).length;
    if (count > 1 + excused) {
      const causes = keyWindows.map((window) => `${window.worker}:${window.cause}`).join(', ') || 'none';
      violations.push({
        invariant: 'double-effect',
        detail: `${key} effected ${count} times with ${excused} excusing window(s) (windows: ${causes})`,
      });
    }
  }
  return doubles;
}

function checkLedger(input: InvariantInput, violations: Violation[]): void {
  for (const move of input.journal.backwardMoves) {
    violations.push({
      invariant: 'ledger-backwards',
      detail: `${move.pk} moved from rank ${move.from} back to ${move.to}`,
    });
  }
  for (const call of input.journal.statusCalls) {
    const wamid = call.key.split(':')[1] as string;
    const rank = input.finalLedgerRanks.get(`ledger:${wamid}`);
    const seen = rankOfStatus(call.key.split(':')[2] as string);
    if (rank === undefined || rank < seen) {
      violations.push({
        invariant: 'ledger-backwards',
        detail: `ledger:${wamid} ends at rank ${rank ?? 'none'}, below ${call.key} that a handler saw`,
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

function deadLetteredKeys(input: InvariantInput): Set<string> {
  const keysOf = new Map(input.workload.bodies.map((body) => [body.bodyId, body.keys]));
  return new Set(
    input.messages
      .filter((message) => message.state === 'dead-letter')
      .flatMap((message) => keysOf.get(message.bodyId) ?? []),
  );
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
