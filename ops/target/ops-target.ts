/**
 * What the ops commands work on, the same for the local stack (`/local/info`) and a deployed stack (its
 * CloudFormation outputs): the claim table, the quarantine queue, each subscriber's queues, and the switch
 * of each subscriber's consumer. The commands see nothing else of where it came from.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MessageMoveTasks } from '../adapters/message-move-tasks.ts';

export interface SubscriberTarget {
  readonly name: string;
  /** `undefined`: every field. */
  readonly fields: readonly string[] | undefined;
  /** Prefix of its claim and ledger keys; `undefined`: unprefixed. */
  readonly keyNamespace: string | undefined;
  readonly deliveryQueueUrl: string;
  readonly deadLetterQueueUrl: string;
}

/**
 * Lambda's event source mapping states (`Enabled`, `Disabling`, `Disabled`, `Enabling`, `Updating`, …); the
 * local poller reports the same words.
 */
export type ConsumerState = string;

export interface ConsumerSwitch {
  /** Asks for the change and returns the state right after (often `Disabling` / `Enabling`). */
  setEnabled(subscriber: string, enabled: boolean): Promise<ConsumerState>;
  state(subscriber: string): Promise<ConsumerState>;
}

export interface OpsTarget {
  /** For output: `local stack at http://localhost:3000`, `stack prod (eu-west-1)`. */
  readonly description: string;
  readonly tableName: string;
  readonly quarantineQueueUrl: string;
  /** The queues' message size limit (also the limit of one SendMessageBatch request). */
  readonly maximumMessageSizeBytes: number;
  readonly subscribers: readonly SubscriberTarget[];
  readonly sqs: SQSClient;
  readonly documentClient: DynamoDBDocumentClient;
  readonly consumerSwitch: ConsumerSwitch;
  /** SQS message move tasks, where the queues are real SQS queues; absent locally (the emulator lacks them). */
  readonly messageMoveTasks: MessageMoveTasks | undefined;
  /** Releases the clients. */
  close(): void;
}
