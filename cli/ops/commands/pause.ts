/**
 * `pause` / `resume [--lane message|status]`: turns the subscriber's lane consumers off and on (each lane's
 * event source mapping on AWS, each lane's poller locally) and waits until the change has taken effect. While paused, deliveries wait in the lane's queue instead of
 * failing towards its DLQ; the other lane (with --lane) and the other subscribers go on.
 */

import type { LaneName } from 'whatsapp-webhook-dedup/contract/lanes';
import { type QueueCounts, totalMessages } from '../../local/queue-counts.ts';
import type { ConsumerState } from '../adapters/consumer-switch.ts';
import { QueueMessages } from '../adapters/queue-messages.ts';
import { OpsError } from '../errors.ts';
import type { LaneTarget } from '../target/ops-target.ts';
import { selectLanes } from '../target/select-subscriber.ts';
import type { CommandContext } from './command-context.ts';

/** Lambda usually applies a change within seconds, sometimes a minute or two. */
export const SETTLE_TIMEOUT_MS = 300_000;
export const SETTLE_POLL_MS = 2_000;

interface LaneSwitched {
  readonly lane: LaneName;
  readonly state: ConsumerState;
  readonly queue: QueueCounts;
}

export async function switchConsumerCommand(
  context: CommandContext,
  requested: LaneName | undefined,
  enabled: boolean,
): Promise<void> {
  const subscriber = context.subscriber();
  const { consumerSwitch } = context.target;
  const lanes = selectLanes(subscriber, requested);
  const action = enabled ? 'resume' : 'pause';
  const goal = enabled ? 'Enabled' : 'Disabled';
  const startedAt = context.clock();
  const states = new Map<LaneTarget, ConsumerState>();
  for (const lane of lanes) states.set(lane, await consumerSwitch.setEnabled(subscriber.name, lane, enabled));
  const switched: LaneSwitched[] = [];
  for (const lane of lanes) {
    let state = states.get(lane) ?? (await consumerSwitch.state(subscriber.name, lane));
    while (state !== goal) {
      if (context.clock() - startedAt > SETTLE_TIMEOUT_MS) {
        throw new OpsError(
          `the ${lane.lane} lane consumer of ${subscriber.name} is still ${state} after ${SETTLE_TIMEOUT_MS / 1000} s; run ${action} again to check`,
        );
      }
      context.output.progress(`${subscriber.name} ${lane.lane} lane: ${state}…`);
      await context.sleep(SETTLE_POLL_MS);
      state = await consumerSwitch.state(subscriber.name, lane);
    }
    switched.push({
      lane: lane.lane,
      state,
      queue: await new QueueMessages(context.target.sqs).counts(lane.queueUrl),
    });
  }
  context.output.record(action, {
    subscriber: subscriber.name,
    lanes: switched.map(({ lane, state }) => ({ lane, state })),
    target: context.target.description,
  });
  context.output.result({ subscriber: subscriber.name, lanes: switched }, [
    ...switched.map(({ lane, state, queue }) =>
      enabled
        ? `${lane} lane of ${subscriber.name} resumed (${state}): ${totalMessages(queue)} deliveries in its queue`
        : `${lane} lane of ${subscriber.name} paused (${state}): deliveries wait in its queue (${queue.visible} waiting, ${queue.inFlight} in flight)`,
    ),
    ...(enabled ? [] : ['undo with the resume command']),
  ]);
}
