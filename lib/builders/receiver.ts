import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { receiverEnvironment } from '../../contract/environment.ts';
import type { PipelineSettings } from '../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../contract/subscribers.ts';
import { DEFAULT_RECEIVER_MEMORY_MB, RECEIVER_ENTRY } from '../defaults.ts';
import { buildLambdaFunction } from './lambda-function.ts';
import type { PipelineQueues } from './queues.ts';
import type { WebhookSecret } from './webhook-secret.ts';

export interface ReceiverOptions {
  readonly settings: PipelineSettings;
  readonly queues: PipelineQueues;
  readonly secret: WebhookSecret;
  readonly logRetention: RetentionDays;
  readonly logLevel: LogLevel;
  /** @default DEFAULT_RECEIVER_MEMORY_MB */
  readonly memorySize?: number;
}

/** The receiver Lambda, allowed to enqueue (delivery queue and DLQ) and to read the webhook secret. */
export function buildReceiver(scope: Construct, options: ReceiverOptions): NodejsFunction {
  const { settings, queues, secret } = options;
  const { lambdaFunction, role } = buildLambdaFunction(scope, 'Receiver', {
    description: 'WhatsApp webhook receiver: verifies the signature, enqueues the delivery, answers Meta.',
    entry: RECEIVER_ENTRY,
    memorySize: options.memorySize ?? DEFAULT_RECEIVER_MEMORY_MB,
    timeoutSeconds: settings.receiverTimeoutSeconds,
    logRetention: options.logRetention,
    environment: receiverEnvironment({
      logLevel: options.logLevel,
      subscriberQueues: [{ name: DEFAULT_SUBSCRIBER_NAME, queueUrl: queues.deliveryQueue.queueUrl }],
      quarantineQueueUrl: queues.deadLetterQueue.queueUrl,
      maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
      webhookSecrets: { secretId: secret.secretId },
    }),
  });
  // Explicit grants: SendMessage only (SendMessageBatch is authorised by the same action), no reads.
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'EnqueueDeliveriesAndQuarantine',
      effect: Effect.ALLOW,
      actions: ['sqs:SendMessage'],
      resources: [queues.deliveryQueue.queueArn, queues.deadLetterQueue.queueArn],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ReadWebhookSecret',
      effect: Effect.ALLOW,
      actions: ['secretsmanager:GetSecretValue'],
      // A secret imported by name has no full ARN; its real ARN ends in a random `-XXXXXX` suffix.
      resources: [secret.secret.secretFullArn ?? `${secret.secret.secretArn}-??????`],
    }),
  );
  return lambdaFunction;
}
