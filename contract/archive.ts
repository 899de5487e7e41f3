/**
 * The delivery archive's format (docs/design.md, "Archive"): what the archiver writes to S3 and what `ops replay`
 * reads back. One object holds a batch of deliveries as gzip-compressed JSON Lines, one line per delivery,
 * sorted by arrival; objects are partitioned Hive-style by the arrival hour of their first delivery (UTC), and
 * their key carries the first and last arrival, so that a time range is read by listing a few hour prefixes
 * and skipping objects outside it without opening them.
 *
 *   deliveries/dt=2026-12-01/hour=14/20261201T140000123Z-20261201T140059876Z-<batch id>.jsonl.gz
 *
 * Plain TypeScript: no AWS SDK (the archiver and ops own their S3 adapters).
 */

/** The prefix every archived delivery object's key starts with. */
export const ARCHIVE_PREFIX = 'deliveries/';
/**
 * Where the archiver stages the chunks of a body larger than one queue message until one invocation holds them
 * all (docs/design.md, "Archive"); expired after a day, never read by `ops replay`.
 */
export const ARCHIVE_STAGING_PREFIX = 'staging/';
/** Bumped when a line's shape changes; a reader refuses versions it does not know. */
export const ARCHIVE_RECORD_VERSION = 1;
/** Days an archived object is kept (the bucket's lifecycle expiry) when the props say nothing. */
export const DEFAULT_ARCHIVE_RETENTION_DAYS = 30;

export type ArchiveVerdict =
  /** Signed and an envelope: routed to the subscribers named (possibly none: unrouted). */
  | 'accepted'
  /** Signed, but not JSON or not an envelope: kept in the quarantine queue too. */
  | 'quarantined';

/** One line of an archive object: one delivery as the receiver accepted it. */
export interface ArchiveRecord {
  readonly v: typeof ARCHIVE_RECORD_VERSION;
  /** The receiver's delivery id (API Gateway's request id). */
  readonly deliveryId: string;
  /** ISO-8601 time the receiver got the request (the `receivedAt` of its queue messages). */
  readonly arrivedAt: string;
  readonly verdict: ArchiveVerdict;
  /** The subscribers the delivery was routed to, in configuration order. */
  readonly subscribers: readonly string[];
  /** `utf8`: `body` is the body's text; `base64`: its bytes (a body that is not valid UTF-8). */
  readonly encoding: 'utf8' | 'base64';
  /** The body exactly as Meta sent it: its bytes, verbatim. */
  readonly body: string;
  /**
   * The receiver's proof of the body's bytes (functions/commons/provenance.ts); `ops replay` sends back in
   * only a body whose proof holds. Absent in lines written before proofs existed, or while the receiver could
   * not read its provenance key.
   */
  readonly proof?: string;
}

export class ArchiveFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveFormatError';
  }
}

/** `20261201T140000123Z`: an instant as it appears in object keys (sortable, no separators S3 would mind). */
export function compactInstant(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/[-:.]/g, '');
}

