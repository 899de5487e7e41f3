/**
 * The archive lane on the emulators (the global setup's fauxqs, SQS and S3): the receiver's SqsArchiveQueue
 * sends copies to a real queue, the messages are received as Lambda's event source would hand them over, and
 * the real archiver handler writes them to the bucket through S3ArchiveStore; chunks of a large body split
 * over two invocations are staged in the bucket and joined by the second. Bodies go as text or base64, and a
 * message of a version before text (base64, no `contentEncoding`) is archived as well.
 */
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toLambdaRecord } from '../../../cli/local/lambda-sqs-batch.ts';
import { type ArchiveRecord, archivedBodyBytes, decodeArchiveLines } from '../../../contract/archive.ts';
import { ENV } from '../../../contract/environment.ts';
import { createArchiverHandler } from '../../../functions/archiver.ts';
import type { ArchiveCopy } from '../../../functions/queue/delivery-queue-port.ts';
import { SqsArchiveQueue } from '../../../functions/queue/sqs-archive-queue.ts';
import { createBucket, createEmulatorS3Client } from '../../support/archive-objects.ts';
import { createSqsClient, sqsEndpoint, uniqueName } from '../../support/aws-clients.ts';

const MESSAGE_LIMIT = 4_096;
let sqs: SQSClient;
let s3: S3Client;
let bucketName: string;
let queueUrl: string;
let queueArn: string;
let archive: SqsArchiveQueue;

beforeAll(async () => {
  sqs = createSqsClient();
  s3 = createEmulatorS3Client(sqsEndpoint());
  bucketName = uniqueName('archiver').toLowerCase();
  await createBucket(s3, bucketName);
  const created = await sqs.send(
    new CreateQueueCommand({
      QueueName: uniqueName('archive'),
      Attributes: { MaximumMessageSize: String(MESSAGE_LIMIT) },
    }),
  );
  queueUrl = created.QueueUrl as string;
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  queueArn = Attributes?.QueueArn as string;
  archive = new SqsArchiveQueue({ sqs, archiveQueueUrl: queueUrl, maximumMessageSizeBytes: MESSAGE_LIMIT });
});

afterAll(() => {
  sqs.destroy();
  s3.destroy();
});

const meta = (deliveryId: string, receivedAt: string) => ({
  deliveryId,
  receivedAt,
  retryDeadline: Date.now() + 10_000,
});

async function receiveAll(count: number): Promise<SQSRecord[]> {
  const records: SQSRecord[] = [];
  while (records.length < count) {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        WaitTimeSeconds: 1,
      }),
    );
    records.push(...(Messages ?? []).map((message) => toLambdaRecord(message, queueArn)));
  }
  return records;
}

async function archived(): Promise<Map<string, ArchiveRecord[]>> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucketName, Prefix: 'deliveries/' }));
  const objects = new Map<string, ArchiveRecord[]>();
  for (const { Key } of listed.Contents ?? []) {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucketName, Key }));
    const bytes = (await object.Body?.transformToByteArray()) ?? new Uint8Array();
    objects.set(Key as string, decodeArchiveLines(gunzipSync(bytes).toString('utf8')));
  }
  return objects;
}

