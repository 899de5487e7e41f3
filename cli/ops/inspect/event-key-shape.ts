/**
 * What an event key says about itself (docs/design.md §1): the webhook field it belongs to, its kind, what it
 * names of the event's origin (the WABA of its entry, for `err:` the phone number too), and for a status
 * (`st:<wamid>:<status>[:<recipient_participant_id>]`) the status ledger entry beside its claim. The prefixes
 * and where a key holds its ids come from the key recipes themselves (`field-rules.ts`), so a key the
 * consumer can write is never refused here. Pure.
 */
import { type EventOrigin, META_ID_PATTERN } from 'whatsapp-webhook-dedup/contract/event-origin';
import { KNOWN_FIELDS } from 'whatsapp-webhook-dedup/functions/events/extract-events';
import { type EventRecipe, recipesFor } from 'whatsapp-webhook-dedup/functions/events/field-rules';
import type { EventKind } from 'whatsapp-webhook-dedup/functions/events/types';
import { UsageError } from '../errors.ts';

/**
 * An event's phone number and WABA, as far as known (what a subscriber's `numbers` and `wabas` select on).
 * `exact`: read from the event itself (`keys BODY.json`), so an id `undefined` means the event has none;
 * else read from the key alone, and an id `undefined` means the key does not tell.
 */
export interface KnownOrigin extends Omit<EventOrigin, 'field'> {
  readonly exact: boolean;
}

export interface EventKeyShape {
  readonly key: string;
  /** The webhook field whose events have this prefix (`messages` for `msg:`, `st:`, `err:`). */
  readonly field: string;
  readonly kind: EventKind;
  /** The event's phone number and WABA, as far as the key (or the body it came from) tells them. */
  readonly origin: KnownOrigin;
  /** For a status key: the ledger entry it updates. */
  readonly ledger?: { readonly wamid: string; readonly recipientParticipantId: string | undefined };
}

interface PrefixShape {
  readonly field: string;
  readonly kind: EventKind;
  /** Where, among the parts after the prefix, the key holds `entry.id` and the phone number id (if it does). */
  readonly wabaPart: number | undefined;
  readonly numberPart: number | undefined;
}

const PREFIXES: ReadonlyMap<string, PrefixShape> = prefixShapes();

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
  const { field, kind } = known;
  const parts = key.slice(separator + 1).split(':');
  const origin: KnownOrigin = {
    phoneNumberId: metaIdAt(parts, known.numberPart),
    wabaId: metaIdAt(parts, known.wabaPart),
    exact: false,
  };
  if (kind !== 'status') return { key, field, kind, origin };
  const [wamid = '', status = '', ...participant] = parts;
  if (wamid === '' || status === '') {
    throw new UsageError(`status key "${truncate(key)}" must look like st:<wamid>:<status>`);
  }
  return {
    key,
    field,
    kind,
    origin,
    ledger: {
      wamid,
      recipientParticipantId: participant.length === 0 ? undefined : participant.join(':'),
    },
  };
}

/** The shape of the key of an event read from a body: its origin is the event's own. */
export function eventShapeOf(event: EventOrigin & { readonly key: string }): EventKeyShape {
  return {
    ...eventKeyShape(event.key),
    origin: { phoneNumberId: event.phoneNumberId, wabaId: event.wabaId, exact: true },
  };
}

/**
 * Each key prefix's field and kind, and the positions of the ids its recipes put in the key: a position only
 * where every recipe of the prefix has it there (a key part is one segment: recipes encode `:` away).
 */
function prefixShapes(): Map<string, PrefixShape> {
  const recipes = new Map<string, { field: string; recipes: EventRecipe[] }>();
  for (const field of KNOWN_FIELDS) {
    for (const recipe of recipesFor(field) ?? []) {
      const entry = recipes.get(recipe.keyPrefix);
      // A prefix's last recipe names its field and kind.
      recipes.set(recipe.keyPrefix, { field, recipes: [...(entry?.recipes ?? []), recipe] });
    }
  }
  const shapes = new Map<string, PrefixShape>();
  for (const [prefix, entry] of recipes) {
    shapes.set(prefix, {
      field: entry.field,
      kind: (entry.recipes.at(-1) as EventRecipe).kind,
      wabaPart: commonPosition(entry.recipes, 'entry', ['id']),
      numberPart: commonPosition(entry.recipes, 'value', ['metadata', 'phone_number_id']),
    });
  }
  return shapes;
}

function commonPosition(
  recipes: readonly EventRecipe[],
  root: string,
  path: readonly string[],
): number | undefined {
  const positions = recipes.map((recipe) =>
    recipe.parts.findIndex(
      (part) => 'root' in part && part.root === root && part.path.join('.') === path.join('.'),
    ),
  );
  const [first] = positions;
  return first !== undefined && first >= 0 && positions.every((position) => position === first)
    ? first
    : undefined;
}

/** The part at `index` when it is one of Meta's ids (digits); anything else (`-`, a number id) tells nothing. */
function metaIdAt(parts: readonly string[], index: number | undefined): string | undefined {
  if (index === undefined) return undefined;
  const part = parts[index];
  return part !== undefined && META_ID_PATTERN.test(part) ? part : undefined;
}

function truncate(text: string): string {
  return text.length <= 80 ? text : `${text.slice(0, 77)}…`;
}
