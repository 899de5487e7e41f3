/**
 * The handlers of a forward subscriber (docs/design.md, "Forwarding"): every fresh event of every kind goes to
 * the destination (one POST per event, or with `batch` one per record holding its fresh events), claimed
 * before the POST and completed on a 2xx as any subscriber's effect. A 408, 429, 5xx,
 * timeout or broken connection releases the claim and brings the record back: after the destination's
 * `Retry-After` when it gave one (`RetryLater`), else after the subscriber's backoff. A refusal (another 4xx,
 * a redirect) fails the record the same way, with its status logged; the answer's first bytes stay on the
 * error, never in a log line (a destination may echo the body back).
 */

import {
  ANSWER_CLASS_DIMENSION,
  type AnswerClass,
  FORWARD_ANSWERS_METRIC,
} from '../../contract/metric-names.ts';
import { concurrencyLimit } from '../commons/bounded-concurrency.ts';
import type {
  HandlerLogger,
  HandlerMetrics,
  RecordContext,
  WebhookEventContext,
  WebhookHandlers,
} from '../consumer/handler-api.ts';
import { DeadLetter, defineWebhookHandlers, RetryLater } from '../consumer/handler-api.ts';
import type { WebhookEvent } from '../events/types.ts';
import {
  type ForwardContext,
  ForwardHeadersError,
  type ForwardResult,
  type ForwardTarget,
  forwardEvents,
} from './forwarder.ts';

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

/** The reason of a POST that waited for its turn and was then not started: its timeout no longer fitted. */
export const NO_TIME_LEFT = 'no-time-left';

/** How a forward subscriber's handlers POST, beside where to. */
export interface ForwardHandlerOptions extends Pick<ForwardContext, 'fetch' | 'now'> {
  /**
   * One POST per record (delivery part), holding its fresh events together (`onRecord`), instead of one per
   * event. The `meta` shape only.
   * @default false
   */
  readonly batch?: boolean;
  /**
   * The most POSTs in flight at once over every call of these handlers: on Lambda, within one invocation (a
   * container runs one at a time), so the construct gives each lane `maxInFlight`'s share divided by the
   * lane's `maxConcurrency`; locally, where both lanes share one process, the subscriber's whole `maxInFlight`.
   * A POST that had to wait for its turn is not started when its timeout no longer fits in the invocation: its
   * events are released and retried after the backoff.
   * @default - no bound
   */
  readonly maxInFlight?: number;
}

/** What one POST needs of the handler's context, whether it carries an event or a record's events. */
interface PostContext {
  readonly receivedAt: string;
  readonly logger: HandlerLogger;
  readonly metrics: HandlerMetrics;
  remainingTimeMs(): number;
}

/**
 * Handlers that forward each fresh event to `target`, one POST per event, or with `batch` one POST per
 * record. `target` may be a function, called before each POST, for secrets read from a cache that follows
 * rotations.
 */
export function forwardWebhookHandlers(
  target: ForwardTarget | (() => Promise<ForwardTarget>),
  options: ForwardHandlerOptions = {},
): WebhookHandlers {
  const { batch = false, maxInFlight, ...forwardOptions } = options;
  const limit = maxInFlight === undefined ? undefined : concurrencyLimit(maxInFlight);
  const post = async (events: readonly WebhookEvent[], context: PostContext): Promise<void> => {
    const destination = await targetNow(target, context.logger);
    const send = async (waited: boolean): Promise<ForwardResult> => {
      // Waiting for a slot took time: a POST the invocation could end in the middle of is not started.
      if (waited && context.remainingTimeMs() < destination.timeoutMs) {
        return { kind: 'retry', reason: NO_TIME_LEFT };
      }
      return forwardEvents(events, destination, { ...forwardOptions, receivedAt: context.receivedAt });
    };
    const result = limit === undefined ? await send(false) : await limit.run(send);
    context.metrics.count(FORWARD_ANSWERS_METRIC, {
      name: ANSWER_CLASS_DIMENSION,
      value: answerClassOf(result),
    });
    const counted = batch ? { events: events.length } : {};
    switch (result.kind) {
      case 'delivered':
        context.logger.info('Forwarded', { status: result.status, ...counted });
        return;
      case 'retry':
        context.logger.warn(
          result.reason === NO_TIME_LEFT
            ? 'POST not started: too little time left after waiting its turn'
            : 'Destination did not take the event',
          { reason: result.reason, ...counted },
        );
        if (result.afterSeconds !== undefined) {
          throw new RetryLater({ afterSeconds: result.afterSeconds, reason: result.reason });
        }
        throw new ForwardFailedError(result.reason);
      case 'refused':
        context.logger.warn('Destination refused the event', { status: result.status, ...counted });
        throw new ForwardRefusedError(result.status, result.answerStart ?? '');
    }
  };
  if (batch) {
    return defineWebhookHandlers({
      onRecord: async (context: RecordContext) => {
        // `ops smoke`'s synthetic events prove the pipeline; a destination would act on them as on real ones.
        const events = context.events.filter(({ smokeTest }) => !smokeTest).map(({ event }) => event);
        if (events.length > 0) await post(events, context);
      },
    });
  }
  const forward = async (context: WebhookEventContext): Promise<void> => {
    // `ops smoke`'s synthetic events prove the pipeline; a destination would act on them as on real ones.
    if (context.smokeTest) return;
    await post([context.event], context);
  };
  return defineWebhookHandlers({
    onMessage: forward,
    onStatus: forward,
    onError: forward,
    onManagementEvent: forward,
  });
}

/** How the dashboards count an answer: its status class, or what kept it from coming. */
export function answerClassOf(result: ForwardResult): AnswerClass {
  if (result.kind === 'retry' && result.status === undefined) {
    return result.reason === NO_TIME_LEFT
      ? 'not-started'
      : result.reason === 'timeout'
        ? 'timeout'
        : 'connection';
  }
  const status = result.status ?? 0;
  return status >= 500 ? '5xx' : status >= 400 ? '4xx' : status >= 300 ? '3xx' : '2xx';
}

/**
 * The target as of now. Headers that cannot be used are logged by what is wrong with them (names, never
 * values) and fail the POST: the records are retried until the secret is fixed, which the cache then picks up.
 */
async function targetNow(
  target: ForwardTarget | (() => Promise<ForwardTarget>),
  logger: HandlerLogger,
): Promise<ForwardTarget> {
  if (typeof target !== 'function') return target;
  try {
    return await target();
  } catch (error) {
    if (error instanceof ForwardHeadersError)
      logger.error('Forward headers unusable', { problem: error.message });
    throw error;
  }
}
