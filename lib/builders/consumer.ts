import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Duration } from 'aws-cdk-lib';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { consumerEnvironment, type StatusLedgerMode } from '../../contract/environment.ts';
import type { PipelineSettings } from '../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../contract/subscribers.ts';
import { DEFAULT_CONSUMER_ENTRY, DEFAULT_CONSUMER_MEMORY_MB } from '../defaults.ts';
import { buildLambdaFunction } from './lambda-function.ts';
import type { PipelineQueues } from './queues.ts';

export interface ConsumerOptions {
  readonly settings: PipelineSettings;
  readonly queues: PipelineQueues;
  readonly claimTable: TableV2;
  readonly logRetention: RetentionDays;
  readonly logLevel: LogLevel;
  /** @default DEFAULT_CONSUMER_ENTRY */
  readonly entry?: string;
  /** @default DEFAULT_CONSUMER_MEMORY_MB */
  readonly memorySize?: number;
  /** @default - no namespace */
  readonly keyNamespace?: string;
  /** @default - no variable: the consumer's own default */
  readonly statusLedger?: StatusLedgerMode;
  /** @default - no variable: the consumer's own default */
  readonly claimUnhandledEvents?: boolean;
}

/**
 * The consumer Lambda, fed by the delivery queue, allowed to write claims and the ledger and to quarantine
 * records in the DLQ.
 */
export function buildConsumer(scope: Construct, options: ConsumerOptions): NodejsFunction {
  const { settings, queues, claimTable } = options;
  const { lambdaFunction, role } = buildLambdaFunction(scope, 'Consumer', {
    description: 'WhatsApp webhook consumer: claims each event once in DynamoDB and runs its side effect.',
    entry: options.entry ?? DEFAULT_CONSUMER_ENTRY,
    memorySize: options.memorySize ?? DEFAULT_CONSUMER_MEMORY_MB,
    timeoutSeconds: settings.consumerTimeoutSeconds,
    logRetention: options.logRetention,
    environment: consumerEnvironment({
      logLevel: options.logLevel,
      tableName: claimTable.tableName,
      keyNamespace: options.keyNamespace,
      subscriberName: DEFAULT_SUBSCRIBER_NAME,
      quarantineQueueUrl: queues.deadLetterQueue.queueUrl,
      deliveryQueueUrl: queues.deliveryQueue.queueUrl,
      retentionDays: settings.retentionDays,
      leaseMarginMs: settings.leaseMarginMs,
      maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
      statusLedger: options.statusLedger,
      claimUnhandledEvents: options.claimUnhandledEvents,
    }),
  });
  // Claim (conditional Put), complete (conditional Update), release (conditional Delete), and the status
  // ledger's Update; a failed condition returns the old item, so no read permission is needed.
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ClaimAndLedgerWrites',
      effect: Effect.ALLOW,
      actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      resources: [claimTable.tableArn],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'QuarantineRecords',
      effect: Effect.ALLOW,
      actions: ['sqs:SendMessage'],
      resources: [queues.deadLetterQueue.queueArn],
    }),
  );
  // The event source mapping grants itself Receive/Delete/ChangeMessageVisibility/GetQueueAttributes on the
  // delivery queue (Queue.grantConsumeMessages), scoped to that queue.
  lambdaFunction.addEventSource(
    new SqsEventSource(queues.deliveryQueue, {
      batchSize: settings.batchSize,
      maxBatchingWindow: Duration.seconds(settings.maxBatchingWindowSeconds),
      maxConcurrency: settings.maxConcurrency,
      reportBatchItemFailures: true,
    }),
  );
  return lambdaFunction;
}
