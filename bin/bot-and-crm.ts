/**
 * The example app's two systems on one number (README, "Several systems on one number"): a bot replying to
 * inbound messages and a CRM opening a ticket for each, each with its own queues, consumers and claims.
 *
 *   npx cdk deploy -c subscribers=bin/bot-and-crm.ts
 *   npm start -- --subscribers bin/bot-and-crm.ts
 */
import type { SubscriberDefinitions } from 'whatsapp-webhook-dedup';

export const subscribers: SubscriberDefinitions = {
  bot: { entry: 'functions/examples/subscribers/bot.ts', fields: ['messages'] },
  // A CRM needs no order: its message lane is a standard queue with the subscriber's day-long retry budget.
  crm: { entry: 'functions/examples/subscribers/crm.ts', messageLane: { ordered: false } },
};
