/**
 * Order statistics, the house's one copy: nearest-rank percentiles (the local dashboard's lane waits, the
 * benchmarks, the capacity simulation), the median, and a distribution-free interval for it (the benchmarks'
 * rounds). Medians, not means: a GC pause or a noisy neighbour skews a mean.
 */

/**
 * The nearest-rank percentile (p in 0–100) of `values`, in any order; NaN for none. CloudWatch's pNN is an
 * estimate of the same.
 */
export function percentile(values: ArrayLike<number>, p: number): number {
  return percentileOfSorted(Float64Array.from(values).sort(), p);
}

/** `percentile` of values already in ascending order, without sorting them again; NaN for none. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** The median; the mean of the two middle values for an even count; NaN for none. */
export function median(values: ArrayLike<number>): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export interface MedianInterval {
  readonly low: number;
  readonly high: number;
  /** The interval's actual coverage (order statistics give discrete levels at or above the one asked for). */
  readonly confidence: number;
}

/**
 * A distribution-free confidence interval for the median: the order statistics x(k) and x(n+1-k) with the
 * largest k for which P(k <= B <= n-k) >= `confidence`, B ~ Binomial(n, 1/2). Needs no assumption about the
 * shape of the samples; with 6 samples it is [min, max] (96.9%), with 12 it is [x(3), x(10)] (96.1%).
 */
export function medianInterval(values: ArrayLike<number>, confidence = 0.95): MedianInterval {
  const n = values.length;
  if (n === 0) return { low: Number.NaN, high: Number.NaN, confidence: 0 };
  const sorted = Float64Array.from(values).sort();
  const pmf = (i: number) => binomial(n, i) / 2 ** n;
  let k = 1;
  let coverage = 1 - 2 * pmf(0);
  for (;;) {
    const next = coverage - 2 * pmf(k);
    if (k + 1 > n - k || next < confidence) break;
    coverage = next;
    k++;
  }
  return { low: sorted[k - 1] as number, high: sorted[n - k] as number, confidence: coverage };
}

function binomial(n: number, k: number): number {
  let result = 1;
  for (let i = 1; i <= k; i++) result = (result * (n - k + i)) / i;
  return result;
}

/** Rounds a figure for a results file: enough digits to compare runs, no false precision. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
