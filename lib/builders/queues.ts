import { Duration } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { PipelineSettings } from '../../contract/settings.ts';
import { QUEUE_DEFAULTS } from '../defaults.ts';

export interface PipelineQueues {
  /** What the receiver enqueues and the consumer reads. */
  readonly deliveryQueue: Queue;
  /** Records the consumer gave up on, and bodies quarantined by either function. */
  readonly deadLetterQueue: Queue;
}

/** The delivery queue and its dead-letter queue, both with the secure defaults of `QUEUE_DEFAULTS`. */
export function buildQueues(scope: Construct, settings: PipelineSettings): PipelineQueues {
  const deadLetterQueue = new Queue(scope, 'DeadLetterQueue', {
    ...QUEUE_DEFAULTS,
    retentionPeriod: Duration.days(settings.deadLetterRetentionDays),
    // Redrive moves whole messages here, and quarantined bodies are written here directly.
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
