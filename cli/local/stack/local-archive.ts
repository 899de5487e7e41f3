/**
 * The delivery archive on the local stack (docs/design.md, "Archive"): the archive queue and its DLQ on the
 * SQS emulator, the bucket on the same emulator's S3 (fauxqs serves both on one endpoint), and the real
 * archiver handler driven by the local SQS event source as Lambda's would, with a one-second batching window
 * instead of a minute so that a delivery is archived while one watches. `list()` is `/local/archive`.
 */
import { gunzipSync } from 'node:zlib';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ARCHIVE_PREFIX, decodeArchiveLines } from 'whatsapp-webhook-dedup/contract/archive';
import {
  ARCHIVE_QUEUE_VISIBILITY_TIMEOUT_SECONDS,
  ARCHIVER_BATCH_SIZE,
  ARCHIVER_MAX_RECEIVE_COUNT,
  ARCHIVER_TIMEOUT_SECONDS,
} from 'whatsapp-webhook-dedup/contract/archiver-settings';
import { ENV } from 'whatsapp-webhook-dedup/contract/environment';
import type { PipelineSettings } from 'whatsapp-webhook-dedup/contract/settings';
import { createArchiverHandler } from 'whatsapp-webhook-dedup/functions/archiver';
import { createPipelineQueues, type PipelineQueues } from '../emulators/sqs.ts';
import { createSqsEventSource, type InvocationReport, type SqsEventSource } from '../sqs-event-source.ts';

export const LOCAL_ARCHIVE_BUCKET = 'whatsapp-webhook-archive';
const LOCAL_BATCHING_WINDOW_SECONDS = 1;

/** One object of `/local/archive`. */
export interface ArchiveObjectListing {
  readonly key: string;
  /** Compressed bytes. */
  readonly size: number;
  /** Deliveries (lines) it holds. */
  readonly deliveries: number;
}

export interface LocalArchive {
  readonly bucketName: string;
  readonly queues: PipelineQueues;
  readonly eventSource: SqsEventSource;
  /** Every archive object, in key order (time order). */
  list(): Promise<ArchiveObjectListing[]>;
  stop(): Promise<void>;
}

export interface LocalArchiveOptions {
  readonly sqs: SQSClient;
  /** The emulator's endpoint, for S3 too. */
  readonly endpoint: string;
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  readonly settings: PipelineSettings;
  readonly onInvocation?: (report: InvocationReport) => void;
  readonly log: (line: string) => void;
}

export async function startLocalArchive(options: LocalArchiveOptions): Promise<LocalArchive> {
  // Path-style: the emulator cannot tell a bucket from a virtual host name.
  const s3 = new S3Client({
    region: options.region,
    credentials: options.credentials,
    endpoint: options.endpoint,
    forcePathStyle: true,
  });
  await s3.send(new CreateBucketCommand({ Bucket: LOCAL_ARCHIVE_BUCKET }));
  const queues = await createPipelineQueues(
    options.sqs,
    {
      ...options.settings,
      visibilityTimeoutSeconds: ARCHIVE_QUEUE_VISIBILITY_TIMEOUT_SECONDS,
      maxReceiveCount: ARCHIVER_MAX_RECEIVE_COUNT,
    },
    { deliveryQueueName: 'whatsapp-webhook-archive', deadLetterQueueName: 'whatsapp-webhook-archive-dlq' },
  );
  const handler = createArchiverHandler({ [ENV.archiveBucketName]: LOCAL_ARCHIVE_BUCKET }, () => s3);
  const eventSource = createSqsEventSource({
    sqs: options.sqs,
    queueUrl: queues.queueUrl,
    handler,
    batchSize: ARCHIVER_BATCH_SIZE,
    maxBatchingWindowSeconds: LOCAL_BATCHING_WINDOW_SECONDS,
    functionTimeoutSeconds: ARCHIVER_TIMEOUT_SECONDS,
    pollers: 1,
    functionName: 'archiver',
    onInvocation: options.onInvocation,
    log: options.log,
  });
  await eventSource.start();
  return {
    bucketName: LOCAL_ARCHIVE_BUCKET,
    queues,
    eventSource,
    list: () => listArchive(s3, LOCAL_ARCHIVE_BUCKET),
    async stop() {
      await eventSource.stop();
      s3.destroy();
    },
  };
}

async function listArchive(s3: S3Client, bucket: string): Promise<ArchiveObjectListing[]> {
  const listed: { key: string; size: number }[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: ARCHIVE_PREFIX, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) {
      if (object.Key !== undefined) listed.push({ key: object.Key, size: object.Size ?? 0 });
    }
    token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return Promise.all(
    listed.map(async ({ key, size }) => {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const bytes = (await object.Body?.transformToByteArray()) ?? new Uint8Array();
      return { key, size, deliveries: decodeArchiveLines(gunzipSync(bytes).toString('utf8')).length };
    }),
  );
}
