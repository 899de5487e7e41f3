/**
 * The smoke test's delivery: the body signed as Meta signs it (`X-Hub-Signature-256`, the receiver's own
 * `signBody`) and POSTed to the webhook URL, timed to the answer. An answer other than 200 becomes one line
 * saying what it means for the deployment (docs/design.md §4).
 */
import { SIGNATURE_HEADER, signBody } from 'whatsapp-webhook-dedup/functions/receiver/signature';
import { OpsError } from '../errors.ts';

export interface WebhookAck {
  readonly status: number;
  /** From sending the request to the end of the answer. */
  readonly ackMs: number;
}

/**
 * API Gateway's own limit is 30 s (a function URL has none, but the receiver answers within its own timeout); a
 * receiver that takes longer would be retried by Meta anyway.
 */
const POST_TIMEOUT_MS = 30_000;

/** `unauthorizedHint`: where the secret came from, added to the 401 line. */
export async function postSignedBody(
  url: string,
  body: string,
  appSecret: string,
  unauthorizedHint = '',
  now: () => number = performance.now.bind(performance),
): Promise<WebhookAck> {
  const started = now();
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(body, appSecret) },
      body,
      signal: AbortSignal.timeout(POST_TIMEOUT_MS),
    });
    text = await response.text();
  } catch (error) {
    const cause =
      error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new OpsError(`no answer from the webhook ${url}: ${cause}`);
  }
  const ackMs = now() - started;
  if (response.status === 200) return { status: 200, ackMs };
  throw new OpsError(
    `${answerMeaning(url, response.status, text)}${response.status === 401 ? unauthorizedHint : ''}`,
  );
}

function answerMeaning(url: string, status: number, text: string): string {
  const excerpt = text.trim().slice(0, 120).replace(/\s+/g, ' ');
  if (status === 401) {
    return `the webhook ${url} refused the signature (401): the app secret ops signed with is not one the receiver holds (a wrong or rotated secret, or a receiver still caching the old one for up to 5 minutes)`;
  }
  if (status === 429) {
    return `the webhook ${url} answered 429: its throttle is full (the HTTP API's route throttle, or behind a function URL the receiver's reserved concurrency); Meta retries such deliveries late, as duplicates the claims absorb`;
  }
  if (status >= 500) {
    return `the webhook ${url} answered ${status}: the receiver could not enqueue the body (queues, permissions or the secret unreadable; see its logs)${excerpt ? ` (${excerpt})` : ''}`;
  }
  return `the webhook ${url} answered ${status} instead of 200${excerpt ? ` (${excerpt})` : ''}`;
}
