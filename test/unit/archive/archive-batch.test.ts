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
  type OutgoingMessage,
  stringAttribute,
} from '../../../functions/queue/outgoing-message.ts';
import { archiveMessages } from '../../../functions/queue/sqs-archive-queue.ts';

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

/**
 * The archive queue's messages for one delivery, as `SqsArchiveQueue` sends them, or as versions before text
 * did (base64 always, no `contentEncoding`), which a rolling deploy leaves in the queue.
 */
function messagesOf(
  raw: Uint8Array | string,
  deliveryId: string,
  receivedAt: string,
  copy: ArchiveCopy = { verdict: 'accepted', subscribers: ['default'] },
  maximumMessageSizeBytes = 256 * 1024,
  sender: 'current' | 'before text' = 'current',
): ArchiveQueueRecord[] {
  const meta = { deliveryId, receivedAt, retryDeadline: 0 };
  let messages: OutgoingMessage[];
  if (sender === 'current') {
    messages = archiveMessages(raw, copy, meta, undefined, maximumMessageSizeBytes);
  } else {
    const attributes = {
      ...commonAttributes(meta),
      verdict: stringAttribute(copy.verdict),
      subscribers: stringAttribute(JSON.stringify(copy.subscribers)),
    };
    const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    messages = base64Messages(bytes, attributes, maximumMessageSizeBytes, ARCHIVE_CHUNK_ATTRIBUTES);
  }
  return messages.map((message) => ({
    messageId: `msg-${++nextMessage}`,
    body: message.body,
    messageAttributes: Object.fromEntries(
      Object.entries(message.attributes).map(([name, value]) => [name, { stringValue: value.StringValue }]),
    ),
  }));
}

const encodingsOf = (records: readonly ArchiveQueueRecord[]) =>
  new Set(records.map((record) => record.messageAttributes.contentEncoding?.stringValue));

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

  it('reassembles text, base64, and base64 from a version before text, whole and in chunks, byte for byte', async () => {
    const { store, deps } = setup();
    // Multibyte characters across every chunk's end: 2-, 3- and 4-byte ones, and a BOM.
    const emoji = `\ufeff${JSON.stringify({ text: 'olá 你好 👋🏽'.repeat(300) })}`;
    const control = JSON.stringify({ text: 'a\u0001b'.repeat(2000) }).replace(/\\u0001/g, '\u0001');
    const notUtf8 = Buffer.concat([Buffer.from(body(5)), Buffer.from([0xff, 0xc0])]);
    const deliveries: [string, Uint8Array | string, ArchiveQueueRecord[]][] = [
      ['text', emoji, messagesOf(emoji, 'text', '2026-12-01T14:00:01.000Z', undefined, 2_048)],
      ['text whole', body(6), messagesOf(body(6), 'text whole', '2026-12-01T14:00:02.000Z')],
      ['control', control, messagesOf(control, 'control', '2026-12-01T14:00:03.000Z', undefined, 2_048)],
      ['not utf8', notUtf8, messagesOf(notUtf8, 'not utf8', '2026-12-01T14:00:04.000Z')],
      [
        'old text',
        emoji,
        messagesOf(emoji, 'old text', '2026-12-01T14:00:05.000Z', undefined, 2_048, 'before text'),
      ],
      [
        'old bytes',
        notUtf8,
        messagesOf(notUtf8, 'old bytes', '2026-12-01T14:00:06.000Z', undefined, 256 * 1024, 'before text'),
      ],
    ];
    const [text, whole, withControl, bytes, oldText, oldBytes] = deliveries.map(([, , records]) => records);
    expect(
      [text, whole, withControl, bytes, oldText, oldBytes].map((records) => encodingsOf(records ?? [])),
    ).toEqual([
      new Set(['utf8']),
      new Set(['utf8']),
      new Set(['base64']),
      new Set(['base64']),
      new Set([undefined]),
      new Set([undefined]),
    ]);
    expect(text?.length).toBeGreaterThan(3);
    expect(withControl?.length).toBeGreaterThan(3);
    const all = deliveries.flatMap(([, , records]) => records);
    const result = await archiveBatch([...all].reverse(), deps);
    expect(result.failedMessageIds).toEqual([]);
    const archived = [...store.archived().values()].flat();
    expect(archived.map(({ deliveryId }) => deliveryId)).toEqual(deliveries.map(([id]) => id));
    for (const [id, raw] of deliveries) {
      const record = archived.find(({ deliveryId }) => deliveryId === id) as ArchiveRecord;
      const expected = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw);
      expect(Buffer.from(archivedBodyBytes(record)).equals(expected), id).toBe(true);
      expect(record.encoding, id).toBe(id.includes('bytes') || id === 'not utf8' ? 'base64' : 'utf8');
    }
  });

  it('stages text chunks spread over batches and joins them between characters', async () => {
    const { store, deps } = setup();
    const large = JSON.stringify({ text: '你好👋é'.repeat(400) });
    const records = messagesOf(large, 'big', '2026-12-01T14:00:00.000Z', undefined, 2_048);
    expect(encodingsOf(records)).toEqual(new Set(['utf8']));
    const half = Math.floor(records.length / 2);
    expect((await archiveBatch(records.slice(0, half), deps)).stagedChunks).toBe(half);
    expect((await archiveBatch(records.slice(half), deps)).failedMessageIds).toEqual([]);
    expect([...store.archived().values()].flat().map((record) => record.body)).toEqual([large]);
  });

  it('fails a message of an encoding it does not know, leaving it for the DLQ', async () => {
    const { store, deps, logs } = setup();
    const [message] = messagesOf(body(1), 'd1', '2026-12-01T14:00:00.000Z');
    const zstd = {
      ...(message as ArchiveQueueRecord),
      messageAttributes: { ...message?.messageAttributes, contentEncoding: { stringValue: 'zstd' } },
    };
    const result = await archiveBatch([zstd], deps);
    expect(result.failedMessageIds).toEqual([zstd.messageId]);
    expect(store.archived().size).toBe(0);
    expect(logs).toContainEqual(expect.objectContaining({ reason: 'unknown contentEncoding' }));
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
