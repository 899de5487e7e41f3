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
import { buildEventKey, hasUsableIdentity, isJsonObject, renderKeyPart } from './event-key.ts';
import { recipesFor } from './field-rules.ts';
import { parseWebhookJson } from './parse-json.ts';
import type {
  EventExtraction,
  JsonObject,
  MalformedPart,
  UnkeyedEvent,
  UnknownFieldChange,
  WebhookEvent,
} from './types.ts';

export { eventItemArrays, isKnownField, KNOWN_FIELDS } from './field-rules.ts';

const WHATSAPP_OBJECT = 'whatsapp_business_account';

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
      malformed.push({ entryId: '-', field: '-', problem: 'entry is not an object' });
      continue;
    }
    const entryId = renderKeyPart(entry.id);
    const changes = entry.changes;
    if (!Array.isArray(changes)) {
      malformed.push({ entryId, field: '-', problem: 'entry.changes is not an array' });
      continue;
    }
    for (const change of changes) {
      if (!isJsonObject(change)) {
        malformed.push({ entryId, field: '-', problem: 'change is not an object' });
        continue;
      }
      const field = change.field;
      if (typeof field !== 'string') {
        malformed.push({ entryId, field: '-', problem: 'change.field is not a string' });
        continue;
      }
      const recipes = recipesFor(field);
      if (recipes === undefined) {
        unknownFields.push({ field, entryId });
        continue;
      }
      const value = change.value;
      if (!isJsonObject(value)) {
        malformed.push({ entryId, field, problem: 'change.value is not an object' });
        continue;
      }
      for (const recipe of recipes) {
        const { itemsArray, kind, metricField } = recipe;
        if (itemsArray === null) {
          const key = buildEventKey(recipe, { entry, value, item: value });
          events.push({ key, field, kind, metricField, entryId, payload: value, value });
          continue;
        }
        const items = value[itemsArray];
        if (items === undefined || items === null) continue;
        if (!Array.isArray(items)) {
          malformed.push({ entryId, field, problem: `value.${itemsArray} is not an array` });
          continue;
        }
        for (const item of items) {
          if (!isJsonObject(item)) {
            malformed.push({ entryId, field, problem: `an item of value.${itemsArray} is not an object` });
            continue;
          }
          const sources = { entry, value, item: item as JsonObject };
          if (!hasUsableIdentity(recipe, sources)) {
            unkeyed.push({ entryId, field, kind, metricField, problem: `${kind} without a usable id` });
            continue;
          }
          const key = buildEventKey(recipe, sources);
          events.push({ key, field, kind, metricField, entryId, payload: item, value });
        }
      }
    }
  }
  return { ok: true, events, unknownFields, malformed, unkeyed };
}

function notEnvelope(detail: string): EventExtraction {
  return { ok: false, reason: 'not-whatsapp-envelope', detail };
}
