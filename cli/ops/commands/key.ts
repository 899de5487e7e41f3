/**
 * `key EVENT_KEY` and `keys --file BODY.json`: what the claim table holds for events, as the next delivery
 * of each would find it.
 */
import { keyedDigest } from 'whatsapp-webhook-dedup/functions/commons/log-digest';
import { EXIT_NOT_FOUND, UsageError } from '../errors.ts';
import { CLAIM_STATUS_TEXT, type ClaimStatus } from '../inspect/claim-view.ts';
import { type EventKeyShape, eventKeyShape } from '../inspect/event-key-shape.ts';
import { type KeyState, keyFound, lookUpKeys } from '../inspect/key-lookup.ts';
import { labelled } from '../output.ts';
import type { SubscriberTarget } from '../target/ops-target.ts';
import { originLimits, originText } from '../target/subscriber-selection.ts';
import type { CommandContext } from './command-context.ts';

/** What `key` answers for a key with neither a claim nor a ledger entry. */
export const NO_CLAIM_MEANING = 'never seen, or expired after the retention';

/**
 * NO_CLAIM_MEANING, and for a subscriber limited to numbers or wabas a key that does not say whose event it
 * is: maybe another number's, which it never claims.
 */
function noClaimMeaning(state: KeyState, subscriber: SubscriberTarget): string {
  if (state.receivesOrigin !== undefined) return NO_CLAIM_MEANING;
  return `${NO_CLAIM_MEANING}, or an event outside the subscriber's ${originLimits(subscriber)} (the key does not say whose it is)`;
}

/** Exits `EXIT_NOT_FOUND` (3) when the key has no claim: an answer, printed on stdout like any other. */
export async function keyCommand(context: CommandContext, key: string): Promise<number | undefined> {
  const shape = eventKeyShape(key);
  const subscriber = context.subscriber();
  const [state] = await lookUpKeys(context.target, subscriber, [shape], context.clock());
  if (state === undefined) throw new Error('lookUpKeys returned nothing for one key.');
  const nothing = !keyFound(state);
  // What the consumers' log lines carry for this key: an operator holding a key from a complaint greps for it.
  const digestKey = await context.target.logDigestKey?.();
  const loggedAs = digestKey === undefined ? undefined : keyedDigest(digestKey, key);
  if (nothing && !state.receivesField) {
    throw new UsageError(
      `subscriber ${subscriber.name} does not receive field ${state.field} (its fields: ${subscriber.fields?.join(', ')}), so it never claims ${key}`,
    );
  }
  if (nothing && state.receivesOrigin === false) {
    throw new UsageError(
      `subscriber ${subscriber.name} receives only the events of its ${originLimits(subscriber)}, and ${key} is of ${originText(state.origin)}, so it never claims it`,
    );
  }
  const meaning = noClaimMeaning(state, subscriber);
  const heading = labelled(
    [
      ['key', key],
      ['subscriber', `${subscriber.name} (table ${context.target.tableName}, ${context.target.description})`],
      ['stored as', state.pk],
      ['logged as', loggedAs],
    ],
    TOP,
  );
  if (nothing) {
    context.output.result(
      {
        found: false,
        key,
        loggedAs,
        subscriber: subscriber.name,
        tableName: context.target.tableName,
        pk: state.pk,
        field: state.field,
        meaning,
      },
      [...heading, ...labelled([['claim', `none: ${meaning}`]], TOP)],
    );
    return EXIT_NOT_FOUND;
  }
  context.output.result(
    {
      found: true,
      subscriber: subscriber.name,
      tableName: context.target.tableName,
      loggedAs,
      ...state,
    },
    [...heading, ...claimLines(state), ...ledgerLines(state)],
  );
  return undefined;
}

/** `shapes`: the body file's events, read with the arguments (`keys --file`), before the target. */
export async function keysCommand(context: CommandContext, shapes: readonly EventKeyShape[]): Promise<void> {
  const subscriber = context.subscriber();
  const states = await lookUpKeys(context.target, subscriber, shapes, context.clock());
  const counts = new Map<string, number>();
  for (const state of states) counts.set(summary(state), (counts.get(summary(state)) ?? 0) + 1);
  const width = Math.max(0, ...states.map((state) => summary(state).length));
  context.output.result(
    { subscriber: subscriber.name, tableName: context.target.tableName, events: states },
    [
      `subscriber ${subscriber.name} (table ${context.target.tableName}, ${context.target.description})`,
      ...states.map((state) => `${summary(state).padEnd(width)}  ${state.key}${detail(state, subscriber)}`),
      `${states.length} event${states.length === 1 ? '' : 's'}${[...counts].map(([what, count], index) => `${index === 0 ? ':' : ','} ${count} ${what}`).join('')}`,
    ],
  );
}

/** One label width for the top-level lines (`subscriber` is the longest). */
const TOP = { width: 'subscriber'.length };

const SHORT_STATUS: Readonly<Record<ClaimStatus, string>> = {
  done: 'done',
  'in-flight': 'in flight',
  'lease-lapsed': 'lease lapsed',
  expired: 'expired',
  'unknown-state': 'unknown state',
};

function summary(state: KeyState): string {
  if (state.claim !== undefined) return SHORT_STATUS[state.claim.status];
  return state.receivesField && state.receivesOrigin !== false ? 'no claim' : 'not received';
}

function detail(state: KeyState, subscriber: SubscriberTarget): string {
  const parts: string[] = [];
  const claim = state.claim;
  if (claim?.status === 'done') parts.push(`done ${claim.doneAt}`);
  if (claim?.status === 'in-flight') parts.push(`lease until ${claim.leaseUntil}`);
  if (claim?.attempt !== undefined && claim.attempt > 1) parts.push(`attempt ${claim.attempt}`);
  if (state.ledger?.current !== undefined) parts.push(`ledger: ${state.ledger.current}`);
  if (!state.receivesField) parts.push(`field ${state.field} not among the subscriber's fields`);
  else if (state.receivesOrigin === false) {
    parts.push(`${originText(state.origin)} outside the subscriber's ${originLimits(subscriber)}`);
  }
  return parts.length === 0 ? '' : `  (${parts.join(', ')})`;
}

function claimLines(state: KeyState): string[] {
  const claim = state.claim;
  if (claim === undefined) return labelled([['claim', 'none (the next delivery claims it as new)']], TOP);
  return [
    ...labelled([['claim', CLAIM_STATUS_TEXT[claim.status]]], TOP),
    ...labelled(
      [
        ['state', claim.state],
        ['attempts', claim.attempt],
        ['claimed', claim.claimedAt],
        ['lease end', claim.leaseUntil],
        ['done', claim.doneAt],
        ['expires', claim.expiresAt],
        ['held by message', claim.messageId],
      ],
      { indent: '  ' },
    ),
  ];
}

function ledgerLines(state: KeyState): string[] {
  const ledger = state.ledger;
  if (ledger === undefined) return [];
  if (ledger.current === undefined) return labelled([['ledger', `none (${ledger.pk})`]], TOP);
  return [
    ...labelled([['ledger', `${ledger.pk}: current ${ledger.current}`]], TOP),
    ...labelled(Object.entries(ledger.times), { indent: '  ' }),
  ];
}
