import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Duration } from 'aws-cdk-lib';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { consumerEnvironment, type ForwardEnvironment } from '../../contract/environment.ts';
import {
  type ForwardLaneInFlight,
  forwardInFlightShare,
  forwardLaneInFlight,
} from '../../contract/forwarding.ts';
import type { LaneName } from '../../contract/lanes.ts';
import type { PipelineSettings } from '../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME, type ResolvedSubscriber } from '../../contract/subscribers.ts';
import { DEFAULT_CONSUMER_MEMORY_MB, FORWARD_CONSUMER_ENTRY } from '../defaults.ts';
import { claimTableWriteStatements } from './claim-table-access.ts';
import { buildLambdaFunction } from './lambda-function.ts';

/** The lane a consumer reads (contract/lanes.ts). */
export interface ConsumerLane {
  readonly name: LaneName;
  /** The queue it reads: the subscriber's delivery queue (status lane) or its message queue. */
  readonly queue: IQueue;
  /** The lane's settings: the subscriber's for the status lane, `ResolvedMessageLane.settings` otherwise. */
  readonly settings: PipelineSettings;
  /** A FIFO queue run in conversation order (an ordered message lane). */
  readonly ordered: boolean;
  /**
   * The lane's DLQ, into which its consumer moves a record a handler gave up on (`DeadLetter`), and on an
   * ordered lane a record failing on its `maxReceiveCount`-th receive, so that the conversation goes on at
   * once (contract/lanes.ts `ORDERED_LANE_REDRIVE_MARGIN`).
   */
  readonly deadLetterQueue?: IQueue;
}

/** What a forward subscriber's consumers sign with (lib/builders/subscriber.ts). */
export interface ForwardSecret {
  readonly secret: ISecret;
  /** The webhook secret, whose first `appSecrets` entry signs; else a plain-text secret. */
  readonly appSecret: boolean;
}

export interface ConsumerOptions {
  /** The subscriber this consumer runs for: entry, fields, namespace, ledger and memory choices. */
  readonly subscriber: ResolvedSubscriber;
  readonly lane: ConsumerLane;
  readonly quarantineQueue: IQueue;
  /** The deployment's log digest key: the consumer reads it to digest keys in its logs. */
  readonly logDigestSecret: ISecret;
  readonly claimTable: TableV2;
  /** The other subscribers' namespaces (an unprefixed consumer is denied writes under them). */
  readonly otherNamespaces: readonly string[];
  readonly logRetention: RetentionDays;
  readonly logLevel: LogLevel;
  /** A forward subscriber's signing secret; `undefined` for a code subscriber. */
  readonly forwardSecret?: ForwardSecret | undefined;
  /** The secret holding a forward subscriber's headers (`headersSecretName`); `undefined` without one. */
  readonly forwardHeadersSecret?: ISecret | undefined;
}

export interface BuiltConsumer {
  readonly consumerFunction: NodejsFunction;
  /** Its SQS event source: `eventSourceMappingId` is what pausing the consumer disables. */
  readonly eventSource: SqsEventSource;
}

/** Construct id of a lane's consumer: the status lane's keeps the id the single consumer always had. */
const CONSUMER_ID: Record<LaneName, string> = { status: 'Consumer', message: 'MessageConsumer' };

/**
 * One lane's consumer Lambda of a subscriber (`Consumer` for the status lane, `MessageConsumer` for the
 * message lane, in `scope`), both over the subscriber's entry, fed by the lane's queue, allowed to write the
 * claims and ledger entries of the subscriber's namespace and to quarantine records in the pipeline's
 * quarantine queue.
 */
