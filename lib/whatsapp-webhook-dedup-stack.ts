import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { STACK_OUTPUT, subscriberOutputKeys } from '../contract/stack-outputs.ts';
import { WhatsAppWebhookDedup, type WhatsAppWebhookDedupProps } from './whatsapp-webhook-dedup.ts';

export interface WhatsAppWebhookDedupStackProps extends StackProps {
  /**
   * Props of the pipeline construct.
   * @default - the construct's defaults
   * @example
   * ```typescript
   * import { App } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedupStack } from 'whatsapp-webhook-dedup';
   *
   * new WhatsAppWebhookDedupStack(new App(), 'SupportWebhook', {
   *   pipeline: { consumerEntry: 'src/consumer.ts', expectedPeak: { messagesPerSecond: 80 } },
   * });
   * ```
   */
  readonly pipeline?: WhatsAppWebhookDedupProps;
  /**
   * ARN of an existing SNS topic that alarms notify (ignored when `pipeline.alarmTopic` is set).
   * @default - alarms have no actions
   * @example
   * ```typescript
   * import { App } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedupStack } from 'whatsapp-webhook-dedup';
   *
   * new WhatsAppWebhookDedupStack(new App(), 'SupportWebhook', {
   *   alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:on-call',
   * });
   * ```
   */
  readonly alarmTopicArn?: string;
}

/**
 * The deployable stack: the pipeline plus the outputs a user needs after `cdk deploy` (the callback URL for the
 * Meta app, the secret to fill in, the dashboard) and those the ops CLI reads (the quarantine queue, the claim
 * table, and each subscriber's queues, consumer and event source mapping), under the keys of
 * `contract/stack-outputs.ts`. Environment-agnostic, no lookups, so that `cdk synth` runs offline without
 * credentials.
 *
 * @example
 * ```typescript
 * import { App } from 'aws-cdk-lib';
 * import { WhatsAppWebhookDedupStack } from 'whatsapp-webhook-dedup';
 *
 * const app = new App();
 * new WhatsAppWebhookDedupStack(app, 'SupportWebhook', {
 *   env: { account: '123456789012', region: 'eu-west-1' },
 *   pipeline: { subscribers: { support: { entry: 'src/support-handlers.ts' } } },
 * });
 * ```
 */
export class WhatsAppWebhookDedupStack extends Stack {
  /** The pipeline construct, for wiring more resources to it (grants, alarms, outputs). */
  public readonly pipeline: WhatsAppWebhookDedup;

  /**
   * @param scope - The app (or stage) to add the stack to.
   * @param id - The stack's construct id, also its default CloudFormation stack name.
   * @param props - The stack's own props (`env`, `tags`, …) with the pipeline's and an alarm topic's.
   * @throws UnsafeSettingsError when the pipeline props would lose or hide events.
   */
  constructor(scope: Construct, id: string, props: WhatsAppWebhookDedupStackProps = {}) {
    super(scope, id, props);
    const alarmTopic =
      props.pipeline?.alarmTopic ??
      (props.alarmTopicArn ? Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn) : undefined);
    const pipeline = new WhatsAppWebhookDedup(this, 'Webhook', { ...props.pipeline, alarmTopic });
    this.pipeline = pipeline;

    const output = (key: string, description: string, value: string) =>
      new CfnOutput(this, key, { description, value });
    output(
      STACK_OUTPUT.webhookUrl,
      'Callback URL for the Meta app (WhatsApp > Configuration > Webhook).',
      pipeline.webhookUrl,
    );
    output(
      STACK_OUTPUT.webhookSecretName,
      'Secrets Manager secret holding {"appSecrets": [...], "verifyToken": "..."}.',
      pipeline.webhookSecretName,
    );
    output(STACK_OUTPUT.dashboardUrl, 'CloudWatch dashboard of the pipeline.', pipeline.dashboardUrl);
    output(
      STACK_OUTPUT.receiverFunctionName,
      'Receiver Lambda (restart its containers after a secret rotation to skip the 5-minute cache).',
      pipeline.receiverFunction.functionName,
    );
    output(
      STACK_OUTPUT.quarantineQueueUrl,
      'Quarantine queue: bodies the receiver or a consumer could not process as they are.',
      pipeline.quarantineQueue.queueUrl,
    );
    output(
      STACK_OUTPUT.logDigestSecretArn,
      "Key of the digests that stand for event keys in the logs: npm run ops -- key KEY prints a key's digest.",
      pipeline.logDigestSecret.secretArn,
    );
    output(
      STACK_OUTPUT.provenanceSecretArn,
      "Key of the receiver's proofs of kept bodies: ops quarantine requeue and ops replay check them with it.",
      pipeline.provenanceSecret.secretArn,
    );
    output(
      STACK_OUTPUT.claimTableName,
      'DynamoDB table of the claims and the status ledger.',
      pipeline.claimTable.tableName,
    );
    if (pipeline.archive !== undefined) {
      output(
        STACK_OUTPUT.archiveBucketName,
        `Delivery archive (message texts and phone numbers, kept ${pipeline.archive.retentionDays} days): what ops replay reads.`,
        pipeline.archive.bucket.bucketName,
      );
    }
    output(
      STACK_OUTPUT.subscriberNames,
      'The subscribers, comma-separated; each has the outputs <Name>DeliveryQueueUrl, <Name>DeadLetterQueueUrl, <Name>ConsumerFunctionName, <Name>EventSourceMappingId, and with a message lane <Name>MessageQueueUrl, <Name>MessageDeadLetterQueueUrl, <Name>MessageConsumerFunctionName, <Name>MessageEventSourceMappingId.',
      pipeline.subscribers.map(({ name }) => name).join(','),
    );
    for (const subscriber of pipeline.subscribers) {
      const keys = subscriberOutputKeys(subscriber.name);
      const of = `Subscriber ${subscriber.name}:`;
      const status = subscriber.messageLane === undefined ? '' : ' (status lane)';
      output(keys.deliveryQueueUrl, `${of} delivery queue${status}.`, subscriber.deliveryQueue.queueUrl);
      output(
        keys.deadLetterQueueUrl,
        `${of} dead-letter queue${status} (records that failed maxReceiveCount times).`,
        subscriber.deadLetterQueue.queueUrl,
      );
      output(
        keys.consumerFunctionName,
        `${of} consumer Lambda${status}.`,
        subscriber.consumerFunction.functionName,
      );
      output(
        keys.eventSourceMappingId,
        `${of} UUID of the consumer's event source mapping${status} (disable it to pause the consumer).`,
        subscriber.eventSource.eventSourceMappingId,
      );
      const lane = subscriber.messageLane;
      if (lane === undefined) continue;
      const kind = lane.ordered ? 'FIFO, grouped by conversation' : 'standard';
      output(keys.messageQueueUrl, `${of} message lane queue (${kind}).`, lane.queue.queueUrl);
      output(
        keys.messageDeadLetterQueueUrl,
        `${of} message lane dead-letter queue (${kind}).`,
        lane.deadLetterQueue.queueUrl,
      );
      output(
        keys.messageConsumerFunctionName,
        `${of} message lane consumer Lambda.`,
        lane.consumerFunction.functionName,
      );
      output(
        keys.messageEventSourceMappingId,
        `${of} UUID of the message lane consumer's event source mapping (disable it to pause that consumer).`,
        lane.eventSource.eventSourceMappingId,
      );
    }
  }
}
