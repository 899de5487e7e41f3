/**
 * What a forward subscriber POSTs (docs/design.md, "Forwarding"): for the `meta` shape, Meta's own envelope
 * holding one event (or a delivery part's events with `batch`), so that a consumer written for Meta's webhook
 * accepts it unchanged; for the `event` shape, the event as this project names it. Pure: the same events give
 * the same bytes, so a retry re-sends what the destination may already have seen, byte for byte.
 */
import { stringify } from 'lossless-json';
import { isJsonObject } from '../events/key-parts.ts';
import type { JsonObject, JsonValue, WebhookEvent } from '../events/types.ts';

/** The `object` of every WhatsApp Business webhook body. */
const WHATSAPP_OBJECT = 'whatsapp_business_account';

/**
 * JSON in ASCII bytes, every code unit above `~` written as a lowercase `\uXXXX` escape, as Meta writes its
 * bodies. Consumer libraries that escape the raw body this way before they hash it (whatsapp-api-js does) then
 * hash the bytes we signed; a verifier that hashes the raw bytes reads the same bytes. Numbers keep their
 * lexemes (ids above 2^53, `1.50`).
 */
export function asciiJson(value: JsonValue): string {
  const text = stringify(value);
  if (text === undefined) throw new TypeError('asciiJson: the value has no JSON text');
  return text.replace(/[^\0-~]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Meta's envelope holding `events` (one, or a delivery part's events), cut from the entries they came in: in
 * the entries' order, one entry per WABA as Meta writes it (entries of the same `id` and the same other members
 * merged, their changes in order; an entry whose `time` differs stays apart, since some keys read it), each
 * change its field and a value that keeps everything but its lists (its `metadata`), and of each list only the
 * items that are these events; a message keeps the contact that names its sender.
 */
export function metaEnvelope(events: readonly WebhookEvent[]): JsonObject {
  const itemsByValue = new Map<JsonObject, Set<JsonObject>>();
  const entries = new Set<JsonObject>();
  for (const event of events) {
    itemsByValue.set(event.value, (itemsByValue.get(event.value) ?? new Set()).add(event.payload));
    entries.add(event.entry);
  }
  const merged = new Map<string, { entry: JsonObject; changes: JsonObject[] }>();
  for (const entry of entries) {
    const changes = (Array.isArray(entry.changes) ? entry.changes : [])
      .filter(isJsonObject)
      .flatMap((change) => {
        const items = isJsonObject(change.value) ? itemsByValue.get(change.value) : undefined;
        return items === undefined
          ? []
          : [{ ...change, value: valueHolding(change.value as JsonObject, items) }];
      });
    const { changes: _changes, ...members } = entry;
    const same = merged.get(asciiJson(members));
    if (same === undefined) merged.set(asciiJson(members), { entry, changes });
    else same.changes.push(...changes);
  }
  return {
    object: WHATSAPP_OBJECT,
    entry: [...merged.values()].map(({ entry, changes }) => ({ ...entry, changes })),
  };
}

/** `value` with each list cut to the items among `items` (and a message's contacts to its sender's). */
function valueHolding(value: JsonObject, items: ReadonlySet<JsonObject>): JsonObject {
  // An event whose payload is the whole value (most management fields) keeps the value as it came.
  if (items.has(value)) return value;
  const kept: JsonObject = {};
  const messages: JsonObject[] = [];
  let found = 0;
  for (const [name, member] of Object.entries(value)) {
    if (!Array.isArray(member)) {
      kept[name] = member;
      continue;
    }
    const held = member.filter((item): item is JsonObject => isJsonObject(item) && items.has(item));
    if (held.length > 0) kept[name] = held;
    found += held.length;
    if (name === 'messages') messages.push(...held);
  }
  // An item nested deeper than the value's own lists: the value as it came is the one body that holds it.
  if (found < items.size) return value;
  const contacts = Array.isArray(value.contacts)
    ? value.contacts.filter((contact) => isJsonObject(contact) && messages.some((m) => names(contact, m)))
    : [];
  if (contacts.length > 0) return withContacts(kept, contacts, value);
  return kept;
}

/** Whether a contact names a message's sender: its phone number (`wa_id` = `from`) or BSUID (`user_id` = `from_user_id`). */
function names(contact: JsonObject, message: JsonObject): boolean {
  const same = (a: JsonValue | undefined, b: JsonValue | undefined) =>
    typeof a === 'string' && a !== '' && a === b;
  return same(contact.wa_id, message.from) || same(contact.user_id, message.from_user_id);
}

/** `kept` with `contacts` placed where the value had its contacts, so members keep Meta's order. */
function withContacts(kept: JsonObject, contacts: JsonValue[], value: JsonObject): JsonObject {
  const ordered: JsonObject = {};
  for (const name of Object.keys(value)) {
    if (name === 'contacts') ordered.contacts = contacts;
    else if (name in kept) ordered[name] = kept[name] as JsonValue;
  }
  return ordered;
}

/** The `event` shape's body: the event's key, field and kind, its payload, and when the receiver took it. */
export function eventBody(
  event: WebhookEvent,
  context: { readonly receivedAt: string; readonly conversation?: string | undefined },
): JsonObject {
  return {
    key: event.key,
    field: event.field,
    kind: event.kind,
    ...(context.conversation === undefined ? {} : { conversation: context.conversation }),
    receivedAt: context.receivedAt,
    event: event.payload,
  };
}
