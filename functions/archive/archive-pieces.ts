/**
 * Reads the archive queue's messages (written by `SqsArchiveQueue`) back: each is a whole delivery or one
 * chunk of one, as text (`contentEncoding=utf8`) or base64 (`base64`, or no `contentEncoding`: a message of a
 * version before text, which a rolling deploy leaves in the queue), with its arrival, delivery id, verdict and
 * subscribers. A message whose attributes are not ours yields a reason instead, never its content.
 */
import type { ArchiveRecord, ArchiveVerdict } from '../../contract/archive.ts';
import { ARCHIVE_CHUNK_ATTRIBUTES, type ArchiveAttributeName } from '../queue/outgoing-message.ts';

/** The part of Lambda's `SQSRecord` the archiver reads. */
export interface ArchiveQueueRecord {
  readonly messageId: string;
  readonly body: string;
  readonly messageAttributes: Readonly<Record<string, { readonly stringValue?: string | undefined }>>;
}

export interface ArchivePiece {
  readonly messageId: string;
  readonly deliveryId: string;
  /** Epoch ms. */
  readonly arrivedAtMs: number;
  readonly verdict: ArchiveVerdict;
  readonly subscribers: readonly string[];
  /** How `body` holds the delivery's bytes: their text, or their base64 (as an archive record's). */
  readonly encoding: ArchiveRecord['encoding'];
  /** The body in `encoding`, or this chunk's slice of it. */
  readonly body: string;
  /** The receiver's proof of the whole body's bytes, on every chunk. */
  readonly proof?: string;
  /** Present on a chunk: the id its chunks share, its 1-based index and their count. */
  readonly chunk?: { readonly archiveId: string; readonly index: number; readonly count: number };
}

export type PieceReading =
  | { readonly ok: true; readonly piece: ArchivePiece }
  | { readonly ok: false; readonly reason: string };

const ARCHIVE_ID = /^[A-Za-z0-9-]{1,64}$/;

export function readArchivePiece(record: ArchiveQueueRecord): PieceReading {
  const attribute = (name: ArchiveAttributeName) => record.messageAttributes[name]?.stringValue;
  const arrivedAtMs = Date.parse(attribute('receivedAt') ?? '');
  if (Number.isNaN(arrivedAtMs)) return { ok: false, reason: 'no receivedAt' };
  const deliveryId = attribute('deliveryId');
  if (deliveryId === undefined || deliveryId === '') return { ok: false, reason: 'no deliveryId' };
  const verdict = attribute('verdict');
  if (verdict !== 'accepted' && verdict !== 'quarantined') return { ok: false, reason: 'no verdict' };
  const subscribers = parseSubscribers(attribute('subscribers'));
  if (subscribers === undefined) return { ok: false, reason: 'no subscribers list' };
  const encoding = attribute('contentEncoding') ?? 'base64';
  if (encoding !== 'utf8' && encoding !== 'base64') return { ok: false, reason: 'unknown contentEncoding' };
  const piece: ArchivePiece = {
    messageId: record.messageId,
    deliveryId,
    arrivedAtMs,
    verdict,
    subscribers,
    encoding,
    body: record.body,
    proof: attribute('proof'),
  };
  const archiveId = attribute(ARCHIVE_CHUNK_ATTRIBUTES.id);
  if (archiveId === undefined) return { ok: true, piece };
  const index = Number(attribute(ARCHIVE_CHUNK_ATTRIBUTES.chunk));
  const count = Number(attribute(ARCHIVE_CHUNK_ATTRIBUTES.chunks));
  if (
    !ARCHIVE_ID.test(archiveId) ||
    !Number.isInteger(index) ||
    !Number.isInteger(count) ||
    index < 1 ||
    index > count
  ) {
    return { ok: false, reason: 'bad chunk attributes' };
  }
  return { ok: true, piece: { ...piece, chunk: { archiveId, index, count } } };
}

function parseSubscribers(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every((name) => typeof name === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}
