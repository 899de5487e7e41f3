import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { receiverEnvironment } from '../../contract/environment.ts';
import type { PipelineSettings } from '../../contract/settings.ts';
import { DEFAULT_RECEIVER_MEMORY_MB, RECEIVER_ENTRY } from '../defaults.ts';
import { buildLambdaFunction } from './lambda-function.ts';
import type { WebhookSecret } from './webhook-secret.ts';

/** Where the receiver sends one subscriber's deliveries. */
export interface ReceiverSubscriber {
  readonly name: string;
  /** `undefined`: every field. */
  readonly fields: readonly string[] | undefined;
  /** Phone number ids; `undefined`: every number unless `wabas` limits it. */
  readonly numbers: readonly string[] | undefined;
  /** WABA ids; `undefined`: every account unless `numbers` limits it. */
  readonly wabas: readonly string[] | undefined;
  /** The status lane; every event when the subscriber has no message lane. */
  readonly deliveryQueue: IQueue;
  /** Its message lane: where inbound messages go instead, one queue message per conversation. */
  readonly messageLane: { readonly queue: IQueue; readonly ordered: boolean } | undefined;
}

export interface ReceiverOptions {
  readonly settings: PipelineSettings;
  /** In definition order. */
  readonly subscribers: readonly ReceiverSubscriber[];
  readonly quarantineQueue: IQueue;
  readonly secret: WebhookSecret;
  /** The provenance key: the receiver proves every body it keeps with it (functions/commons/provenance.ts). */
  readonly provenanceSecret: ISecret;
  readonly logRetention: RetentionDays;
  readonly logLevel: LogLevel;
  /** @default DEFAULT_RECEIVER_MEMORY_MB */
  readonly memorySize?: number;
  /** The archive queue it copies every delivery to; `undefined`: no archive. */
  readonly archiveQueue?: IQueue | undefined;
  /** Behind a function URL, its throttle; `undefined`: none (the HTTP API's route throttles). */
  readonly reservedConcurrentExecutions?: number | undefined;
}

/**
 * The receiver Lambda, allowed to enqueue (every subscriber's delivery queue and message queue, the quarantine
 * queue) and to read the webhook secret.
 */
export function buildReceiver(scope: Construct, options: ReceiverOptions): NodejsFunction {
  const { settings, subscribers, quarantineQueue, secret } = options;
  const { lambdaFunction, role } = buildLambdaFunction(scope, 'Receiver', {
    description: 'WhatsApp webhook receiver: verifies the signature, enqueues the delivery, answers Meta.',
    entry: RECEIVER_ENTRY,
    memorySize: options.memorySize ?? DEFAULT_RECEIVER_MEMORY_MB,
    timeoutSeconds: settings.receiverTimeoutSeconds,
    reservedConcurrentExecutions: options.reservedConcurrentExecutions,
    logRetention: options.logRetention,
    environment: receiverEnvironment({
      logLevel: options.logLevel,
      subscriberQueues: subscribers.map(({ name, fields, numbers, wabas, deliveryQueue, messageLane }) => ({
        name,
        queueUrl: deliveryQueue.queueUrl,
        fields,
        numbers,
        wabas,
        messageQueueUrl: messageLane?.queue.queueUrl,
        messageLaneOrdered: messageLane?.ordered,
      })),
      quarantineQueueUrl: quarantineQueue.queueUrl,
      maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
      webhookSecrets: { secretId: secret.secretId },
      archiveQueueUrl: options.archiveQueue?.queueUrl,
      provenance: { secretId: options.provenanceSecret.secretArn },
    }),
  });
  // Explicit grants: SendMessage only (SendMessageBatch is authorised by the same action), no reads.
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'EnqueueDeliveriesAndQuarantine',
      effect: Effect.ALLOW,
      actions: ['sqs:SendMessage'],
      resources: [
        ...subscribers.flatMap(({ deliveryQueue, messageLane }) => [
          deliveryQueue.queueArn,
          ...(messageLane === undefined ? [] : [messageLane.queue.queueArn]),
        ]),
        quarantineQueue.queueArn,
        ...(options.archiveQueue === undefined ? [] : [options.archiveQueue.queueArn]),
      ],
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
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ReadProvenanceKey',
      effect: Effect.ALLOW,
      actions: ['secretsmanager:GetSecretValue'],
      resources: [options.provenanceSecret.secretArn],
    }),
  );
  return lambdaFunction;
}
