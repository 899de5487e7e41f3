/**
 * The two example subscribers of the README ("Several systems on one number"), for trying them locally
 * without editing bin/subscribers.ts: `LOCAL_SUBSCRIBERS=local/examples/bot-and-crm.ts npm start`.
 */
import type { SubscriberDefinitions } from '../../contract/subscribers.ts';

export const subscribers: SubscriberDefinitions = {
  bot: { entry: 'functions/examples/subscribers/bot.ts', fields: ['messages'] },
  crm: { entry: 'functions/examples/subscribers/crm.ts' },
};
