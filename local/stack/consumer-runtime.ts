/**
 * The consumer as the local stack runs it: the same wiring as `functions/consumer.ts` (`createConsumerFromEnv`
 * over the user's `webhookHandlers`), with one local addition: each side effect can be made to take a while
 * (`/local/faults` → `effect.delayMs`), so that the simulator can load the consumer like a real effect (an
 * HTTP call to a CRM) would.
 */
import type { Context, SQSEvent } from 'aws-lambda';
import type { WebhookHandler, WebhookHandlers } from '../../functions/consumer/handler-api.ts';

export interface EffectDelay {
  /** Milliseconds the next side effect should take (0: none). */
  nextEffectDelayMs(): number;
}

/** Wraps every registered handler so that it first waits for the configured effect time. */
export function withEffectDelay(handlers: WebhookHandlers, delay: EffectDelay): WebhookHandlers {
  const wrap = <C>(handler: WebhookHandler<C> | undefined): WebhookHandler<C> | undefined =>
    handler === undefined
      ? undefined
      : async (context: C) => {
          const ms = delay.nextEffectDelayMs();
          if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
          await handler(context);
        };
  return {
    ...(handlers.onMessage && { onMessage: wrap(handlers.onMessage) }),
    ...(handlers.onStatus && { onStatus: wrap(handlers.onStatus) }),
    ...(handlers.onError && { onError: wrap(handlers.onError) }),
    ...(handlers.onManagementEvent && { onManagementEvent: wrap(handlers.onManagementEvent) }),
  };
}

/**
 * Imports the consumer modules only now: the SDK clients read their endpoints from the environment, which
 * the local stack sets first.
 */
export async function loadLocalConsumer(
  delay: EffectDelay,
): Promise<(event: SQSEvent, context: Context) => Promise<unknown>> {
  const { createConsumerFromEnv } = await import('../../functions/consumer/create-consumer.ts');
  const { webhookHandlers } = await import('../../functions/webhook-handlers.ts');
  return createConsumerFromEnv(withEffectDelay(webhookHandlers, delay));
}
