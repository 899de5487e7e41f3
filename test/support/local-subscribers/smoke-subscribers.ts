/**
 * Subscribers for the smoke test's e2e run (`LOCAL_SUBSCRIBERS=test/support/local-subscribers/smoke-subscribers.ts`):
 * `bot` (messages, ordered message lane), `crm` (every field, unordered message lane) and `templates` (no
 * `messages`, so a smoke test never reaches it and is reported as skipped).
 */
import type { SubscriberDefinitions } from '../../../contract/subscribers.ts';

const EVERY_EVENT = 'test/support/local-subscribers/every-event.ts';

export const subscribers: SubscriberDefinitions = {
  bot: { entry: EVERY_EVENT, fields: ['messages'] },
  crm: { entry: EVERY_EVENT, messageLane: { ordered: false } },
  templates: { entry: EVERY_EVENT, fields: ['message_template_status_update'] },
};
