import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Duration } from 'aws-cdk-lib';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { consumerEnvironment } from '../../contract/environment.ts';
import { DEFAULT_SUBSCRIBER_NAME, type ResolvedSubscriber } from '../../contract/subscribers.ts';
import { DEFAULT_CONSUMER_MEMORY_MB } from '../defaults.ts';
import { claimTableWriteStatements } from './claim-table-access.ts';
import { buildLambdaFunction } from './lambda-function.ts';
import type { SubscriberQueues } from './queues.ts';

export interface ConsumerOptions {
  /** The subscriber this consumer runs for: entry, fields, namespace, settings, ledger and memory choices. */
  readonly subscriber: ResolvedSubscriber;
  readonly queues: SubscriberQueues;
  readonly quarantineQueue: IQueue;
  readonly claimTable: TableV2;
  /** The other subscribers' namespaces (an unprefixed consumer is denied writes under them). */
  readonly otherNamespaces: readonly string[];
  readonly logRetention: RetentionDays;
  readonly logLevel: LogLevel;
}

export interface BuiltConsumer {
  readonly consumerFunction: NodejsFunction;
  /** Its SQS event source: `eventSourceMappingId` is what pausing the consumer disables. */
  readonly eventSource: SqsEventSource;
}

/**
 * One subscriber's consumer Lambda (`Consumer` in `scope`), fed by its delivery queue, allowed to write the
 * claims and ledger entries of its own namespace and to quarantine records in the pipeline's quarantine queue.
 */
export function buildConsumer(scope: Construct, options: ConsumerOptions): BuiltConsumer {
  const { subscriber, queues, claimTable } = options;
  const { settings } = subscriber;
  const { lambdaFunction, role } = buildLambdaFunction(scope, 'Consumer', {
    description:
      subscriber.name === DEFAULT_SUBSCRIBER_NAME
        ? 'WhatsApp webhook consumer: claims each event once in DynamoDB and runs its side effect.'
        : `WhatsApp webhook consumer of subscriber ${subscriber.name}: claims each event once in DynamoDB and runs its side effect.`,
    entry: subscriber.entry,
    memorySize: subscriber.memorySize ?? DEFAULT_CONSUMER_MEMORY_MB,
    timeoutSeconds: settings.consumerTimeoutSeconds,
    logRetention: options.logRetention,
    environment: consumerEnvironment({
      logLevel: options.logLevel,
      tableName: claimTable.tableName,
      subscriberName: subscriber.name,
      fields: subscriber.fields,
      keyNamespace: subscriber.keyNamespace,
      quarantineQueueUrl: options.quarantineQueue.queueUrl,
      deliveryQueueUrl: queues.deliveryQueue.queueUrl,
      retentionDays: settings.retentionDays,
      leaseMarginMs: settings.leaseMarginMs,
      maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
      statusLedger: subscriber.statusLedger,
      claimUnhandledEvents: subscriber.claimUnhandledEvents,
      retryBaseDelaySeconds: settings.retryBaseDelaySeconds,
      retryMaxDelaySeconds: settings.retryMaxDelaySeconds,
    }),
  });
  for (const statement of claimTableWriteStatements({
    tableArn: claimTable.tableArn,
    keyNamespace: subscriber.keyNamespace,
    otherNamespaces: options.otherNamespaces,
  })) {
    role.addToPrincipalPolicy(statement);
  }
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'QuarantineRecords',
      effect: Effect.ALLOW,
      actions: ['sqs:SendMessage'],
      resources: [options.quarantineQueue.queueArn],
    }),
  );
  // The event source mapping grants itself Receive/Delete/ChangeMessageVisibility/GetQueueAttributes on the
  // delivery queue (Queue.grantConsumeMessages), scoped to that queue.
  const eventSource = new SqsEventSource(queues.deliveryQueue, {
    batchSize: settings.batchSize,
    maxBatchingWindow: Duration.seconds(settings.maxBatchingWindowSeconds),
    maxConcurrency: settings.maxConcurrency,
    reportBatchItemFailures: true,
  });
  lambdaFunction.addEventSource(eventSource);
  return { consumerFunction: lambdaFunction, eventSource };
}
