/**
 * Archive objects written by a test, in the archiver's format (contract/archive.ts): gzip JSON Lines under
 * `archiveObjectKey`. For tests of `ops replay` that need an archive without running the archiver.
 */
import { gzipSync } from 'node:zlib';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  ARCHIVE_RECORD_VERSION,
  type ArchiveRecord,
  archiveObjectKey,
  encodeArchiveLines,
} from '../../contract/archive.ts';

/** An S3 client for fauxqs (path-style: no DNS for bucket subdomains needed). */
export function createEmulatorS3Client(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    forcePathStyle: true,
  });
}

export async function createBucket(s3: S3Client, bucketName: string): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: bucketName }));
}

/** An accepted delivery as the archiver records it. */
export function acceptedRecord(
  deliveryId: string,
  arrivedAtMs: number,
  body: string,
  subscribers: readonly string[] = ['default'],
): ArchiveRecord {
  return {
    v: ARCHIVE_RECORD_VERSION,
    deliveryId,
    arrivedAt: new Date(arrivedAtMs).toISOString(),
    verdict: 'accepted',
    subscribers,
    encoding: 'utf8',
    body,
  };
}

/** Writes one archive object holding `records` and returns its key. */
export async function writeArchiveObjectForTest(
  s3: S3Client,
  bucketName: string,
  records: readonly ArchiveRecord[],
  batchId: string,
): Promise<string> {
  const arrivals = records.map((record) => Date.parse(record.arrivedAt));
  const key = archiveObjectKey(Math.min(...arrivals), Math.max(...arrivals), batchId);
  await s3.send(
    new PutObjectCommand({
      Bucket: bucketName,
      Key: key,
      Body: gzipSync(encodeArchiveLines(records)),
      ContentType: 'application/x-ndjson',
    }),
  );
  return key;
}