describe('the archive lane on the emulators', () => {
  it('writes what the receiver copied, joining a large body whose chunks came in two invocations', async () => {
    const handler = createArchiverHandler({ [ENV.archiveBucketName]: bucketName }, () => s3);
    const accepted: ArchiveCopy = { verdict: 'accepted', subscribers: ['bot', 'crm'] };
    const small = Buffer.from('{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[]}]}');
    const large = Buffer.from(`{"object":"whatsapp_business_account","text":"${'é'.repeat(6_000)}"}`);
    await archive.archive(small, accepted, meta('small', '2026-12-01T14:59:59.500Z'));
    const { messages } = await archive.archive(large, accepted, meta('large', '2026-12-01T15:00:00.250Z'));
    expect(messages).toBeGreaterThan(2);
    const records = await receiveAll(1 + messages);
    const isChunk = (record: SQSRecord) => record.messageAttributes.archiveId !== undefined;
    const chunks = records.filter(isChunk);
    const first: SQSEvent = {
      Records: [...records.filter((record) => !isChunk(record)), ...chunks.slice(0, 1)],
    };
    const second: SQSEvent = { Records: chunks.slice(1) };

    expect(await handler(first)).toEqual({ batchItemFailures: [] });
    const afterFirst = await archived();
    expect([...afterFirst.values()].flat().map((record) => record.deliveryId)).toEqual(['small']);
    expect(await handler(second)).toEqual({ batchItemFailures: [] });

    const objects = await archived();
    expect([...objects.keys()].map((key) => key.split('/').slice(1, 3).join('/'))).toEqual([
      'dt=2026-12-01/hour=14',
      'dt=2026-12-01/hour=15',
    ]);
    const all = [...objects.values()].flat();
    const byId = new Map(all.map((record) => [record.deliveryId, record]));
    expect(Buffer.from(archivedBodyBytes(byId.get('small') as ArchiveRecord)).equals(small)).toBe(true);
    expect(Buffer.from(archivedBodyBytes(byId.get('large') as ArchiveRecord)).equals(large)).toBe(true);
    expect(byId.get('large')?.subscribers).toEqual(['bot', 'crm']);
    const staged = await s3.send(new ListObjectsV2Command({ Bucket: bucketName, Prefix: 'staging/' }));
    expect(staged.KeyCount).toBe(messages);
  });

  it('keeps text, base64 and a previous version’s base64, whole and chunked, byte for byte', async () => {
    const handler = createArchiverHandler({ [ENV.archiveBucketName]: bucketName }, () => s3);
    const copy: ArchiveCopy = { verdict: 'quarantined', subscribers: [] };
    const at = '2026-12-02T09:00:00.000Z';
    const emoji = `{"text":"${'olá 你好 👋🏽 '.repeat(400)}"}`;
    const control = Buffer.from(`{"text":"${'a\u0001b'.repeat(2_000)}"}`, 'utf8');
    const notUtf8 = Buffer.from([0x7b, 0xff, 0xc0, 0x7d]);
    const previous = Buffer.from('{"object":"whatsapp_business_account","entry":[]}', 'utf8');
    const sent = [
      await archive.archive(emoji, copy, meta('emoji', at)),
      await archive.archive(control, copy, meta('control', at)),
      await archive.archive(notUtf8, copy, meta('not utf8', at)),
    ];
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: previous.toString('base64'),
        MessageAttributes: {
          receivedAt: { DataType: 'String', StringValue: at },
          deliveryId: { DataType: 'String', StringValue: 'previous' },
          verdict: { DataType: 'String', StringValue: 'accepted' },
          subscribers: { DataType: 'String', StringValue: '["bot"]' },
        },
      }),
    );
    expect(sent.map(({ messages }) => messages > 1)).toEqual([true, true, false]);
    const records = await receiveAll(sent.reduce((sum, { messages }) => sum + messages, 1));
    const encodings = new Map(
      records.map((record) => [
        record.messageAttributes.deliveryId?.stringValue,
        record.messageAttributes.contentEncoding?.stringValue,
      ]),
    );
    expect(Object.fromEntries(encodings)).toEqual({
      emoji: 'utf8',
      control: 'base64',
      'not utf8': 'base64',
      previous: undefined,
    });

    expect(await handler({ Records: records })).toEqual({ batchItemFailures: [] });
    const kept = new Map(
      [...(await archived()).values()]
        .flat()
        .filter((record) => record.arrivedAt === at)
        .map((record) => [record.deliveryId, record]),
    );
    const expected: [string, Buffer, ArchiveRecord['encoding']][] = [
      ['emoji', Buffer.from(emoji, 'utf8'), 'utf8'],
      ['control', control, 'utf8'],
      ['not utf8', notUtf8, 'base64'],
      ['previous', previous, 'utf8'],
    ];
    for (const [deliveryId, bytes, encoding] of expected) {
      const record = kept.get(deliveryId) as ArchiveRecord;
      expect(Buffer.from(archivedBodyBytes(record)).equals(bytes), deliveryId).toBe(true);
      expect(record.encoding, deliveryId).toBe(encoding);
    }
  });

  it('reports the messages it could not write, for redelivery', async () => {
    const handler = createArchiverHandler({ [ENV.archiveBucketName]: 'no-such-bucket' }, () => s3);
    await archive.archive(
      Buffer.from('{}'),
      { verdict: 'accepted', subscribers: [] },
      meta('x', new Date().toISOString()),
    );
    const [record] = await receiveAll(1);
    expect(await handler({ Records: [record as SQSRecord] })).toEqual({
      batchItemFailures: [{ itemIdentifier: record?.messageId }],
    });
  });
});
