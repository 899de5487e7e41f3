/**
 * Example subscriber "bot" answering each burst once (docs/handlers.md, "Answer a burst once"): every message a
 * person types within `burstWindowMs` of their first reaches one `onConversationTurn` call, in order. Define it
 * with the default, ordered message lane (docs/design.md §8), which keeps a conversation in one invocation at a
 * time, so that bursts form.
 *
 * The reply is left out (it needs a WhatsApp access token): the handler logs the turn's size and, in the local
 * stack, journals each message's effect. Put your bot's call there, with the last message's key as the turn's
 * idempotency key.
 */
import { createConsumerFromEnv, defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
import { journalLocalEffect } from './local-journal.ts';

export const webhookHandlers = defineWebhookHandlers({
  burstWindowMs: 1500,
  onConversationTurn({ messages, logger }) {
    // `npm run ops -- smoke`: a turn of its message only has no customer behind it; never reply to it.
    if (messages.every((message) => message.smokeTest)) return;
    for (const { key } of messages) journalLocalEffect(key);
    logger.info('Conversation turn answered by the bot', { messages: messages.length });
  },
});

export const handler = createConsumerFromEnv(webhookHandlers);
