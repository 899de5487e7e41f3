/**
 * The delivery archive (docs/design.md, "Archive"): the archive queue the receiver copies every delivery to,
 * its DLQ, the archiver Lambda that writes the batches to S3, and the bucket. All in the `Archive` scope, so
 * that turning the archive on or off adds or removes these resources only.
 */
import * as path from 'node:path';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ARCHIVE_PREFIX, ARCHIVE_STAGING_PREFIX } from '../../contract/archive.ts';
import {
  ARCHIVE_QUEUE_VISIBILITY_TIMEOUT_SECONDS,
  ARCHIVER_BATCH_SIZE,
  ARCHIVER_BATCHING_WINDOW_SECONDS,
  ARCHIVER_MAX_RECEIVE_COUNT,
  ARCHIVER_TIMEOUT_SECONDS,
} from '../../contract/archiver-settings.ts';
import { archiverEnvironment } from '../../contract/environment.ts';
import { MAX_QUEUE_RETENTION_DAYS, type PipelineSettings } from '../../contract/settings.ts';
import { QUEUE_DEFAULTS, RECEIVER_ENTRY } from '../defaults.ts';
import { buildLambdaFunction } from './lambda-function.ts';

/** The `archive` prop: `false` builds no archive. */
export type ArchiveProp = false | ArchiveOptions;

export interface ArchiveOptions {
  /**
   * Days an archived delivery is kept (the bucket's lifecycle expiry), at least 1.
   * @default DEFAULT_ARCHIVE_RETENTION_DAYS (30)
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { archive: { retentionDays: 7 } });
   * ```
   */
  readonly retentionDays?: number;
}

/** The archiver next to the receiver, in whatever form (`.ts` in the repository, `.js` in the package). */
export const ARCHIVER_ENTRY = path.join(
  path.dirname(RECEIVER_ENTRY),
  `archiver${path.extname(RECEIVER_ENTRY)}`,
);

export const ARCHIVER_MEMORY_MB = 512;
/** Lambda's smallest `maxConcurrency`: a few large objects are what the archive wants. */
export const ARCHIVER_MAX_CONCURRENCY = 2;
/** Staged chunks wait at most this long for the rest of their body (S3's shortest expiry). */
const STAGED_CHUNK_EXPIRY_DAYS = 1;

export interface DeliveryArchiveOptions {
  readonly settings: PipelineSettings;
  readonly retentionDays: number;
  readonly logRetention: RetentionDays;
  readonly logLevel: LogLevel;
}

export interface DeliveryArchive {
  readonly bucket: Bucket;
  /** What the receiver copies every delivery to. */
  readonly queue: Queue;
  /** Archive messages the archiver failed on `ARCHIVER_MAX_RECEIVE_COUNT` times. */
  readonly deadLetterQueue: Queue;
  readonly archiverFunction: NodejsFunction;
  readonly retentionDays: number;
}

export function buildDeliveryArchive(pipeline: Construct, options: DeliveryArchiveOptions): DeliveryArchive {
  const scope = new Construct(pipeline, 'Archive');
  const { settings, retentionDays } = options;
  const bucket = new Bucket(scope, 'Bucket', {
    encryption: BucketEncryption.S3_MANAGED,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    enforceSSL: true,
    versioned: false,
    lifecycleRules: [
      { id: 'ExpireDeliveries', prefix: ARCHIVE_PREFIX, expiration: Duration.days(retentionDays) },
      {
        id: 'ExpireStagedChunks',
        prefix: ARCHIVE_STAGING_PREFIX,
        expiration: Duration.days(STAGED_CHUNK_EXPIRY_DAYS),
      },
    ],
  });
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions-S1',
    reason:
      'No server access logs: one role writes the archive (the archiver, PutObject on two prefixes) and only principals the account grants read it; S3 access logs are best-effort and would need a second bucket of their own holding object keys for as long. Who read the archive is audited with CloudTrail S3 data events where the account audits, as for its other buckets (docs/decisions.md, "The archive bucket: S3-managed keys, no versioning, no access logs, least grants").',
  });

  const deadLetterQueue = new Queue(scope, 'DeadLetterQueue', {
    ...QUEUE_DEFAULTS,
    retentionPeriod: Duration.days(MAX_QUEUE_RETENTION_DAYS),
    maxMessageSizeBytes: settings.maximumMessageSizeBytes,
  });
  const queue = new Queue(scope, 'Queue', {
    ...QUEUE_DEFAULTS,
    // An archiver outage of up to 14 days loses nothing.
    retentionPeriod: Duration.days(MAX_QUEUE_RETENTION_DAYS),
    visibilityTimeout: Duration.seconds(ARCHIVE_QUEUE_VISIBILITY_TIMEOUT_SECONDS),
    maxMessageSizeBytes: settings.maximumMessageSizeBytes,
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: ARCHIVER_MAX_RECEIVE_COUNT },
  });

  const { lambdaFunction, role } = buildLambdaFunction(scope, 'Archiver', {
    description: 'WhatsApp webhook archiver: writes batches of accepted deliveries to the archive bucket.',
    entry: ARCHIVER_ENTRY,
    memorySize: ARCHIVER_MEMORY_MB,
    timeoutSeconds: ARCHIVER_TIMEOUT_SECONDS,
    logRetention: options.logRetention,
    environment: archiverEnvironment({ logLevel: options.logLevel, bucketName: bucket.bucketName }),
  });
  // Write-only on the archive, and the staging prefix it joins large bodies in; no delete, no other prefix.
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'WriteArchiveObjects',
      effect: Effect.ALLOW,
      actions: ['s3:PutObject'],
      resources: [
        bucket.arnForObjects(`${ARCHIVE_PREFIX}*`),
        bucket.arnForObjects(`${ARCHIVE_STAGING_PREFIX}*`),
      ],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ReadStagedChunks',
      effect: Effect.ALLOW,
      actions: ['s3:GetObject'],
      resources: [bucket.arnForObjects(`${ARCHIVE_STAGING_PREFIX}*`)],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ListStagedChunks',
      effect: Effect.ALLOW,
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${ARCHIVE_STAGING_PREFIX}*`] } },
    }),
  );
  const bucketLogicalId = Stack.of(bucket).resolve((bucket.node.defaultChild as CfnBucket).logicalId);
  for (const prefix of [ARCHIVE_PREFIX, ARCHIVE_STAGING_PREFIX]) {
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketLogicalId}.Arn>/${prefix}*]`,
      reason:
        'Object keys are made at run time (hour partition, arrival instants, batch id), so the archiver may write under two fixed prefixes, deliveries/* and staging/*, and read and list staging/* only; nothing else of the bucket, and no delete.',
    });
  }
  // The mapping grants itself Receive/Delete/ChangeMessageVisibility/GetQueueAttributes on this queue only.
  lambdaFunction.addEventSource(
    new SqsEventSource(queue, {
      batchSize: ARCHIVER_BATCH_SIZE,
      maxBatchingWindow: Duration.seconds(ARCHIVER_BATCHING_WINDOW_SECONDS),
      maxConcurrency: ARCHIVER_MAX_CONCURRENCY,
      reportBatchItemFailures: true,
    }),
  );
  return { bucket, queue, deadLetterQueue, archiverFunction: lambdaFunction, retentionDays };
}
