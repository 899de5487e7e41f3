/**
 * Example subscriber "crm" (README, "Several systems on one number"): opens a CRM ticket per inbound message
 * and marks it read, with the handlers of `functions/examples/crm-ticket-handlers.ts`. It wants every field.
 *
 * The local stack has no CRM to call: there (LOCAL_EFFECTS_JOURNAL set) each effect is journaled instead, so
 * that `GET /local/effects` shows what the CRM would have received.
 */
import { createConsumerFromEnv, defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
import { webhookHandlers as crmTickets } from '../crm-ticket-handlers.ts';
import { journalLocalEffect } from './local-journal.ts';

export const webhookHandlers = defineWebhookHandlers({
  async onMessage(context) {
    if (context.smokeTest || journalLocalEffect(context.key)) return;
    await crmTickets.onMessage(context);
  },
  async onStatus(context) {
    if (context.smokeTest || journalLocalEffect(context.key)) return;
    await crmTickets.onStatus(context);
  },
});

export const handler = createConsumerFromEnv(webhookHandlers);
