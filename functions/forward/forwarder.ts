/**
 * One POST of forwarded events to a destination (docs/design.md, "Forwarding"), and what its answer means:
 * the body and headers of the subscriber's shape, a request timeout, no redirects followed (a destination that
 * moved is a configuration to fix, and a redirect would carry the signature elsewhere).
 */
import { type ForwardShape, forwardHeadersProblem, type ResolvedForward } from '../../contract/forwarding.ts';
import type { WebhookEvent } from '../events/types.ts';
import { type ForwardOutcome, outcomeOfAnswer, outcomeOfFailure } from './forward-answer.ts';
import { asciiJson, eventBody, metaEnvelope } from './forward-bodies.ts';
import { eventShapeHeaders, metaShapeHeaders } from './forward-signing.ts';

export interface ForwardTarget {
  /** https, or http to a loopback address (the local stack). */
  readonly url: string;
  readonly shape: ForwardShape;
  /** `meta`: the HMAC key (by default the app secret); `event`: a Standard Webhooks secret (`whsec_…`). */
  readonly secret: string;
  readonly timeoutMs: number;
  /**
   * Headers of the user's added to every POST (`headersSecretName`: an API key the destination wants), never
   * one the shape sets itself.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The headers of `headersSecretName` cannot be used (contract/forwarding.ts, `forwardHeadersProblem`): the
 * message names headers, never their values.
 */
export class ForwardHeadersError extends Error {
  constructor(problem: string) {
    super(problem);
    this.name = 'ForwardHeadersError';
  }
}

/**
 * A forward destination with its secret (and its headers, if any) read, as one POST needs it. Throws
 * {@link ForwardHeadersError} for headers that are not an object of strings or that name a header of ours.
 */
export function forwardTarget(
  forward: Pick<ResolvedForward, 'url' | 'shape' | 'timeoutSeconds'>,
  secret: string,
  headers?: unknown,
): ForwardTarget {
  const target = { url: forward.url, shape: forward.shape, secret, timeoutMs: forward.timeoutSeconds * 1000 };
  if (headers === undefined) return target;
  const problem = forwardHeadersProblem(headers);
  if (problem !== undefined) throw new ForwardHeadersError(problem);
  return { ...target, headers: { ...(headers as Record<string, string>) } };
}

/** How much of a refusing answer's body is kept for the DLQ and `ops dlq`. */
export const KEPT_ANSWER_BYTES = 256;

export type ForwardResult = ForwardOutcome & {
  /** For a refused answer: its first {@link KEPT_ANSWER_BYTES} bytes, for an operator to read. */
  readonly answerStart?: string;
};

export interface ForwardContext {
  /** The receiver's arrival time of the delivery (the `event` shape's `receivedAt`). */
  readonly receivedAt: string;
  readonly fetch?: typeof fetch;
  readonly now?: () => Date;
}

/**
 * The request a destination receives for `events` (one event for the `event` shape): the user's headers, then
 * the shape's own, which no header of the user's may name.
 */
export function forwardRequest(
  events: readonly WebhookEvent[],
  target: ForwardTarget,
  context: { readonly receivedAt: string; readonly sentAt: Date },
): { readonly body: string; readonly headers: Record<string, string> } {
  if (target.shape === 'meta') {
    const body = asciiJson(metaEnvelope(events));
    const keys = events.map((event) => event.key);
    return { body, headers: { ...target.headers, ...metaShapeHeaders(body, keys, target.secret) } };
  }
  const [event] = events;
  if (event === undefined || events.length > 1)
    throw new RangeError('The event shape forwards one event per request.');
  const body = asciiJson(eventBody(event, { receivedAt: context.receivedAt }));
  return {
    body,
    headers: { ...target.headers, ...eventShapeHeaders(body, event.key, target.secret, context.sentAt) },
  };
}

/** POSTs `events` to the target and says what the answer means. Never throws for the destination's sake. */
export async function forwardEvents(
  events: readonly WebhookEvent[],
  target: ForwardTarget,
  context: ForwardContext,
): Promise<ForwardResult> {
  const now = context.now ?? (() => new Date());
  const request = forwardRequest(events, target, { receivedAt: context.receivedAt, sentAt: now() });
  let response: Response;
  try {
    response = await (context.fetch ?? fetch)(target.url, {
      method: 'POST',
      body: request.body,
      headers: request.headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(target.timeoutMs),
    });
  } catch (error) {
    return outcomeOfFailure(error);
  }
  const outcome = outcomeOfAnswer(response.status, response.headers.get('retry-after'), now());
  if (outcome.kind !== 'refused') {
    await response.body?.cancel();
    return outcome;
  }
  return { ...outcome, answerStart: await answerStart(response) };
}

/** The first bytes of an answer's body, read no further than that. */
async function answerStart(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < KEPT_ANSWER_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.length;
    }
    await reader.cancel();
  } catch {
    // The destination broke off: what came is what there is.
  }
  return Buffer.concat(chunks).subarray(0, KEPT_ANSWER_BYTES).toString('utf8');
}
