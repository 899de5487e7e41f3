/** The archive bucket through the AWS SDK: the archiver's only S3 importer. */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ArchiveStore } from './archive-store.ts';

export class S3ArchiveStore implements ArchiveStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucketName: string,
  ) {}

  async put(key: string, body: Uint8Array): Promise<void> {
    // A `.jsonl.gz` file, not gzip content encoding: no client should unpack it on the way.
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucketName,
        Key: key,
        Body: body,
        ContentType: key.endsWith('.gz') ? 'application/gzip' : 'text/plain',
      }),
    );
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let continuationToken: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({
          Bucket: this.bucketName,
          Prefix: prefix,
          ContinuationToken: continuationToken,
        }),
      );
      for (const object of page.Contents ?? []) if (object.Key !== undefined) keys.push(object.Key);
      continuationToken = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (continuationToken !== undefined);
    return keys;
  }

  async get(key: string): Promise<Uint8Array> {
    const object = await this.s3.send(new GetObjectCommand({ Bucket: this.bucketName, Key: key }));
    if (object.Body === undefined) throw new Error(`GetObject ${key} returned no body.`);
    return object.Body.transformToByteArray();
  }
}
