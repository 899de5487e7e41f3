/**
 * The systems this webhook feeds, read by the CDK app (`bin/app.ts`) and by the local stack (`npm start`).
 *
 * `undefined` (the default): one subscriber, `functions/consumer.ts` over the handlers of
 * `functions/webhook-handlers.ts`, with unprefixed claim keys.
 *
 * Several systems on one number (README): give each its own entry, e.g.
 *
 *   export const subscribers: SubscriberDefinitions = {
 *     bot: { entry: 'functions/examples/subscribers/bot.ts', fields: ['messages'] },
 *     crm: {
 *       entry: 'functions/examples/subscribers/crm.ts',
 *       settings: { maxConcurrency: 2 },
 *       messageLane: { ordered: false }, // a CRM needs no per-conversation order
 *     },
 *   };
 *
 * Each then gets its own queues (a message lane and a status lane, docs/design.md §8), DLQs, consumers,
 * alarms, dashboard row and claim namespace (its name).
 */
import type { SubscriberDefinitions } from 'whatsapp-webhook-dedup';

export const subscribers: SubscriberDefinitions | undefined = undefined;
