import { logDigest } from '../commons/log-digest.ts';
import type { WebhookEvent } from '../events/types.ts';

/**
 * The key as it appears in logs: its keyed digest ({@link logDigest}), never the key, since a wamid encodes
 * the customer's phone number and other keys name a phone number or a BSUID. Handlers get the real key.
 */
export function loggableKey(event: Pick<WebhookEvent, 'key'>): string {
  return logDigest(event.key);
}

/** What a log line says of an event: its key's digest, field and kind, never its content. */
export function loggedEvent(event: Pick<WebhookEvent, 'key' | 'field' | 'kind'>): {
  readonly key: string;
  readonly field: string;
  readonly kind: WebhookEvent['kind'];
} {
  return { key: loggableKey(event), field: event.field, kind: event.kind };
}
