/**
 * The headers that let a destination trust a forwarded body and drop a repeat of it (docs/design.md,
 * "Forwarding"): Meta's `X-Hub-Signature-256` for the `meta` shape, Standard Webhooks' for the `event` shape.
 */
import { createHash, createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * `X-Hub-Signature-256` as Meta writes it: `sha256=` and the lowercase hex HMAC-SHA256 of the exact bytes,
 * and an `Idempotency-Key` that is the same on every retry of the same events (a digest: keys hold wamids,
 * which encode phone numbers).
 */
export function metaShapeHeaders(
  body: string,
  eventKeys: readonly string[],
  secret: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`,
    'idempotency-key': createHash('sha256').update(eventKeys.join('\n'), 'utf8').digest('hex'),
  };
}

/**
 * Standard Webhooks' `webhook-id` (the event key: the same on every retry), `webhook-timestamp` (this
 * attempt's, in seconds) and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`).
 * `secret` is a Standard Webhooks secret: `whsec_` and base64.
 */
export function eventShapeHeaders(
  body: string,
  eventKey: string,
  secret: string,
  sentAt: Date,
): Record<string, string> {
  const timestamp = new Date(Math.floor(sentAt.getTime() / 1000) * 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': eventKey,
    'webhook-timestamp': String(timestamp.getTime() / 1000),
    'webhook-signature': new Webhook(secret).sign(eventKey, timestamp, body),
  };
}
