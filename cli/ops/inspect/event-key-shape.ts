/**
 * What an event key says about itself (docs/design.md §1): the webhook field it belongs to, its kind, and for
 * a status (`st:<wamid>:<status>[:<recipient_participant_id>]`) the status ledger entry beside its claim.
 * The prefixes come from the key recipes themselves (`field-rules.ts`), so a key the consumer can write is
 * never refused here. Pure.
 */
import { KNOWN_FIELDS } from 'whatsapp-webhook-dedup/functions/events/extract-events';
import { recipesFor } from 'whatsapp-webhook-dedup/functions/events/field-rules';
import type { EventKind } from 'whatsapp-webhook-dedup/functions/events/types';
import { UsageError } from '../errors.ts';

export interface EventKeyShape {
  readonly key: string;
  /** The webhook field whose events have this prefix (`messages` for `msg:`, `st:`, `err:`). */
  readonly field: string;
  readonly kind: EventKind;
  /** For a status key: the ledger entry it updates. */
  readonly ledger?: { readonly wamid: string; readonly recipientParticipantId: string | undefined };
}

const PREFIXES: ReadonlyMap<string, { field: string; kind: EventKind }> = new Map(
  KNOWN_FIELDS.flatMap((field) =>
    (recipesFor(field) ?? []).map((recipe) => [recipe.keyPrefix, { field, kind: recipe.kind }] as const),
  ),
);

/** The key's shape, or a `UsageError` naming what a key looks like. */
export function eventKeyShape(key: string): EventKeyShape {
  const separator = key.indexOf(':');
  const prefix = separator < 0 ? key : key.slice(0, separator);
  const known = PREFIXES.get(prefix);
  if (known === undefined || separator < 0 || separator === key.length - 1) {
    throw new UsageError(
      `unknown event key "${truncate(key)}": keys look like msg:<wamid>, st:<wamid>:<status> or <field>:<entry id>:… (npm run keys -- BODY.json prints a body's keys)`,
    );
  }
  if (known.kind !== 'status') return { key, ...known };
  const [wamid = '', status = '', ...participant] = key.slice(separator + 1).split(':');
  if (wamid === '' || status === '') {
    throw new UsageError(`status key "${truncate(key)}" must look like st:<wamid>:<status>`);
  }
  return {
    key,
    ...known,
    ledger: {
      wamid,
      recipientParticipantId: participant.length === 0 ? undefined : participant.join(':'),
    },
  };
}

function truncate(text: string): string {
  return text.length <= 80 ? text : `${text.slice(0, 77)}…`;
}
