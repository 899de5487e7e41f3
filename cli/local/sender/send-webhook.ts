/**
 * Signs a webhook body exactly as Meta does (`X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw bytes>`)
 * and POSTs it. The bytes are sent as read, never re-serialised, so the signature stays valid for bodies
 * with escaped unicode.
 */
import { signBody } from 'whatsapp-webhook-dedup/functions/receiver/signature';

export interface SendOptions {
  readonly url: string;
  readonly appSecret: string;
  /** Give up after this long (Meta waits a few seconds at most). @default 20 000 */
  readonly timeoutMs?: number;
  /** Extra headers, e.g. a wrong signature for tests. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface SendResult {
  readonly status: number;
  readonly statusText: string;
  readonly body: string;
  readonly durationMs: number;
}

export async function sendWebhook(body: Uint8Array, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const response = await fetch(options.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': signBody(body, options.appSecret),
      'user-agent': 'facebookexternalua',
      ...options.headers,
    },
    body,
    signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    statusText: response.statusText,
    body: text,
    durationMs: performance.now() - started,
  };
}
