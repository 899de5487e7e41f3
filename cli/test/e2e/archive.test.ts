/**
 * The delivery archive on the local stack exactly as `npm start` runs it: signed deliveries become archive
 * objects on the emulator's S3 (contract/archive.ts), each body byte for byte, with its verdict and
 * subscribers; `/local/archive` lists them.
 */
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ArchiveRecord,
  archivedBodyBytes,
  decodeArchiveLines,
  parseArchiveObjectKey,
} from '../../../contract/archive.ts';
import { createEmulatorS3Client } from '../../../test/support/archive-objects.ts';
import { spawnTestStack } from '../../../test/support/test-local-stack.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import type { ArchiveObjectListing } from '../../local/stack/local-archive.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import type { SpawnedLocalStack } from '../../local/stack/spawn-local-stack.ts';
import {
  inboundMessagesWithIds,
  messagesBody,
  privateMessagesBody,
  wamidFactory,
} from '../../meta-traffic/webhook-bodies.ts';

const SECRET = 'e2e-archive-secret';
let stack: SpawnedLocalStack;
let client: LocalStackClient;

beforeAll(async () => {
  stack = await spawnTestStack({ env: { WHATSAPP_APP_SECRETS: SECRET } });
  client = new LocalStackClient(stack.url);
});

afterAll(async () => {
  await stack?.stop();
});

async function listing(): Promise<ArchiveObjectListing[]> {
  const response = await fetch(`${stack.url}/local/archive`);
  expect(response.status).toBe(200);
  return (await response.json()) as ArchiveObjectListing[];
}

describe('npm start, its delivery archive', () => {
  it('archives signed deliveries as the bytes Meta sent, with their verdict, and lists them', async () => {
    const wamid = wamidFactory('archive');
    const small = privateMessagesBody(2, { idPrefix: wamid(0), textRepeat: 3 });
    // Larger than one queue message once in base64 (1 MiB): the archiver joins its chunks.
    const large = messagesBody(inboundMessagesWithIds([wamid(1), wamid(2), wamid(3)], 300_000));
    const notJson = Buffer.from([0x7b, 0xff, 0xfe, 0x22, 0x7d]);
    for (const body of [small, large, notJson]) {
      expect((await client.postWebhook(body, SECRET)).status).toBe(200);
    }
    expect((await client.postWebhook(small, 'not-the-secret')).status).toBe(401);

    let objects: ArchiveObjectListing[] = [];
    await waitFor(
      async () => {
        objects = await listing();
        return objects.reduce((sum, object) => sum + object.deliveries, 0) >= 3;
      },
      60_000,
      () => `archive objects: ${JSON.stringify(objects)}`,
    );
    for (const object of objects) {
      expect(object.size).toBeGreaterThan(0);
      expect(() => parseArchiveObjectKey(object.key)).not.toThrow();
    }

    const info = (await client.get<{ archive: { bucketName: string; s3Endpoint: string } }>('/local/info'))
      .body;
    const s3 = createEmulatorS3Client(info.archive.s3Endpoint);
    const records: ArchiveRecord[] = [];
    for (const { key } of objects) {
      const object = await s3.send(new GetObjectCommand({ Bucket: info.archive.bucketName, Key: key }));
      const bytes = await object.Body?.transformToByteArray();
      records.push(...decodeArchiveLines(gunzipSync(bytes ?? new Uint8Array()).toString('utf8')));
    }
    s3.destroy();
    const archived = records.map((record) => ({
      body: Buffer.from(archivedBodyBytes(record)).toString('base64'),
      verdict: record.verdict,
      subscribers: record.subscribers,
    }));
    expect(archived).toHaveLength(3);
    expect(archived).toEqual(
      expect.arrayContaining([
        { body: Buffer.from(small).toString('base64'), verdict: 'accepted', subscribers: ['default'] },
        { body: Buffer.from(large).toString('base64'), verdict: 'accepted', subscribers: ['default'] },
        { body: notJson.toString('base64'), verdict: 'quarantined', subscribers: [] },
      ]),
    );
    expect(new Set(records.map((record) => record.deliveryId)).size).toBe(3);
    expect(records.find((record) => record.verdict === 'quarantined')?.encoding).toBe('base64');
  }, 120_000);
});
