/**
 * `pause` / `resume`: turns the subscriber's consumer off and on (its event source mapping on AWS, its
 * poller locally) and waits until the change has taken effect. While paused, deliveries wait in the
 * subscriber's queue instead of failing towards its DLQ; the other subscribers go on.
 */

import { totalMessages } from '../../local/queue-counts.ts';
import { QueueMessages } from '../adapters/queue-messages.ts';
import { OpsError } from '../errors.ts';
import type { CommandContext } from './command-context.ts';

/** Lambda usually applies a change within seconds, sometimes a minute or two. */
export const SETTLE_TIMEOUT_MS = 300_000;
export const SETTLE_POLL_MS = 2_000;

export async function switchConsumerCommand(context: CommandContext, enabled: boolean): Promise<void> {
  const subscriber = context.subscriber();
  const { consumerSwitch } = context.target;
  const goal = enabled ? 'Enabled' : 'Disabled';
  const action = enabled ? 'resume' : 'pause';
  const startedAt = context.clock();
  let state = await consumerSwitch.setEnabled(subscriber.name, enabled);
  while (state !== goal) {
    if (context.clock() - startedAt > SETTLE_TIMEOUT_MS) {
      throw new OpsError(
        `the consumer of ${subscriber.name} is still ${state} after ${SETTLE_TIMEOUT_MS / 1000} s; run ${action} again to check`,
      );
    }
    context.output.progress(`${subscriber.name}: ${state}…`);
    await context.sleep(SETTLE_POLL_MS);
    state = await consumerSwitch.state(subscriber.name);
  }
  const backlog = await new QueueMessages(context.target.sqs).counts(subscriber.deliveryQueueUrl);
  context.output.record(action, { subscriber: subscriber.name, state, target: context.target.description });
  context.output.result({ subscriber: subscriber.name, state, deliveryQueue: backlog }, [
    enabled
      ? `consumer of ${subscriber.name} resumed (${state}): ${totalMessages(backlog)} deliveries in its queue`
      : `consumer of ${subscriber.name} paused (${state}): deliveries wait in its queue (${backlog.visible} waiting, ${backlog.inFlight} in flight); undo with the resume command`,
  ]);
}
