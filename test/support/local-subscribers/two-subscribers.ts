/**
 * Two subscribers for the local stack's tests (`LOCAL_SUBSCRIBERS=test/support/local-subscribers/two-subscribers.ts`):
 * `bot` wants only the `messages` field, `crm` every field; both over the same every-event handlers, so that
 * what each effects shows the routing alone.
 */
import type { SubscriberDefinitions } from '../../../contract/subscribers.ts';

const EVERY_EVENT = 'test/support/local-subscribers/every-event.ts';

export const subscribers: SubscriberDefinitions = {
  bot: { entry: EVERY_EVENT, fields: ['messages'] },
  crm: { entry: EVERY_EVENT },
};
