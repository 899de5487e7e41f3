/** Sums of the stack's per-second statistics over a span of buckets. */
import type { StatsBucket } from '../local/observe/pipeline-stats.ts';

export interface BucketSums {
  readonly byField: Readonly<Record<string, { fresh: number; duplicate: number }>>;
  readonly counters: Readonly<Record<string, number>>;
  readonly fresh: number;
  readonly duplicate: number;
  readonly records: number;
  readonly waitMsSum: number;
  readonly invocations: number;
  readonly invocationMsSum: number;
  readonly invocationMsSquaredSum: number;
}

export function sumBuckets(buckets: readonly StatsBucket[]): BucketSums {
  const byField: Record<string, { fresh: number; duplicate: number }> = {};
  const counters: Record<string, number> = {};
  let fresh = 0;
  let duplicate = 0;
  let records = 0;
  let waitMsSum = 0;
  let invocations = 0;
  let invocationMsSum = 0;
  let invocationMsSquaredSum = 0;
  for (const bucket of buckets) {
    for (const [field, counts] of Object.entries(bucket.byField)) {
      const target = byField[field] ?? { fresh: 0, duplicate: 0 };
      target.fresh += counts.fresh;
      target.duplicate += counts.duplicate;
      byField[field] = target;
      fresh += counts.fresh;
      duplicate += counts.duplicate;
    }
    for (const [name, value] of Object.entries(bucket.counters))
      counters[name] = (counters[name] ?? 0) + value;
    records += bucket.records;
    waitMsSum += bucket.waitMsSum;
    invocations += bucket.invocations;
    invocationMsSum += bucket.invocationMsSum;
    invocationMsSquaredSum += bucket.invocationMsSquaredSum ?? 0;
  }
  return {
    byField,
    counters,
    fresh,
    duplicate,
    records,
    waitMsSum,
    invocations,
    invocationMsSum,
    invocationMsSquaredSum,
  };
}

/** 100 × duplicates / (fresh + duplicates); undefined when neither was seen. */
export function duplicateRate(fresh: number, duplicate: number): number | undefined {
  return fresh + duplicate === 0 ? undefined : (100 * duplicate) / (fresh + duplicate);
}
