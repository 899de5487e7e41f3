/**
 * A subscriber module for the local stack's tests: a handler for every kind of event, each only logging its
 * key (the local stack journals every handler call that returns as one effect of the subscriber).
 */
import { createConsumerFromEnv } from '../../../functions/consumer/create-consumer.ts';
import { defineWebhookHandlers, type WebhookEventContext } from '../../../functions/consumer/handler-api.ts';

function handled({ logger }: WebhookEventContext): void {
  logger.info('Webhook event handled');
}

export const webhookHandlers = defineWebhookHandlers({
  onMessage: handled,
  onStatus: handled,
  onError: handled,
  onManagementEvent: handled,
});

export const handler = createConsumerFromEnv(webhookHandlers);
