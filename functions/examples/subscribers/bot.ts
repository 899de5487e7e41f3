/**
 * Example subscriber "bot" (README, "Several systems on one number"): replies to inbound messages. Its
 * definition in `bin/subscribers.ts` gives it `fields: ['messages']`, so template and account events never
 * reach its queue; with `onMessage` only, statuses and errors are acknowledged without a side effect.
 *
 * The reply itself is left out (it needs a WhatsApp access token): the handler logs the key and, in the local
 * stack, journals the effect. Put your bot's call where the journal line is, with `key` as its idempotency key.
 */
import { createConsumerFromEnv, defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
import { journalLocalEffect } from './local-journal.ts';

export const webhookHandlers = defineWebhookHandlers({
  onMessage({ key, smokeTest, logger }) {
    // `npm run ops -- smoke`: its message has no customer behind it; never reply to it.
    if (smokeTest) return;
    journalLocalEffect(key);
    logger.info('Inbound message handled by the bot');
  },
});

export const handler = createConsumerFromEnv(webhookHandlers);
