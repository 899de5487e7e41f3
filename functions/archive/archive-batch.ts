/**
 * The archiver's whole job, as a plain function (docs/design.md, "Archive"): one batch of the archive queue's
 * messages becomes one gzip JSON Lines object per arrival hour (contract/archive.ts), each sorted by arrival.
 *
 * - **Encodings.** A body came as its text or as base64 (archive-pieces.ts); a record keeps the text of any
 *   body whose bytes are UTF-8, however it came.
 * - **Chunks.** A body larger than one queue message came in chunks. Those that are all in the batch are joined
 *   at once. The others are staged (`staging/<archiveId>/<chunk>`) and the staging prefix listed: the
 *   invocation that finds every chunk there joins them. Each invocation lists after its own writes, so the
 *   last to write sees them all; two may both see them and archive the delivery twice, which replay's claims
 *   absorb.
 * - **Object keys** carry a batch id derived from the SQS message ids of the object's deliveries: a batch
 *   that comes back whole (a lost answer, a crash after the PUT) overwrites its own objects instead of adding
 *   copies. An object never spans two hours, so it holds exactly the deliveries of its partition.
 * - **Failures** are per object: the messages of an object that could not be written, of chunks that could not
 *   be staged, and messages that are not ours are returned for redelivery (and reach the DLQ in the end).
 *
 * Logs keys, counts and sizes, never a body.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import {
  ARCHIVE_RECORD_VERSION,
  ARCHIVE_STAGING_PREFIX,
  type ArchiveRecord,
  archiveObjectKey,
  encodeArchiveLines,
  hourPrefix,
} from '../../contract/archive.ts';
import { mapWithConcurrency } from '../commons/bounded-concurrency.ts';
import { type ArchivePiece, type ArchiveQueueRecord, readArchivePiece } from './archive-pieces.ts';
import type { ArchiveStore } from './archive-store.ts';

const gzipAsync = promisify(gzip);

/** Objects (or staged chunks) written at once. */
const WRITES_IN_FLIGHT = 8;
/** Hex characters of the SHA-256 kept as the batch id: 80 bits. */
const BATCH_ID_LENGTH = 20;

export interface ArchiverLogger {
  info(message: string, fields: Record<string, unknown>): void;
  warn(message: string, fields: Record<string, unknown>): void;
  error(message: string, fields: Record<string, unknown>): void;
}

export interface ArchiveBatchDependencies {
  readonly store: ArchiveStore;
  readonly logger: ArchiverLogger;
}

export interface WrittenObject {
  readonly key: string;
  readonly deliveries: number;
  /** Compressed bytes. */
  readonly bytes: number;
}

export interface ArchiveBatchResult {
  /** The messages to leave in the queue for redelivery. */
  readonly failedMessageIds: readonly string[];
  readonly objects: readonly WrittenObject[];
  /** Chunks staged whose delivery another invocation will join. */
  readonly stagedChunks: number;
}

/** One delivery ready for its object, with the queue messages it came from. */
interface ArchivedDelivery {
  readonly record: ArchiveRecord;
  readonly arrivedAtMs: number;
  readonly messageIds: readonly string[];
}

export async function archiveBatch(
  records: readonly ArchiveQueueRecord[],
  { store, logger }: ArchiveBatchDependencies,
): Promise<ArchiveBatchResult> {
  const failed: string[] = [];
  const whole: ArchivedDelivery[] = [];
  const chunked = new Map<string, ArchivePiece[]>();
  for (const record of records) {
    const reading = readArchivePiece(record);
    if (!reading.ok) {
      logger.error('Archive message not ours: left for the DLQ', {
        messageId: record.messageId,
        reason: reading.reason,
      });
      failed.push(record.messageId);
      continue;
    }
    const { piece } = reading;
    if (piece.chunk === undefined) {
      whole.push(delivery(piece, piece.body, [piece.messageId]));
      continue;
    }
    const pieces = chunked.get(piece.chunk.archiveId) ?? [];
    chunked.set(piece.chunk.archiveId, [...pieces, piece]);
  }

  let stagedChunks = 0;
  const joined = await mapWithConcurrency([...chunked.values()], WRITES_IN_FLIGHT, async (pieces) => {
    try {
      const outcome = await joinChunks(pieces, store);
      if (outcome === undefined) stagedChunks += pieces.length;
      return outcome;
    } catch (error) {
      logger.error('Chunks not staged: left for redelivery', {
        archiveId: pieces[0]?.chunk?.archiveId,
        chunks: pieces.length,
        problem: errorName(error),
      });
      failed.push(...pieces.map(({ messageId }) => messageId));
      return undefined;
    }
  });
  const deliveries = [...whole, ...joined.filter((entry) => entry !== undefined)];

  const byHour = new Map<string, ArchivedDelivery[]>();
  for (const entry of deliveries) {
    const hour = hourPrefix(entry.arrivedAtMs);
    byHour.set(hour, [...(byHour.get(hour) ?? []), entry]);
  }
  const written = await mapWithConcurrency([...byHour.values()], WRITES_IN_FLIGHT, async (group) => {
    const messageIds = group.flatMap((entry) => entry.messageIds);
    const arrivals = group.map((entry) => entry.arrivedAtMs);
    const key = archiveObjectKey(Math.min(...arrivals), Math.max(...arrivals), batchIdOf(messageIds));
    try {
      const body = await gzipAsync(encodeArchiveLines(group.map((entry) => entry.record)));
      await store.put(key, body);
      return { key, deliveries: group.length, bytes: body.byteLength };
    } catch (error) {
      logger.error('Archive object not written: its messages are left for redelivery', {
        key,
        deliveries: group.length,
        problem: errorName(error),
      });
      failed.push(...messageIds);
      return undefined;
    }
  });
  const objects = written.filter((entry) => entry !== undefined);
  for (const object of objects) logger.info('Archive object written', { ...object });
  logger.info('Archive batch done', {
    messages: records.length,
    deliveries: objects.reduce((sum, object) => sum + object.deliveries, 0),
    objects: objects.length,
    stagedChunks,
    failed: failed.length,
  });
  return { failedMessageIds: failed, objects, stagedChunks };
}

