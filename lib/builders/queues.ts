import { Duration, Validations } from 'aws-cdk-lib';
import { DeduplicationScope, FifoThroughputLimit, Queue, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { type ResolvedMessageLane, redriveMaxReceiveCount } from '../../contract/lanes.ts';
import type { PipelineSettings } from '../../contract/settings.ts';
import { QUARANTINE_RETENTION_DAYS, QUEUE_DEFAULTS } from '../defaults.ts';

/** One subscriber's queues. */
export interface SubscriberQueues {
  /** What the receiver enqueues for this subscriber and its consumer reads. */
  readonly deliveryQueue: Queue;
  /** This subscriber's records that failed `maxReceiveCount` times (SQS redrive), and nothing else. */
  readonly deadLetterQueue: Queue;
}

/**
 * A subscriber's delivery queue and its dead-letter queue (`DeliveryQueue`, `DeadLetterQueue` in `scope`),
 * from that subscriber's settings, with the secure defaults of `QUEUE_DEFAULTS`.
 */
export function buildSubscriberQueues(scope: Construct, settings: PipelineSettings): SubscriberQueues {
  const deadLetterQueue = new Queue(scope, 'DeadLetterQueue', {
    ...QUEUE_DEFAULTS,
    retentionPeriod: Duration.days(settings.deadLetterRetentionDays),
    // Redrive moves whole messages here.
    maxMessageSizeBytes: settings.maximumMessageSizeBytes,
  });
  const deliveryQueue = new Queue(scope, 'DeliveryQueue', {
    ...QUEUE_DEFAULTS,
    retentionPeriod: Duration.days(settings.queueRetentionDays),
    visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
    maxMessageSizeBytes: settings.maximumMessageSizeBytes,
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
  });
  return { deliveryQueue, deadLetterQueue };
}

/** One subscriber's message lane queues (contract/lanes.ts). */
export interface MessageLaneQueues {
  /** Inbound messages only, one queue message per conversation and delivery; FIFO when the lane is ordered. */
  readonly messageQueue: Queue;
  /**
   * The lane's records that failed its `maxReceiveCount` times; FIFO too when the lane is, as SQS requires. An
   * ordered lane's consumer moves such a record here itself; SQS redrive is the net a few receives later.
   */
  readonly messageDeadLetterQueue: Queue;
}

/**
 * SQS FIFO in high-throughput mode: deduplication and the throughput quota per message group (the
 * conversation), not per queue, so that one busy queue is not capped at 300 messages/s. The receiver sets a
 * `MessageDeduplicationId` from the part's event keys; content-based deduplication would hash the body, whose
 * bytes differ between Meta's retries of the same event.
 */
const HIGH_THROUGHPUT_FIFO = {
  fifo: true,
  deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
  fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
  contentBasedDeduplication: false,
} as const satisfies QueueProps;

/**
 * A subscriber's message lane queue and its DLQ (`MessageQueue`, `MessageDeadLetterQueue` in `scope`), with
 * the lane's own settings: a high-throughput FIFO pair when the lane is ordered, a standard pair otherwise.
 */
export function buildMessageLaneQueues(scope: Construct, lane: ResolvedMessageLane): MessageLaneQueues {
  const { settings } = lane;
  const kind = lane.ordered ? HIGH_THROUGHPUT_FIFO : {};
  const messageDeadLetterQueue = new Queue(scope, 'MessageDeadLetterQueue', {
    ...QUEUE_DEFAULTS,
    ...kind,
    retentionPeriod: Duration.days(settings.deadLetterRetentionDays),
    maxMessageSizeBytes: settings.maximumMessageSizeBytes,
  });
  const messageQueue = new Queue(scope, 'MessageQueue', {
    ...QUEUE_DEFAULTS,
    ...kind,
    retentionPeriod: Duration.days(settings.queueRetentionDays),
    visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
    maxMessageSizeBytes: settings.maximumMessageSizeBytes,
    deadLetterQueue: { queue: messageDeadLetterQueue, maxReceiveCount: redriveMaxReceiveCount(lane) },
  });
  return { messageQueue, messageDeadLetterQueue };
}

/**
 * The pipeline's quarantine queue: bodies either function cannot process as they are (invalid JSON, not an
 * envelope, too large for a message, refused by a queue). No redrive policy: nothing consumes it, an operator
 * reads, requeues or deletes what it holds. Kept apart from the DLQs so that a DLQ redrive never re-sends a
 * quarantined body into a consumer.
 */
export function buildQuarantineQueue(scope: Construct, settings: PipelineSettings): Queue {
  const queue = new Queue(scope, 'QuarantineQueue', {
    ...QUEUE_DEFAULTS,
    retentionPeriod: Duration.days(QUARANTINE_RETENTION_DAYS),
    maxMessageSizeBytes: settings.maximumMessageSizeBytes,
  });
  Validations.of(queue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason:
      'The quarantine queue is a dead end by design, like a DLQ: the receiver and the consumers write the bodies they cannot process into it, nothing consumes it, and its alarms (QuarantineQueueNotEmpty, QuarantineQueueArrivals) call an operator, who reads, requeues or deletes each body. A redrive policy would never fire (nothing receives), and a second queue behind it would only hide the bodies.',
  });
  return queue;
}
