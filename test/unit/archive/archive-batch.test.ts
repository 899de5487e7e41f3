/** The archiver over an in-memory bucket, fed with messages the receiver's own encoder writes. */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  type ArchiveRecord,
  archivedBodyBytes,
  decodeArchiveLines,
  parseArchiveObjectKey,
} from '../../../contract/archive.ts';
import { archiveBatch } from '../../../functions/archive/archive-batch.ts';
import type { ArchiveQueueRecord } from '../../../functions/archive/archive-pieces.ts';
import type { ArchiveStore } from '../../../functions/archive/archive-store.ts';
import { base64Messages } from '../../../functions/queue/base64-chunks.ts';
import type { ArchiveCopy } from '../../../functions/queue/delivery-queue-port.ts';
import {
  ARCHIVE_CHUNK_ATTRIBUTES,
  commonAttributes,
  stringAttribute,
} from '../../../functions/queue/outgoing-message.ts';

class MemoryStore implements ArchiveStore {
  readonly objects = new Map<string, Buffer>();
  failPutsUnder: string | undefined;
  async put(key: string, body: Uint8Array) {
    if (this.failPutsUnder !== undefined && key.startsWith(this.failPutsUnder)) throw new Error('SlowDown');
    this.objects.set(key, Buffer.from(body));
  }
  async list(prefix: string) {
    return [...this.objects.keys()].filter((key) => key.startsWith(prefix));
  }
  async get(key: string) {
    const body = this.objects.get(key);
    if (body === undefined) throw new Error('NoSuchKey');
    return body;
  }
  /** Objects by key in key order: concurrent writes finish in any order, the keys sort by hour. */
  archived(): Map<string, ArchiveRecord[]> {
    return new Map(
      [...this.objects]
        .filter(([key]) => key.startsWith('deliveries/'))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, body]) => [key, decodeArchiveLines(gunzipSync(body).toString('utf8'))]),
    );
  }
}

let nextMessage = 0;

/** The archive queue's messages for one delivery, as `SqsArchiveQueue` sends them. */
function messagesOf(
  raw: Uint8Array | string,
  deliveryId: string,
  receivedAt: string,
  copy: ArchiveCopy = { verdict: 'accepted', subscribers: ['default'] },
  maximumMessageSizeBytes = 256 * 1024,
): ArchiveQueueRecord[] {
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  const attributes = {
    ...commonAttributes({ deliveryId, receivedAt, retryDeadline: 0 }),
    verdict: stringAttribute(copy.verdict),
    subscribers: stringAttribute(JSON.stringify(copy.subscribers)),
  };
  return base64Messages(bytes, attributes, maximumMessageSizeBytes, ARCHIVE_CHUNK_ATTRIBUTES).map(
    (message) => ({
      messageId: `msg-${++nextMessage}`,
      body: message.body,
      messageAttributes: Object.fromEntries(
        Object.entries(message.attributes).map(([name, value]) => [name, { stringValue: value.StringValue }]),
      ),
    }),
  );
}

function setup() {
  const store = new MemoryStore();
  const logs: Record<string, unknown>[] = [];
  const log = (message: string, fields: Record<string, unknown>) => {
    logs.push({ message, ...fields });
  };
  return { store, logs, deps: { store, logger: { info: log, warn: log, error: log } } };
}

const SECRET_TEXT = 'my phone is +15551234567';
const body = (n: number) =>
  JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: String(n), text: SECRET_TEXT }] });