/**
 * The delivery of a body's chunks, or `undefined` when its other chunks are elsewhere: then this batch's are
 * staged, and the invocation that stages the last of them joins them.
 */
async function joinChunks(
  pieces: readonly ArchivePiece[],
  store: ArchiveStore,
): Promise<ArchivedDelivery | undefined> {
  const first = pieces[0] as ArchivePiece & { chunk: NonNullable<ArchivePiece['chunk']> };
  const { archiveId, count } = first.chunk;
  const slices = new Map<number, string>();
  for (const piece of pieces) slices.set(piece.chunk?.index ?? 0, piece.body);
  const messageIds = pieces.map(({ messageId }) => messageId);
  if (slices.size < count) {
    // Staged as the UTF-8 of the slice: a text chunk is whole characters, a base64 one ASCII (as versions
    // before text staged it). A body's chunks share its encoding, so the staged ones are read in this one's.
    const prefix = `${ARCHIVE_STAGING_PREFIX}${archiveId}/`;
    for (const [index, slice] of slices) await store.put(`${prefix}${index}`, Buffer.from(slice, 'utf8'));
    const staged = new Set(await store.list(prefix));
    const missing = Array.from({ length: count }, (_, i) => i + 1).filter((index) => !slices.has(index));
    if (!missing.every((index) => staged.has(`${prefix}${index}`))) return undefined;
    for (const index of missing)
      slices.set(index, Buffer.from(await store.get(`${prefix}${index}`)).toString('utf8'));
  }
  const body = Array.from({ length: count }, (_, i) => slices.get(i + 1) ?? '').join('');
  return delivery(first, body, messageIds);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The record of a delivery: its text when its bytes are UTF-8 (a leading BOM kept), else their base64. A body
 * that came as text is that text: the receiver sent it so only when its bytes are UTF-8.
 */
function delivery(piece: ArchivePiece, body: string, messageIds: readonly string[]): ArchivedDelivery {
  const kept = piece.encoding === 'utf8' ? { encoding: 'utf8' as const, body } : keptBytes(body);
  const record: ArchiveRecord = {
    v: ARCHIVE_RECORD_VERSION,
    deliveryId: piece.deliveryId,
    arrivedAt: new Date(piece.arrivedAtMs).toISOString(),
    verdict: piece.verdict,
    subscribers: piece.subscribers,
    ...kept,
    proof: piece.proof,
  };
  return { record, arrivedAtMs: piece.arrivedAtMs, messageIds };
}

/** The bytes of a body that came as base64, as the record keeps them. */
function keptBytes(base64: string): Pick<ArchiveRecord, 'encoding' | 'body'> {
  const bytes = Buffer.from(base64, 'base64');
  try {
    return { encoding: 'utf8', body: strictUtf8.decode(bytes) };
  } catch {
    return { encoding: 'base64', body: bytes.toString('base64') };
  }
}

/** The same messages give the same id, in any order: a redelivered batch overwrites its own object. */
function batchIdOf(messageIds: readonly string[]): string {
  return createHash('sha256')
    .update([...messageIds].sort().join('\n'))
    .digest('hex')
    .slice(0, BATCH_ID_LENGTH);
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'UnknownError';
}
