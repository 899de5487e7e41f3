/**
 * What a destination's answer means for the events a forward subscriber POSTed (docs/design.md,
 * "Forwarding"). Pure.
 */

export type ForwardOutcome =
  /** 2xx: the destination has the body; the claims complete. */
  | { readonly kind: 'delivered'; readonly status: number }
  /**
   * 408, 429, 5xx, a timeout or a connection error: try again, after `afterSeconds` when the destination
   * said when (`Retry-After`), else after the subscriber's backoff.
   */
  | {
      readonly kind: 'retry';
      readonly status?: number;
      readonly afterSeconds?: number;
      readonly reason: string;
    }
  /** Any other answer (other 4xx, a redirect): the destination refuses this body; retrying will not help. */
  | { readonly kind: 'refused'; readonly status: number; readonly reason: string };

/** The outcome of an HTTP answer; `retryAfter` is the `Retry-After` header, `now` the time it came. */
export function outcomeOfAnswer(status: number, retryAfter: string | null, now: Date): ForwardOutcome {
  const reason = `http-${status}`;
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 408 || status === 429 || status >= 500) {
    return { kind: 'retry', status, reason, afterSeconds: retryAfterSeconds(retryAfter, now) };
  }
  return { kind: 'refused', status, reason };
}

/** The outcome when no answer came: the request timed out or the connection failed. */
export function outcomeOfFailure(error: unknown): ForwardOutcome {
  const name = error instanceof Error ? error.name : '';
  return {
    kind: 'retry',
    reason: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'connection',
  };
}

/**
 * `Retry-After` in whole seconds from `now`: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined when
 * absent or unreadable, never negative.
 */
export function retryAfterSeconds(header: string | null, now: Date): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}
