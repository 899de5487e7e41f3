/**
 * The archive reader of `ops replay` against fauxqs's S3 (the global setup's emulator): objects written in the
 * archiver's format, read back by time range in arrival order across overlapping objects and hour partitions,
 * from a cursor, and a foreign key or a bad object.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hourPrefix } from '../../../../contract/archive.ts';
import {
  acceptedRecord,
  createBucket,
  createEmulatorS3Client,
  writeArchiveObjectForTest,
} from '../../../../test/support/archive-objects.ts';
import { sqsEndpoint, uniqueName } from '../../../../test/support/aws-clients.ts';
import { ArchiveReader } from '../../../ops/adapters/archive-reader.ts';

const at = (iso: string) => Date.parse(iso);
let s3: S3Client;
let bucketName: string;
let reader: ArchiveReader;

async function collect(records: AsyncIterable<{ deliveryId: string }>): Promise<string[]> {
  const ids: string[] = [];
  for await (const record of records) ids.push(record.deliveryId);
  return ids;
}

beforeAll(async () => {
  s3 = createEmulatorS3Client(sqsEndpoint());
  bucketName = uniqueName('archive').toLowerCase();
  await createBucket(s3, bucketName);
  reader = new ArchiveReader({ s3, bucketName });
  const body = '{"object":"whatsapp_business_account","entry":[]}';
  // Two batches overlapping in time (two archiver invocations at once), one begun at 13:59 running past the
  // hour, one the next hour, and one outside every range read below.
  await writeArchiveObjectForTest(
    s3,
    bucketName,
    [
      acceptedRecord('a1', at('2026-12-01T14:00:01Z'), body),
      acceptedRecord('a3', at('2026-12-01T14:00:03Z'), body),
      acceptedRecord('a5', at('2026-12-01T14:00:05Z'), body),
    ],
    'batch-a',
  );
  await writeArchiveObjectForTest(
    s3,
    bucketName,
    [
      acceptedRecord('b2', at('2026-12-01T14:00:02Z'), body),
      acceptedRecord('b4', at('2026-12-01T14:00:04Z'), body),
    ],
    'batch-b',
  );
  await writeArchiveObjectForTest(
    s3,
    bucketName,
    [
      acceptedRecord('c0', at('2026-12-01T13:59:59Z'), body),
      acceptedRecord('c6', at('2026-12-01T14:00:06Z'), body),
    ],
    'batch-c',
  );
  await writeArchiveObjectForTest(
    s3,
    bucketName,
    [acceptedRecord('d1', at('2026-12-01T15:10:00Z'), body)],
    'd',
  );
  await writeArchiveObjectForTest(
    s3,
    bucketName,
    [acceptedRecord('e1', at('2026-12-01T18:00:00Z'), body)],
    'e',
  );
});

afterAll(() => s3?.destroy());

describe('ArchiveReader on fauxqs S3', () => {
  it('yields the range in arrival order across overlapping objects, the previous hour’s batch included', async () => {
    expect(await collect(reader.records(at('2026-12-01T14:00:00Z'), at('2026-12-01T16:00:00Z')))).toEqual([
      'a1',
      'b2',
      'a3',
      'b4',
      'a5',
      'c6',
      'd1',
    ]);
  });

  it('keeps since inclusive and until exclusive', async () => {
    expect(await collect(reader.records(at('2026-12-01T14:00:02Z'), at('2026-12-01T14:00:05Z')))).toEqual([
      'b2',
      'a3',
      'b4',
    ]);
  });

  it('lists only the objects that overlap the range, by first arrival', async () => {
    const objects = await reader.objects(at('2026-12-01T14:00:05Z'), at('2026-12-01T15:00:00Z'));
    expect(objects.map((name) => name.batchId)).toEqual(['batch-c', 'batch-a']);
  });

  it('continues after a cursor', async () => {
    const after = { arrivedAt: new Date(at('2026-12-01T14:00:03Z')).toISOString(), deliveryId: 'a3' };
    expect(
      await collect(reader.records(at('2026-12-01T14:00:00Z'), at('2026-12-01T15:00:00Z'), { after })),
    ).toEqual(['b4', 'a5', 'c6']);
  });

  it('skips keys outside the format, and names an object it cannot read', async () => {
    const prefix = hourPrefix(at('2026-12-01T20:00:00Z'));
    await s3.send(new PutObjectCommand({ Bucket: bucketName, Key: `${prefix}notes.txt`, Body: 'hello' }));
    expect(await collect(reader.records(at('2026-12-01T20:00:00Z'), at('2026-12-01T21:00:00Z')))).toEqual([]);

    const broken = `${prefix}20261201T200000000Z-20261201T200001000Z-broken.jsonl.gz`;
    await s3.send(new PutObjectCommand({ Bucket: bucketName, Key: broken, Body: 'not gzip' }));
    await expect(
      collect(reader.records(at('2026-12-01T20:00:00Z'), at('2026-12-01T21:00:00Z'))),
    ).rejects.toThrow(`The archive object ${broken} cannot be read`);
  });
});
