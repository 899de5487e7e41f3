/**
 * Which subscribers get a delivery (docs/design.md §7): one without `fields`, `numbers` or `wabas` gets every
 * delivery; one with them only a delivery holding something it wants (contract/event-origin.ts). Pure.
 */
import { type EventOrigin, wantsEvent } from '../../contract/event-origin.ts';
import type { SubscriberQueue } from '../../contract/subscribers.ts';

export function subscribersWanting(
  subscribers: readonly SubscriberQueue[],
  origins: readonly EventOrigin[],
): SubscriberQueue[] {
  return subscribers.filter(
    (subscriber) =>
      (subscriber.fields === undefined &&
        subscriber.numbers === undefined &&
        subscriber.wabas === undefined) ||
      origins.some((origin) => wantsEvent(subscriber, origin)),
  );
}
