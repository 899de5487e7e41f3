/**
 * The handlers of a forward subscriber (docs/design.md, "Forwarding"): every fresh event of every kind goes to
 * the destination, claimed before the POST and completed on a 2xx as any subscriber's effect. A 408, 429, 5xx,
 * timeout or broken connection releases the claim and brings the record back: after the destination's
 * `Retry-After` when it gave one (`RetryLater`), else after the subscriber's backoff. A refusal (another 4xx,
 * a redirect) fails the record the same way, with its status logged; the answer's first bytes stay on the
 * error, never in a log line (a destination may echo the body back).
 */
import type { WebhookEventContext, WebhookHandlers } from '../consumer/handler-api.ts';
import { DeadLetter, defineWebhookHandlers, RetryLater } from '../consumer/handler-api.ts';
import { type ForwardContext, type ForwardTarget, forwardEvents } from './forwarder.ts';

/**
 * The receive on which a refused event's record goes to the DLQ: a refusal can be a passing
 * misconfiguration of the destination (a deploy in progress, a rotated key), so two more tries, a backoff
 * apart, come first.
 */
export const FORWARD_REFUSALS_BEFORE_DEAD_LETTER = 3;

/**
 * The destination answered with a status that retrying will not change (another 4xx, a redirect): a
 * `DeadLetter` whose details keep the status and the answer's first bytes for `ops dlq`, never for a log.
 */
export class ForwardRefusedError extends DeadLetter {
  readonly status: number;

  constructor(status: number, answerStart: string) {
    super({
      reason: `http-${status}`,
      afterReceives: FORWARD_REFUSALS_BEFORE_DEAD_LETTER,
      details: { status: String(status), answer: answerStart },
    });
    this.name = 'ForwardRefusedError';
    this.status = status;
  }
}

/** The destination did not take the event (5xx, 408, 429 without `Retry-After`, a timeout, no connection). */
export class ForwardFailedError extends Error {
  readonly reason: string;

  constructor(reason: string) {
    super(`Forwarding failed: ${reason}.`);
    this.name = 'ForwardFailedError';
    this.reason = reason;
  }
}

/**
 * Handlers that forward each fresh event to `target`, one POST per event. `target` may be a function, called
 * before each POST, for a secret read from a cache that follows rotations.
 */
export function forwardWebhookHandlers(
  target: ForwardTarget | (() => Promise<ForwardTarget>),
  options: Pick<ForwardContext, 'fetch' | 'now'> = {},
): WebhookHandlers {
  const forward = async (context: WebhookEventContext): Promise<void> => {
    // `ops smoke`'s synthetic events prove the pipeline; a destination would act on them as on real ones.
    if (context.smokeTest) return;
    const destination =
      typeof target === 'function' ? await (target as () => Promise<ForwardTarget>)() : target;
    const result = await forwardEvents([context.event], destination, {
      ...options,
      receivedAt: context.receivedAt,
    });
    switch (result.kind) {
      case 'delivered':
        context.logger.info('Forwarded', { status: result.status });
        return;
      case 'retry':
        context.logger.warn('Destination did not take the event', { reason: result.reason });
        if (result.afterSeconds !== undefined) {
          throw new RetryLater({ afterSeconds: result.afterSeconds, reason: result.reason });
        }
        throw new ForwardFailedError(result.reason);
      case 'refused':
        context.logger.warn('Destination refused the event', { status: result.status });
        throw new ForwardRefusedError(result.status, result.answerStart ?? '');
    }
  };
  return defineWebhookHandlers({
    onMessage: forward,
    onStatus: forward,
    onError: forward,
    onManagementEvent: forward,
  });
}
