/**
 * Reads the delivery archive (contract/archive.ts) back for `ops replay`: lists the hour partitions of a time
 * range (ListObjectsV2), skips the objects whose key says they lie outside it, and yields the deliveries that
 * arrived in [since, until) in arrival order (then delivery id) across objects, which may overlap in time when
 * several archiver batches ran at once. Only the objects that can hold the next record are open at a time.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import {
  GetBucketLifecycleConfigurationCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  ARCHIVE_PREFIX,
  ArchiveFormatError,
  type ArchiveObjectName,
  type ArchiveRecord,
  decodeArchiveLines,
  hourPrefixesForRange,
  overlaps,
  parseArchiveObjectKey,
} from 'whatsapp-webhook-dedup/contract/archive';
import { mapWithConcurrency } from 'whatsapp-webhook-dedup/functions/commons/bounded-concurrency';

const gunzipAsync = promisify(gunzip);

/**
 * How far back from a range's start an object filed under its first delivery's hour may still hold deliveries
 * of the range: one hour covers any archiver batch window (they are minutes at most) for one extra listing.
 */
export const ARCHIVE_LISTING_LOOKBACK_MS = 3_600_000;
/** Hour partitions listed at once (a 30-day range has 720). */
const LISTING_CONCURRENCY = 8;

/** Where a replay stands: the last record sent, in the archive's order. */
export interface ArchivePosition {
  readonly arrivedAt: string;
  readonly deliveryId: string;
}

export interface ArchiveReaderOptions {
  readonly s3: S3Client;
  readonly bucketName: string;
  /** @default ARCHIVE_LISTING_LOOKBACK_MS */
  readonly lookbackMs?: number;
}

export class ArchiveReader {
  readonly #s3: S3Client;
  readonly #bucketName: string;
  readonly #lookbackMs: number;

  constructor(options: ArchiveReaderOptions) {
    this.#s3 = options.s3;
    this.#bucketName = options.bucketName;
    this.#lookbackMs = options.lookbackMs ?? ARCHIVE_LISTING_LOOKBACK_MS;
  }

  /** The objects that may hold deliveries of [sinceMs, untilMs), by first arrival (then key). */
  async objects(sinceMs: number, untilMs: number): Promise<ArchiveObjectName[]> {
    const prefixes = hourPrefixesForRange(sinceMs, untilMs, this.#lookbackMs);
    const listed = await mapWithConcurrency(prefixes, LISTING_CONCURRENCY, (prefix) => this.#list(prefix));
    return listed
      .flat()
      .filter((name) => overlaps(name, sinceMs, untilMs))
      .sort((a, b) => a.firstArrivalMs - b.firstArrivalMs || a.key.localeCompare(b.key));
  }

  /**
   * The deliveries that arrived in [sinceMs, untilMs), in order, from the `objects` given (all of the range by
   * default); with `after`, only those that come after that position.
   */
  async *records(
    sinceMs: number,
    untilMs: number,
    options: { readonly after?: ArchivePosition; readonly objects?: readonly ArchiveObjectName[] } = {},
  ): AsyncGenerator<ArchiveRecord> {
    const objects = [...(options.objects ?? (await this.objects(sinceMs, untilMs)))];
    const after = options.after;
    const wanted = (record: ArchiveRecord) => {
      const arrival = Date.parse(record.arrivedAt);
      return (
        arrival >= sinceMs && arrival < untilMs && (after === undefined || compareRecords(record, after) > 0)
      );
    };
    let pending: ArchiveRecord[] = [];
    while (objects.length > 0 || pending.length > 0) {
      // An unread object that starts before (or with) the earliest pending record may hold records before it.
      const next = objects[0];
      const head = pending[0];
      if (next !== undefined && (head === undefined || next.firstArrivalMs <= Date.parse(head.arrivedAt))) {
        objects.shift();
        const records = (await this.#read(next.key)).filter(wanted);
        pending = [...pending, ...records].sort(compareRecords);
        continue;
      }
      if (head === undefined) continue;
      pending.shift();
      yield head;
    }
  }

  async #list(prefix: string): Promise<ArchiveObjectName[]> {
    const names: ArchiveObjectName[] = [];
    let token: string | undefined;
    do {
      const page = await this.#s3.send(
        new ListObjectsV2Command({ Bucket: this.#bucketName, Prefix: prefix, ContinuationToken: token }),
      );
      for (const { Key } of page.Contents ?? []) {
        if (Key === undefined) continue;
        try {
          names.push(parseArchiveObjectKey(Key));
        } catch (error) {
          // Not an archive object (a console upload, a folder marker): not ours to read.
          if (!(error instanceof ArchiveFormatError)) throw error;
        }
      }
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return names;
  }

  async #read(key: string): Promise<ArchiveRecord[]> {
    const object = await this.#s3.send(new GetObjectCommand({ Bucket: this.#bucketName, Key: key }));
    if (object.Body === undefined) throw new ArchiveFormatError(`The archive object ${key} has no body.`);
    const compressed = await object.Body.transformToByteArray();
    try {
      return decodeArchiveLines((await gunzipAsync(compressed)).toString('utf8'));
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error);
      throw new ArchiveFormatError(`The archive object ${key} cannot be read: ${problem}`);
    }
  }
}

/** The archive's order: arrival, then delivery id (as `encodeArchiveLines` sorts an object's lines). */
export function compareRecords(a: ArchivePosition, b: ArchivePosition): number {
  return Date.parse(a.arrivedAt) - Date.parse(b.arrivedAt) || a.deliveryId.localeCompare(b.deliveryId);
}

/**
 * Days the bucket keeps the archive's objects: the expiry of its enabled lifecycle rule on the archive's prefix;
 * undefined when the bucket has no such rule.
 */
export async function archiveRetentionDays(s3: S3Client, bucketName: string): Promise<number | undefined> {
  try {
    const { Rules = [] } = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucketName }));
    const days = Rules.filter(
      (rule) =>
        rule.Status === 'Enabled' &&
        ARCHIVE_PREFIX.startsWith(rule.Filter?.Prefix ?? rule.Prefix ?? '') &&
        rule.Expiration?.Days !== undefined,
    ).map((rule) => rule.Expiration?.Days as number);
    return days.length === 0 ? undefined : Math.min(...days);
  } catch (error) {
    if (error instanceof Error && error.name === 'NoSuchLifecycleConfiguration') return undefined;
    throw error;
  }
}
