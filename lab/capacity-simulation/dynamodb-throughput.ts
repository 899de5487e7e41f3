/**
 * The claim table's write throughput in on-demand mode:
 *
 * - the table serves at once up to its warm throughput (a new table 4,000 write units/s, or what
 *   `WarmThroughput.WriteUnitsPerSecond` set), and up to twice its previous peak; traffic above both may be
 *   throttled until DynamoDB has scaled, which takes up to 30 minutes.
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html
 * - each partition serves at most 1,000 write units/s; items go to partitions by the hash of their partition key,
 *   and the table has as many partitions as its warm throughput needs.
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html
 *
 * A write of an item up to 1 KB takes one write unit, a failed conditional write too.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
 * Each limit is a token bucket holding one second of its rate (DynamoDB meters per second).
 */
import { TokenBucket } from './token-bucket.ts';

/** Write units/s of one partition. https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html */
export const PARTITION_WRITE_UNITS = 1_000;
/** Within this long after a new peak, more than twice the previous one may be throttled. */
export const PEAK_ADAPTATION_MS = 30 * 60 * 1000;

export interface TableThroughputOptions {
  readonly warmWriteUnits: number;
  readonly startMs: number;
}

export class TableThroughput {
  readonly warmWriteUnits: number;
  readonly partitions: readonly TokenBucket[];
  #table: TokenBucket;
  /** Write units consumed per whole second, to find the previous peak. */
  readonly #perSecond = new Map<number, number>();
  #peakSettledAt = 0;
  #settledPeak = 0;
  throttled = 0;
  throttledByPartition = 0;
  consumed = 0;

  constructor(options: TableThroughputOptions) {
    this.warmWriteUnits = options.warmWriteUnits;
    const count = Math.max(1, Math.ceil(options.warmWriteUnits / PARTITION_WRITE_UNITS));
    this.partitions = Array.from(
      { length: count },
      () => new TokenBucket(PARTITION_WRITE_UNITS, PARTITION_WRITE_UNITS, options.startMs),
    );
    this.#table = new TokenBucket(options.warmWriteUnits, options.warmWriteUnits, options.startMs);
    this.#peakSettledAt = options.startMs;
  }

  /** What the table serves at once now: its warm throughput, or twice a peak older than 30 minutes. */
  capacity(nowMs: number): number {
    // Seconds older than the adaptation window become the previous peak.
    const settledUntil = Math.floor((nowMs - PEAK_ADAPTATION_MS) / 1000);
    for (let second = Math.floor(this.#peakSettledAt / 1000); second <= settledUntil; second++) {
      this.#settledPeak = Math.max(this.#settledPeak, this.#perSecond.get(second) ?? 0);
      this.#perSecond.delete(second);
    }
    this.#peakSettledAt = Math.max(this.#peakSettledAt, (settledUntil + 1) * 1000);
    return Math.max(this.warmWriteUnits, 2 * this.#settledPeak);
  }

  /** One write of `units` to the item keyed `partitionKey`; false when throttled (nothing consumed). */
  write(nowMs: number, partitionKey: string, units = 1): boolean {
    const capacity = this.capacity(nowMs);
    if (capacity !== this.#table.rate) this.#table = new TokenBucket(capacity, capacity, nowMs);
    const partition = this.partitions[hashKey(partitionKey) % this.partitions.length] as TokenBucket;
    if (this.#table.available(nowMs) < units) {
      this.throttled++;
      return false;
    }
    if (partition.available(nowMs) < units) {
      this.throttled++;
      this.throttledByPartition++;
      return false;
    }
    this.#table.take(nowMs, units);
    partition.take(nowMs, units);
    this.consumed += units;
    const second = Math.floor(nowMs / 1000);
    this.#perSecond.set(second, (this.#perSecond.get(second) ?? 0) + units);
    return true;
  }
}

/** FNV-1a: DynamoDB's own hash is internal; any uniform hash spreads distinct keys alike. */
export function hashKey(key: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index++) {
    hash ^= key.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
