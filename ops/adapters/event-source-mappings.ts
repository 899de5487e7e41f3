/**
 * The consumer's Lambda event source mapping (AWS): disabling it stops the polling of the subscriber's
 * queue, so deliveries wait there (for the queue's retention) instead of failing towards the DLQ; enabling
 * it resumes. Invocations already running finish.
 */
import {
  GetEventSourceMappingCommand,
  type LambdaClient,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import type { ConsumerState, ConsumerSwitch } from '../target/ops-target.ts';

export class EventSourceMappings implements ConsumerSwitch {
  readonly #lambda: LambdaClient;
  /** Subscriber name → event source mapping UUID (from the stack outputs). */
  readonly #mappingIds: ReadonlyMap<string, string>;

  constructor(lambda: LambdaClient, mappingIds: ReadonlyMap<string, string>) {
    this.#lambda = lambda;
    this.#mappingIds = mappingIds;
  }

  async setEnabled(subscriber: string, enabled: boolean): Promise<ConsumerState> {
    const { State } = await this.#lambda.send(
      new UpdateEventSourceMappingCommand({ UUID: this.#uuid(subscriber), Enabled: enabled }),
    );
    return State ?? 'Unknown';
  }

  async state(subscriber: string): Promise<ConsumerState> {
    const { State } = await this.#lambda.send(
      new GetEventSourceMappingCommand({ UUID: this.#uuid(subscriber) }),
    );
    return State ?? 'Unknown';
  }

  #uuid(subscriber: string): string {
    const uuid = this.#mappingIds.get(subscriber);
    if (uuid === undefined) throw new Error(`No event source mapping is known for subscriber ${subscriber}.`);
    return uuid;
  }
}