describe('archiveBatch', () => {
  it('writes one object per arrival hour, sorted by arrival, each body byte for byte', async () => {
    const { store, deps, logs } = setup();
    const notUtf8 = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const withBom = `\ufeff${body(9)}`;
    const records = [
      ...messagesOf(body(2), 'd2', '2026-12-01T14:59:59.000Z', {
        verdict: 'accepted',
        subscribers: ['bot', 'crm'],
      }),
      ...messagesOf(body(1), 'd1', '2026-12-01T14:00:00.500Z'),
      ...messagesOf(notUtf8, 'd3', '2026-12-01T15:00:00.000Z', { verdict: 'quarantined', subscribers: [] }),
      ...messagesOf(withBom, 'd4', '2026-12-01T15:10:00.000Z'),
    ];
    const result = await archiveBatch(records, deps);
    expect(result.failedMessageIds).toEqual([]);
    const archived = store.archived();
    expect([...archived.keys()].map((key) => parseArchiveObjectKey(key))).toEqual([
      expect.objectContaining({
        firstArrivalMs: Date.parse('2026-12-01T14:00:00.500Z'),
        lastArrivalMs: Date.parse('2026-12-01T14:59:59.000Z'),
      }),
      expect.objectContaining({
        firstArrivalMs: Date.parse('2026-12-01T15:00:00.000Z'),
        lastArrivalMs: Date.parse('2026-12-01T15:10:00.000Z'),
      }),
    ]);
    const [fourteen, fifteen] = [...archived.values()] as [ArchiveRecord[], ArchiveRecord[]];
    expect([...archived.keys()][0]).toMatch(/^deliveries\/dt=2026-12-01\/hour=14\//);
    expect(fourteen.map(({ deliveryId, subscribers }) => [deliveryId, subscribers])).toEqual([
      ['d1', ['default']],
      ['d2', ['bot', 'crm']],
    ]);
    expect(fourteen[0]).toEqual({
      v: 1,
      deliveryId: 'd1',
      arrivedAt: '2026-12-01T14:00:00.500Z',
      verdict: 'accepted',
      subscribers: ['default'],
      encoding: 'utf8',
      body: body(1),
    });
    expect(fifteen.map(({ encoding, verdict }) => [encoding, verdict])).toEqual([
      ['base64', 'quarantined'],
      ['utf8', 'accepted'],
    ]);
    expect(Buffer.from(archivedBodyBytes(fifteen[0] as ArchiveRecord)).equals(notUtf8)).toBe(true);
    expect(Buffer.from(archivedBodyBytes(fifteen[1] as ArchiveRecord)).equals(Buffer.from(withBom))).toBe(
      true,
    );
    expect(result.objects.map(({ deliveries }) => deliveries)).toEqual([2, 2]);
    expect(JSON.stringify(logs)).not.toContain('+1555');
  });

  it('gives the same messages the same key in any order, so that a redelivered batch overwrites itself', async () => {
    const { store, deps } = setup();
    const records = [
      ...messagesOf(body(1), 'd1', '2026-12-01T14:00:00.000Z'),
      ...messagesOf(body(2), 'd2', '2026-12-01T14:00:01.000Z'),
    ];
    await archiveBatch(records, deps);
    await archiveBatch([...records].reverse(), deps);
    expect(store.archived().size).toBe(1);
    await archiveBatch(records.slice(0, 1), deps);
    expect(store.archived().size).toBe(2);
  });

  it('joins the chunks of a large body found in one batch', async () => {
    const { store, deps } = setup();
    const large = body(7).repeat(200);
    const records = messagesOf(large, 'big', '2026-12-01T14:00:00.000Z', undefined, 2_048);
    expect(records.length).toBeGreaterThan(3);
    const result = await archiveBatch([...records].reverse(), deps);
    expect(result.failedMessageIds).toEqual([]);
    expect([...store.archived().values()].flat().map((record) => record.body)).toEqual([large]);
    expect([...store.objects.keys()].some((key) => key.startsWith('staging/'))).toBe(false);
  });

  it('stages chunks spread over batches and archives the body once the last of them arrives', async () => {
    const { store, deps } = setup();
    const large = body(8).repeat(200);
    const records = messagesOf(large, 'big', '2026-12-01T14:00:00.000Z', undefined, 2_048);
    const half = Math.floor(records.length / 2);
    const first = await archiveBatch(
      [...records.slice(0, half), ...messagesOf(body(1), 'small', '2026-12-01T14:00:01.000Z')],
      deps,
    );
    expect(first.failedMessageIds).toEqual([]);
    expect(first.stagedChunks).toBe(half);
    expect([...store.archived().values()].flat().map(({ deliveryId }) => deliveryId)).toEqual(['small']);
    const second = await archiveBatch(records.slice(half), deps);
    expect(second.failedMessageIds).toEqual([]);
    const big = [...store.archived().values()].flat().filter(({ deliveryId }) => deliveryId === 'big');
    expect(big.map((record) => record.body)).toEqual([large]);
  });

  it('leaves the messages of an object it could not write for redelivery, and writes the others', async () => {
    const { store, deps, logs } = setup();
    const fourteen = messagesOf(body(1), 'd1', '2026-12-01T14:00:00.000Z');
    const fifteen = messagesOf(body(2), 'd2', '2026-12-01T15:00:00.000Z');
    store.failPutsUnder = 'deliveries/dt=2026-12-01/hour=15/';
    const result = await archiveBatch([...fourteen, ...fifteen], deps);
    expect(result.failedMessageIds).toEqual(fifteen.map(({ messageId }) => messageId));
    expect(store.archived().size).toBe(1);
    expect(logs).toContainEqual(
      expect.objectContaining({ message: expect.stringContaining('not written'), deliveries: 1 }),
    );
  });

  it('fails a message that is not the archive queue format, naming it without its body', async () => {
    const { store, deps, logs } = setup();
    const [good] = messagesOf(body(1), 'd1', '2026-12-01T14:00:00.000Z');
    const foreign: ArchiveQueueRecord = { messageId: 'foreign', body: SECRET_TEXT, messageAttributes: {} };
    const result = await archiveBatch([good as ArchiveQueueRecord, foreign], deps);
    expect(result.failedMessageIds).toEqual(['foreign']);
    expect(store.archived().size).toBe(1);
    expect(logs).toContainEqual(expect.objectContaining({ messageId: 'foreign', reason: 'no receivedAt' }));
    expect(JSON.stringify(logs)).not.toContain('+1555');
  });
});