export function buildConsumer(scope: Construct, options: ConsumerOptions): BuiltConsumer {
  const { subscriber, lane, claimTable } = options;
  const { settings } = lane;
  const inFlight = forwardInFlightOf(subscriber, lane);
  const { lambdaFunction, role } = buildLambdaFunction(scope, CONSUMER_ID[lane.name], {
    description: consumerDescription(subscriber.name, lane.name),
    entry: subscriber.entry ?? FORWARD_CONSUMER_ENTRY,
    memorySize: subscriber.memorySize ?? DEFAULT_CONSUMER_MEMORY_MB,
    timeoutSeconds: settings.consumerTimeoutSeconds,
    logRetention: options.logRetention,
    environment: consumerEnvironment({
      logLevel: options.logLevel,
      tableName: claimTable.tableName,
      subscriberName: subscriber.name,
      fields: subscriber.fields,
      numbers: subscriber.numbers,
      wabas: subscriber.wabas,
      keyNamespace: subscriber.keyNamespace,
      quarantineQueueUrl: options.quarantineQueue.queueUrl,
      deliveryQueueUrl: lane.queue.queueUrl,
      retentionDays: settings.retentionDays,
      leaseMarginMs: settings.leaseMarginMs,
      maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
      statusLedger: subscriber.statusLedger,
      claimUnhandledEvents: subscriber.claimUnhandledEvents,
      retryBaseDelaySeconds: settings.retryBaseDelaySeconds,
      retryMaxDelaySeconds: settings.retryMaxDelaySeconds,
      lane: lane.name,
      // The status lane is never ordered: no variable, the consumer's default.
      laneOrdered: lane.name === 'message' ? lane.ordered : undefined,
      laneDeadLetters:
        lane.deadLetterQueue === undefined
          ? undefined
          : { queueUrl: lane.deadLetterQueue.queueUrl, maxReceives: settings.maxReceiveCount },
      logDigest: { secretId: options.logDigestSecret.secretArn },
      forward: forwardEnvironment(subscriber, inFlight, options.forwardSecret, options.forwardHeadersSecret),
    }),
  });
  options.logDigestSecret.grantRead(role);
  options.forwardSecret?.secret.grantRead(role);
  options.forwardHeadersSecret?.grantRead(role);
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
  if (lane.deadLetterQueue !== undefined) {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'DeadLetterRecords',
        effect: Effect.ALLOW,
        actions: ['sqs:SendMessage'],
        resources: [lane.deadLetterQueue.queueArn],
      }),
    );
  }
  // The event source mapping grants itself Receive/Delete/ChangeMessageVisibility/GetQueueAttributes on the
  // lane's queue (Queue.grantConsumeMessages), scoped to that queue. Lambda has no batching window on a FIFO
  // queue (it refuses MaximumBatchingWindowInSeconds there), so an ordered lane sets none.
  const eventSource = new SqsEventSource(lane.queue, {
    batchSize: settings.batchSize,
    maxBatchingWindow: lane.ordered ? undefined : Duration.seconds(settings.maxBatchingWindowSeconds),
    // A forward subscriber's `maxInFlight` caps it (resolveSubscribers and sizeForPeak already did).
    maxConcurrency: inFlight?.maxConcurrency ?? settings.maxConcurrency,
    reportBatchItemFailures: true,
  });
  lambdaFunction.addEventSource(eventSource);
  return { consumerFunction: lambdaFunction, eventSource };
}

/** What a forward subscriber's `maxInFlight` leaves this lane; `undefined` without one. */
function forwardInFlightOf(
  subscriber: ResolvedSubscriber,
  lane: ConsumerLane,
): ForwardLaneInFlight | undefined {
  const maxInFlight = subscriber.forward?.maxInFlight;
  if (maxInFlight === undefined) return undefined;
  const share = forwardInFlightShare(maxInFlight, lane.name, subscriber.messageLane !== undefined);
  return forwardLaneInFlight(share, lane.settings.maxConcurrency);
}

function forwardEnvironment(
  subscriber: ResolvedSubscriber,
  inFlight: ForwardLaneInFlight | undefined,
  forwardSecret: ForwardSecret | undefined,
  headersSecret: ISecret | undefined,
): ForwardEnvironment | undefined {
  const { forward } = subscriber;
  if (forward === undefined || forwardSecret === undefined) return undefined;
  return {
    url: forward.url,
    shape: forward.shape,
    timeoutSeconds: forward.timeoutSeconds,
    secret: { secretId: forwardSecret.secret.secretArn, appSecret: forwardSecret.appSecret },
    ...(forward.batch ? { batch: true } : {}),
    ...(headersSecret === undefined ? {} : { headers: { secretId: headersSecret.secretArn } }),
    // Each of the lane's concurrent invocations gets an equal part of its share.
    ...(inFlight === undefined ? {} : { postsInFlight: inFlight.postsPerInvocation }),
  };
}

function consumerDescription(subscriber: string, lane: LaneName): string {
  const of = subscriber === DEFAULT_SUBSCRIBER_NAME ? '' : ` of subscriber ${subscriber}`;
  return lane === 'status'
    ? `WhatsApp webhook consumer${of}: claims each event once in DynamoDB and runs its side effect.`
    : `WhatsApp webhook message-lane consumer${of}: runs inbound messages, claimed once in DynamoDB, in conversation order when ordered.`;
}
