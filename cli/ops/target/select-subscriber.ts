/**
 * Which subscriber a command works on: the one named by `--subscriber`, the only one, or none (a usage
 * error listing the names, when there are several and none was named).
 */

import type { LaneName } from 'whatsapp-webhook-dedup/contract/lanes';
import { UsageError } from '../errors.ts';
import type { LaneTarget, SubscriberTarget } from './ops-target.ts';

export function selectSubscriber(
  subscribers: readonly SubscriberTarget[],
  requested: string | undefined,
): SubscriberTarget {
  const names = subscribers.map((subscriber) => subscriber.name).join(', ');
  if (requested === undefined) {
    const [only, ...others] = subscribers;
    if (only !== undefined && others.length === 0) return only;
    throw new UsageError(`several subscribers (${names}): choose one with --subscriber NAME`);
  }
  const chosen = subscribers.find((subscriber) => subscriber.name === requested);
  if (chosen === undefined) throw new UsageError(`no subscriber "${requested}" (subscribers: ${names})`);
  return chosen;
}

/** The lanes a command works on: the one `--lane` names (a usage error if the subscriber lacks it), else all. */
export function selectLanes(subscriber: SubscriberTarget, requested: LaneName | undefined): LaneTarget[] {
  if (requested === undefined) return [...subscriber.lanes];
  const chosen = subscriber.lanes.filter((lane) => lane.lane === requested);
  if (chosen.length === 0) {
    throw new UsageError(
      `subscriber ${subscriber.name} has no ${requested} lane (it does not receive messages)`,
    );
  }
  return chosen;
}
