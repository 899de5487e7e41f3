/** Subscribers the local stack must refuse at start: two of them claim under the same key namespace. */
import type { SubscriberDefinitions } from '../../../contract/subscribers.ts';

export const subscribers: SubscriberDefinitions = {
  bot: { entry: 'test/support/local-subscribers/every-event.ts', keyNamespace: 'shared' },
  crm: { entry: 'test/support/local-subscribers/every-event.ts', keyNamespace: 'shared' },
};
