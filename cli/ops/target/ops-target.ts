/**
 * What the ops commands work on, the same for the local stack (`/local/info`) and a deployed stack (its
 * CloudFormation outputs): the claim table, the quarantine queue, each subscriber's queues, and the switch
 * of each subscriber's consumer. The commands see nothing else of where it came from.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LaneName } from 'whatsapp-webhook-dedup/contract/lanes';
import type { ConsumerSwitch } from '../adapters/consumer-switch.ts';
import type { MessageMoveTasks } from '../adapters/message-move-tasks.ts';

/**
 * One lane of a subscriber (contract/lanes.ts): the status lane always, the message lane when it wants
 * `messages`. Each has its own queue, DLQ, consumer and event source mapping.
 */
export interface LaneTarget {
  readonly lane: LaneName;
  /** A FIFO queue: its records carry their conversation as `MessageGroupId`. */
  readonly ordered: boolean;
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  /** A deployed stack's consumer function and event source mapping of the lane; absent locally. */
  readonly functionName?: string;
  readonly eventSourceMappingId?: string;
}

export interface SubscriberTarget {
  readonly name: string;
  /** `undefined`: every field. */
  readonly fields: readonly string[] | undefined;
  /** Phone number ids it is limited to (contract/event-origin.ts); `undefined`: no limit by number. */
  readonly numbers: readonly string[] | undefined;
  /** WABA ids it is limited to; `undefined`: no limit by account. */
  readonly wabas: readonly string[] | undefined;
  /** Prefix of its claim and ledger keys; `undefined`: unprefixed. */
  readonly keyNamespace: string | undefined;
  /** The status lane first, then the message lane when the subscriber has one. */
  readonly lanes: readonly LaneTarget[];
}

/** The subscriber's status lane (every subscriber has one). */
export function statusLane(subscriber: SubscriberTarget): LaneTarget {
  const lane = subscriber.lanes.find((candidate) => candidate.lane === 'status');
  if (lane === undefined) throw new Error(`Subscriber ${subscriber.name} has no status lane.`);
  return lane;
}

/** The subscriber's message lane, if it has one. */
export function messageLane(subscriber: SubscriberTarget): LaneTarget | undefined {
  return subscriber.lanes.find((candidate) => candidate.lane === 'message');
}

/** The delivery archive (contract/archive.ts): what `ops replay` reads. */
export interface ArchiveTarget {
  readonly bucketName: string;
  readonly s3: S3Client;
  /** Days the bucket keeps an object (its lifecycle expiry); undefined when the target does not say. */
  retentionDays(): Promise<number | undefined>;
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
  /** The delivery archive; absent for a stack deployed without one (and the dashboard's in-process target). */
  readonly archive?: ArchiveTarget;
  /**
   * The key of the digests that stand for event keys in the consumers' logs; absent where the target cannot
   * tell (a stack deployed before the key existed, the dashboard's in-process target).
   */
  readonly logDigestKey?: () => Promise<string>;
  /**
   * The pipeline's provenance key: requeue and replay send back in only bodies whose proof holds under it;
   * absent where the target cannot tell (a stack deployed before it existed): every body is then refused.
   */
  readonly provenanceKey?: () => Promise<string>;
  /** Releases the clients. */
  close(): void;
}
