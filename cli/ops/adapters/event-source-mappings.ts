/**
 * A lane consumer's Lambda event source mapping (AWS): disabling it stops the polling of the lane's queue,
 * so deliveries wait there (for the queue's retention) instead of failing towards the DLQ; enabling it
 * resumes. Invocations already running finish. Each lane has its own mapping (stack outputs).
 */
import {
  GetEventSourceMappingCommand,
  type LambdaClient,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import type { ConsumerState, ConsumerSwitch, SwitchedLane } from './consumer-switch.ts';

export class EventSourceMappings implements ConsumerSwitch {
  readonly #lambda: LambdaClient;

  constructor(lambda: LambdaClient) {
    this.#lambda = lambda;
  }

  async setEnabled(subscriber: string, lane: SwitchedLane, enabled: boolean): Promise<ConsumerState> {
    const { State } = await this.#lambda.send(
      new UpdateEventSourceMappingCommand({ UUID: uuid(subscriber, lane), Enabled: enabled }),
    );
    return State ?? 'Unknown';
  }

  async state(subscriber: string, lane: SwitchedLane): Promise<ConsumerState> {
    const { State } = await this.#lambda.send(
      new GetEventSourceMappingCommand({ UUID: uuid(subscriber, lane) }),
    );
    return State ?? 'Unknown';
  }
}

function uuid(subscriber: string, lane: SwitchedLane): string {
  if (lane.eventSourceMappingId === undefined) {
    throw new Error(`No event source mapping is known for the ${lane.lane} lane of ${subscriber}.`);
  }
  return lane.eventSourceMappingId;
}
