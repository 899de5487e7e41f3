/**
 * Meta's delivery behaviour, as documented for WhatsApp webhooks: a delivery that is not answered with a
 * 200 (an error status, a timeout, a refused connection) is retried "with decreasing frequency" for up to
 * seven days. The outage drill compresses that schedule: exponential backoff from `initialDelayMs`, doubling,
 * capped at `maxDelayMs`, with jitter so that retries of one outage do not arrive in lockstep.
 */

/** When Meta retries a delivery it got no 200 for (not the receiver's own enqueue retries). */
export interface MetaRetrySchedule {
  readonly initialDelayMs: number;
  readonly factor: number;
  readonly maxDelayMs: number;
  /** ± fraction of the delay drawn at random. */
  readonly jitter: number;
}

export const COMPRESSED_META_RETRIES: MetaRetrySchedule = {
  initialDelayMs: 1_000,
  factor: 2,
  maxDelayMs: 16_000,
  jitter: 0.2,
};

/** Delay before retry number `retry` (1 = the first retry). */
export function retryDelayMs(
  retry: number,
  schedule: MetaRetrySchedule,
  random: () => number = Math.random,
): number {
  if (!Number.isInteger(retry) || retry < 1) throw new RangeError('retry counts from 1.');
  const base = Math.min(schedule.maxDelayMs, schedule.initialDelayMs * schedule.factor ** (retry - 1));
  return Math.max(0, base * (1 + schedule.jitter * (2 * random() - 1)));
}

/** Exponentially distributed time between Poisson arrivals at `ratePerSecond`, in ms. */
export function nextArrivalGapMs(ratePerSecond: number, random: () => number = Math.random): number {
  return (-Math.log(1 - random()) / ratePerSecond) * 1000;
}
