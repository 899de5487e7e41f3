import { createHash } from 'node:crypto';
import type { WebhookEvent } from '../events/types.ts';

/**
 * Fields whose key (docs/design.md §1) carries a phone number as its first value, right after `<field>:<entry.id>:<ts>`:
 * the business's display number, or the customer's `wa_id` / contact number.
 */
const PHONE_IN_KEY_FIELDS = new Set([
  'phone_number_name_update',
  'phone_number_quality_update',
  'security',
  'user_preferences',
  'smb_app_state_sync',
]);
/** Index of the phone number in those keys, and of `recipient_participant_id` in `st:<id>:<status>:<participant>`. */
const PHONE_PART_INDEX = 3;

/**
 * The key as it appears in logs: verbatim, except that a phone number inside it (see above, and a group
 * status's participant) is replaced by a short SHA-256 digest, stable, so that the log lines of one event
 * still correlate. Handlers get the real key.
 */
export function loggableKey(event: Pick<WebhookEvent, 'key' | 'field' | 'kind'>): string {
  if (event.kind !== 'status' && !PHONE_IN_KEY_FIELDS.has(event.field)) return event.key;
  const parts = event.key.split(':');
  const phone = parts[PHONE_PART_INDEX];
  if (phone === undefined || phone === '-') return event.key;
  parts[PHONE_PART_INDEX] = `sha256~${createHash('sha256').update(phone).digest('hex').slice(0, 12)}`;
  return parts.join(':');
}

/** What a log line says of an event: its loggable key, field and kind, never its content. */
export function loggedEvent(event: Pick<WebhookEvent, 'key' | 'field' | 'kind'>): {
  readonly key: string;
  readonly field: string;
  readonly kind: WebhookEvent['kind'];
} {
  return { key: loggableKey(event), field: event.field, kind: event.kind };
}
