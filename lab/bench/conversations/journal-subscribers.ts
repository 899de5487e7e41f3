/**
 * LOCAL_SUBSCRIBERS for the conversations bench: the single default subscriber exactly as `npm start` defines it
 * when bin/subscribers.ts leaves `subscribers` undefined (name `default`, unprefixed keys, every setting and
 * the message lane at their defaults), with the bench's journaling handlers as its entry.
 */
import type { SubscriberDefinitions } from '../../../contract/subscribers.ts';

export const JOURNAL_HANDLERS_ENTRY = 'lab/bench/conversations/journal-handlers.ts';

export const subscribers: SubscriberDefinitions = {
  default: { entry: JOURNAL_HANDLERS_ENTRY, keyNamespace: '' },
};