export function parseCompactInstant(text: string): number {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/.exec(text);
  if (match === null)
    throw new ArchiveFormatError(`"${text}" is not a compact instant (yyyyMMddTHHmmssSSSZ).`);
  const [, year, month, day, hour, minute, second, ms] = match;
  return Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}.${ms}Z`);
}

/** The hour partition an instant belongs to: `deliveries/dt=2026-12-01/hour=14/`. */
export function hourPrefix(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return `${ARCHIVE_PREFIX}dt=${iso.slice(0, 10)}/hour=${iso.slice(11, 13)}/`;
}

/** Every hour partition that may hold deliveries that arrived in [sinceMs, untilMs), in time order. */
export function hourPrefixesBetween(sinceMs: number, untilMs: number): string[] {
  const hourMs = 3_600_000;
  const prefixes: string[] = [];
  for (let hour = Math.floor(sinceMs / hourMs) * hourMs; hour < untilMs; hour += hourMs) {
    prefixes.push(hourPrefix(hour));
  }
  return prefixes;
}

export interface ArchiveObjectName {
  readonly key: string;
  /** Epoch ms of the first and the last delivery it holds. */
  readonly firstArrivalMs: number;
  readonly lastArrivalMs: number;
  readonly batchId: string;
}

/**
 * The key of an object holding deliveries that arrived from `firstArrivalMs` to `lastArrivalMs`. An object is
 * filed under its first delivery's hour; a batch may run past the hour, which `overlaps` accounts for by
 * reading the previous hour's partition too (see `hourPrefixesForRange`).
 */
export function archiveObjectKey(firstArrivalMs: number, lastArrivalMs: number, batchId: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(batchId)) {
    throw new ArchiveFormatError(`The batch id "${batchId}" must be letters, digits, "-" or "_".`);
  }
  if (lastArrivalMs < firstArrivalMs) throw new ArchiveFormatError('The last arrival precedes the first.');
  return `${hourPrefix(firstArrivalMs)}${compactInstant(firstArrivalMs)}-${compactInstant(lastArrivalMs)}-${batchId}.jsonl.gz`;
}

export function parseArchiveObjectKey(key: string): ArchiveObjectName {
  const match =
    /^deliveries\/dt=\d{4}-\d{2}-\d{2}\/hour=\d{2}\/(\d{8}T\d{9}Z)-(\d{8}T\d{9}Z)-([A-Za-z0-9_-]+)\.jsonl\.gz$/.exec(
      key,
    );
  if (match === null) throw new ArchiveFormatError(`"${key}" is not an archive object key.`);
  const [, first, last, batchId] = match as unknown as [string, string, string, string];
  return {
    key,
    firstArrivalMs: parseCompactInstant(first),
    lastArrivalMs: parseCompactInstant(last),
    batchId,
  };
}

/**
 * The hour partitions to list for a range: those of the range, and the hour before it, where an object filed
 * under its first delivery may still hold later ones (a batch spans at most `maxBatchSpanMs`).
 */
export function hourPrefixesForRange(sinceMs: number, untilMs: number, maxBatchSpanMs: number): string[] {
  return hourPrefixesBetween(sinceMs - maxBatchSpanMs, untilMs);
}

/** Whether an object may hold a delivery that arrived in [sinceMs, untilMs). */
export function overlaps(name: ArchiveObjectName, sinceMs: number, untilMs: number): boolean {
  return name.firstArrivalMs < untilMs && name.lastArrivalMs >= sinceMs;
}

/** The object's text before compression: one JSON line per record, records sorted by arrival then id. */
export function encodeArchiveLines(records: readonly ArchiveRecord[]): string {
  return [...records]
    .sort((a, b) => a.arrivedAt.localeCompare(b.arrivedAt) || a.deliveryId.localeCompare(b.deliveryId))
    .map((record) => `${JSON.stringify(record)}\n`)
    .join('');
}

export function decodeArchiveLines(text: string): ArchiveRecord[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line, index) => decodeRecord(line, index + 1));
}

function decodeRecord(line: string, lineNumber: number): ArchiveRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new ArchiveFormatError(`Line ${lineNumber} is not JSON.`);
  }
  const record = value as Partial<ArchiveRecord> | null;
  if (record === null || typeof record !== 'object')
    throw new ArchiveFormatError(`Line ${lineNumber} is not an object.`);
  if (record.v !== ARCHIVE_RECORD_VERSION) {
    throw new ArchiveFormatError(
      `Line ${lineNumber} has version ${String(record.v)}, not ${ARCHIVE_RECORD_VERSION}.`,
    );
  }
  const valid =
    typeof record.deliveryId === 'string' &&
    typeof record.arrivedAt === 'string' &&
    !Number.isNaN(Date.parse(record.arrivedAt)) &&
    (record.verdict === 'accepted' || record.verdict === 'quarantined') &&
    Array.isArray(record.subscribers) &&
    record.subscribers.every((name) => typeof name === 'string') &&
    (record.encoding === 'utf8' || record.encoding === 'base64') &&
    typeof record.body === 'string' &&
    (record.proof === undefined || typeof record.proof === 'string');
  if (!valid) throw new ArchiveFormatError(`Line ${lineNumber} is not an archive record.`);
  return record as ArchiveRecord;
}

/** The body's bytes, as Meta sent them. */
export function archivedBodyBytes(record: ArchiveRecord): Uint8Array {
  return record.encoding === 'utf8'
    ? new TextEncoder().encode(record.body)
    : Buffer.from(record.body, 'base64');
}
