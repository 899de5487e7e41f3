/**
 * Turns a webhook body into its events and their keys, exactly per docs/design.md §1: entries, then changes, in
 * array order; within a change, the field's recipes in table order and each array's items in order.
 *
 * Malformed inner parts never throw and never invent an event; they are reported in `malformed`:
 * - an entry that is not an object, or whose `changes` is not an array, yields nothing;
 * - a change that is not an object, or whose `field` is not a string, yields nothing;
 * - a known field whose `value` is not an object yields nothing (there is nothing to key);
 * - an items array that is present but not an array yields nothing; an item that is not an object is
 *   skipped while its siblings still count. An absent or null array is normal (a `messages` change carries
 *   statuses or messages, rarely both) and is not reported, so a `messages` change with no arrays yields
 *   no events.
 * Missing values inside a well-formed item are not malformed: they print as `-` in the key. A message or
 * status without a usable `id` is no event: it is reported in `unkeyed`, for the consumer to quarantine.
 */
import { originOf } from '../../contract/event-origin.ts';
import { buildEventKey, hasUsableIdentity } from './event-key.ts';
import { recipesFor } from './field-rules.ts';
import { isJsonObject, renderKeyPart } from './key-parts.ts';
import { parseWebhookJson } from './parse-json.ts';
import type {
  EventExtraction,
  JsonObject,
  JsonValue,
  MalformedPart,
  UnkeyedEvent,
  UnknownFieldChange,
  WebhookEvent,
} from './types.ts';

export { eventItemArrays, isKnownField, KNOWN_FIELDS } from './field-rules.ts';

const WHATSAPP_OBJECT = 'whatsapp_business_account';
const NO_ORIGIN = { wabaId: undefined, phoneNumberId: undefined } as const;

/** Parses the raw body losslessly, then extracts its events. Never throws. */
export function extractEvents(raw: string | Uint8Array): EventExtraction {
  const parsed = parseWebhookJson(raw);
  if (!parsed.ok) return parsed;
  return extractEventsFromEnvelope(parsed.body);
}

/**
 * Extracts the events of an already parsed body. Works on `parseWebhookJson` output and on plain
 * `JSON.parse` output alike; only the former keeps integers above 2^53 exact, so keys that are claimed
 * must come from a lossless parse. Never throws.
 */
export function extractEventsFromEnvelope(body: unknown): EventExtraction {
  if (!isJsonObject(body)) return notEnvelope('body is not a JSON object');
  if (body.object !== WHATSAPP_OBJECT) return notEnvelope(`"object" is not "${WHATSAPP_OBJECT}"`);
  const entries = body.entry;
  if (!Array.isArray(entries)) return notEnvelope('"entry" is not an array');

  const events: WebhookEvent[] = [];
  const unknownFields: UnknownFieldChange[] = [];
  const malformed: MalformedPart[] = [];
  const unkeyed: UnkeyedEvent[] = [];

  for (const entry of entries) {
    if (!isJsonObject(entry)) {
      malformed.push({ ...NO_ORIGIN, entryId: '-', field: '-', problem: 'entry is not an object' });
      continue;
    }
    const entryId = renderKeyPart(entry.id);
    const entryOrigin = { wabaId: originOf('-', entry, undefined).wabaId, phoneNumberId: undefined };
    const changes = entry.changes;
    if (!Array.isArray(changes)) {
      malformed.push({ ...entryOrigin, entryId, field: '-', problem: 'entry.changes is not an array' });
      continue;
    }
    for (const change of changes) {
      if (!isJsonObject(change)) {
        malformed.push({ ...entryOrigin, entryId, field: '-', problem: 'change is not an object' });
        continue;
      }
      const field = change.field;
      const value = change.value;
      const { wabaId, phoneNumberId } = originOf('-', entry, value);
      const at = { entryId, wabaId, phoneNumberId };
      if (typeof field !== 'string') {
        malformed.push({ ...at, field: '-', problem: 'change.field is not a string' });
        continue;
      }
      const recipes = recipesFor(field);
      if (recipes === undefined) {
        unknownFields.push({ ...at, field });
        continue;
      }
      if (!isJsonObject(value)) {
        malformed.push({ ...at, field, problem: 'change.value is not an object' });
        continue;
      }
      const problems = new Set<string>();
      for (const recipe of recipes) {
        const { itemsPath, kind, metricField } = recipe;
        if (itemsPath === null) {
          const key = buildEventKey(recipe, { entry, value, item: value });
          events.push({ key, field, kind, metricField, ...at, payload: value, value, entry });
          continue;
        }
        const items = itemsAt(value, itemsPath);
        if (items === undefined) continue;
        if (typeof items === 'string') {
          // Reported once per change, however many of its recipes read below the same member.
          if (!problems.has(items)) malformed.push({ ...at, field, problem: items });
          problems.add(items);
          continue;
        }
        const arrayName = `value.${itemsPath.join('.')}`;
        for (const item of items) {
          if (!isJsonObject(item)) {
            malformed.push({ ...at, field, problem: `an item of ${arrayName} is not an object` });
            continue;
          }
          const sources = { entry, value, item: item as JsonObject };
          if (!hasUsableIdentity(recipe, sources)) {
            const what = kind === 'management' ? `an item of ${arrayName}` : kind;
            unkeyed.push({ ...at, field, kind, metricField, problem: `${what} without a usable id` });
            continue;
          }
          const key = buildEventKey(recipe, sources);
          events.push({ key, field, kind, metricField, ...at, payload: item, value, entry });
        }
      }
    }
  }
  return { ok: true, events, unknownFields, malformed, unkeyed };
}

/**
 * The items at `path` inside the change value; `undefined` when a member on the way is absent or null (a
 * `messages` change carries statuses or messages, rarely both; a `standby` value may be `{}`), or the problem
 * when a member on the way is not an object or the last one is not an array.
 */
function itemsAt(value: JsonObject, path: readonly string[]): JsonValue[] | string | undefined {
  let current: JsonValue = value;
  for (const [index, name] of path.entries()) {
    const next: JsonValue | undefined = (current as JsonObject)[name];
    if (next === undefined || next === null) return undefined;
    const where = `value.${path.slice(0, index + 1).join('.')}`;
    if (index === path.length - 1) return Array.isArray(next) ? next : `${where} is not an array`;
    if (!isJsonObject(next)) return `${where} is not an object`;
    current = next;
  }
  return undefined;
}

function notEnvelope(detail: string): EventExtraction {
  return { ok: false, reason: 'not-whatsapp-envelope', detail };
}
