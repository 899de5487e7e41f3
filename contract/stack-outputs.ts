/**
 * The deployed stack's CloudFormation output keys: the stack (`lib/whatsapp-webhook-dedup-stack.ts`) writes
 * them, the ops CLI reads them (`--stack NAME`) to find a subscriber's queues, function and event source
 * mapping. One module, so the two cannot drift apart. Plain TypeScript: no aws-cdk-lib, no AWS SDK.
 */

/** Outputs of the whole pipeline. */
export const STACK_OUTPUT = {
  webhookUrl: 'WebhookUrl',
  webhookSecretName: 'WebhookSecretName',
  dashboardUrl: 'DashboardUrl',
  receiverFunctionName: 'ReceiverFunctionName',
  quarantineQueueUrl: 'QuarantineQueueUrl',
  claimTableName: 'ClaimTableName',
  /** The delivery archive's bucket (contract/archive.ts), which `ops replay` reads; absent without an archive. */
  archiveBucketName: 'ArchiveBucketName',
  /** The log digest key's secret, which `ops key` reads to print a key's digest as the logs hold it. */
  logDigestSecretArn: 'LogDigestSecretArn',
  /** The provenance key's secret, which `ops quarantine requeue` and `ops replay` check bodies with. */
  provenanceSecretArn: 'ProvenanceSecretArn',
  /** The subscriber names, comma-separated, in definition order: what `subscriberOutputKeys` is called with. */
  subscriberNames: 'SubscriberNames',
} as const;

/** The output keys of one subscriber's resources. */
export interface SubscriberOutputKeys {
  readonly deliveryQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly consumerFunctionName: string;
  /** The UUID of the consumer's event source mapping (what `pause` and `resume` update). */
  readonly eventSourceMappingId: string;
  /**
   * The message lane's (contract/lanes.ts) queue, DLQ, consumer and mapping: outputs only of a subscriber that
   * has the lane (it wants `messages`); the four keys above are then its status lane.
   */
  readonly messageQueueUrl: string;
  readonly messageDeadLetterQueueUrl: string;
  readonly messageConsumerFunctionName: string;
  readonly messageEventSourceMappingId: string;
}

/**
 * A subscriber name as it appears in output keys and construct ids: `crm-sync` → `CrmSync`. Output keys must
 * be alphanumeric; the construct refuses two subscribers whose names give the same result (`x-1`, `x1`).
 */
export function subscriberIdPart(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/**
 * `bot` → `BotDeliveryQueueUrl`, `BotDeadLetterQueueUrl`, `BotConsumerFunctionName`, `BotEventSourceMappingId`,
 * and for its message lane `BotMessageQueueUrl`, `BotMessageDeadLetterQueueUrl`, `BotMessageConsumerFunctionName`,
 * `BotMessageEventSourceMappingId`.
 */
export function subscriberOutputKeys(name: string): SubscriberOutputKeys {
  const prefix = subscriberIdPart(name);
  return {
    deliveryQueueUrl: `${prefix}DeliveryQueueUrl`,
    deadLetterQueueUrl: `${prefix}DeadLetterQueueUrl`,
    consumerFunctionName: `${prefix}ConsumerFunctionName`,
    eventSourceMappingId: `${prefix}EventSourceMappingId`,
    messageQueueUrl: `${prefix}MessageQueueUrl`,
    messageDeadLetterQueueUrl: `${prefix}MessageDeadLetterQueueUrl`,
    messageConsumerFunctionName: `${prefix}MessageConsumerFunctionName`,
    messageEventSourceMappingId: `${prefix}MessageEventSourceMappingId`,
  };
}

/** Reads the `SubscriberNames` output back into names. */
export function parseSubscriberNames(value: string): string[] {
  return value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}
