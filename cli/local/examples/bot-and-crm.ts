/**
 * The two example subscribers of the README ("Several systems on one number"), for trying them locally
 * without editing bin/subscribers.ts: `LOCAL_SUBSCRIBERS=local/examples/bot-and-crm.ts npm start`.
 */
import type { SubscriberDefinitions } from 'whatsapp-webhook-dedup/contract/subscribers';

export const subscribers: SubscriberDefinitions = {
  bot: { entry: 'functions/examples/subscribers/bot.ts', fields: ['messages'] },
  // A CRM needs no order: its message lane is a standard queue with the subscriber's day-long retry budget.
  crm: { entry: 'functions/examples/subscribers/crm.ts', messageLane: { ordered: false } },
};
