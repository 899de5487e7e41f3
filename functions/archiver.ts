/**
 * The archiver Lambda (SQS event source on the archive queue, `ReportBatchItemFailures`): runs `archiveBatch`
 * over the batch and returns the messages to redeliver. The bucket comes from the environment.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { S3Client } from '@aws-sdk/client-s3';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { ENV, getStringFromEnv } from '../contract/environment.ts';
import { SERVICE_NAME } from '../contract/metric-names.ts';
import { archiveBatch } from './archive/archive-batch.ts';
import { S3ArchiveStore } from './archive/s3-archive-store.ts';
import { sdkClientConfig } from './commons/sdk-client-config.ts';

const logger = new Logger({ serviceName: SERVICE_NAME });

/**
 * A handler with its own client, built on the first invocation; the local stack passes its own S3 client (the
 * emulator wants path-style requests).
 */
export function createArchiverHandler(
  env: NodeJS.ProcessEnv = process.env,
  s3: () => S3Client = () => new S3Client(sdkClientConfig('archiverS3')),
) {
  let store: S3ArchiveStore | undefined;
  return async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    if (context !== undefined) logger.addContext(context);
    store ??= new S3ArchiveStore(s3(), getStringFromEnv(ENV.archiveBucketName, env));
    const { failedMessageIds } = await archiveBatch(event.Records, { store, logger });
    return { batchItemFailures: failedMessageIds.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

export const handler = createArchiverHandler();
