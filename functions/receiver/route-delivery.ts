/**
 * Which subscribers get a delivery (docs/design.md §7): one without `fields` gets every delivery, one with
 * `fields` only a delivery holding at least one event of those fields. Pure.
 */
import { type SubscriberQueue, wantsField } from '../../contract/subscribers.ts';

export function subscribersWanting(
  subscribers: readonly SubscriberQueue[],
  eventFields: readonly string[],
): SubscriberQueue[] {
  return subscribers.filter(
    ({ fields }) => fields === undefined || eventFields.some((field) => wantsField(fields, field)),
  );
}
