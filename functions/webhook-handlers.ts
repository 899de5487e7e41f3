/**
 * YOUR BUSINESS LOGIC GOES HERE (see docs/handlers.md).
 *
 * Each handler runs once per event key: the consumer claims the key first, calls the handler, then marks the
 * key done. Throw to have the event retried (the claim is released and SQS redelivers the message). Leave a
 * handler out and its events are acknowledged with no side effect.
 *
 * This default handler only logs the event's key, field and kind, and, in the local stack (where
 * LOCAL_EFFECTS_JOURNAL is set), records the effect so that `GET /local/effects` can show it.
 */
import { appendFileSync } from 'node:fs';
import { ENV } from '../contract/environment.ts';
import { defineWebhookHandlers, type WebhookEventContext } from './consumer/handler-api.ts';

function recordEffect({ key, smokeTest, logger }: WebhookEventContext): void {
  // `npm run ops -- smoke` (docs/operations.md): the pipeline is checked, the side effect is not run.
  if (smokeTest) return;
  logger.info('Webhook event handled');
  const journal = process.env[ENV.effectsJournal];
  // Synchronous on purpose: once this returns the line is in the file, even if the process is killed next.
  if (journal) appendFileSync(journal, `${key}\n`);
}

export const webhookHandlers = defineWebhookHandlers({
  onMessage: recordEffect,
  onStatus: recordEffect,
  onError: recordEffect,
  onManagementEvent: recordEffect,
});
