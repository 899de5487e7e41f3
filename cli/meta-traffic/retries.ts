/**
 * How Meta retries a webhook delivery it got no 200 for (an error status, a 429, a timeout, a refused
 * connection): "with decreasing frequency until the request succeeds, for up to 7 days"
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks). The window is Meta's word;
 * the delays are not published, so every tool that plays Meta (the capacity simulation, the protocol checker,
 * the outage drill) takes them from this one model: a list of delays whose last one repeats, each drawn
 * ± `jitter` so that the retries of one outage do not arrive in lockstep.
 */

export interface MetaRetrySchedule {
  /** The delay before the first retry, the second, …; the last repeats until the window closes. */
  readonly delaysMs: readonly number[];
  /** ± fraction of each delay drawn at random. */
  readonly jitter: number;
  /** No retry is sent later than this after the first attempt. */
  readonly windowMs: number;
}

const SECOND = 1_000;
const DAY = 24 * 3600 * SECOND;

/** Meta's retries as this project assumes them: minutes apart, then hourly, for seven days. */
export const META_RETRIES: MetaRetrySchedule = {
  delaysMs: [15, 60, 120, 300, 600, 1_200, 1_800, 3_600].map((seconds) => seconds * SECOND),
  jitter: 0.2,
  windowMs: 7 * DAY,
};

/**
 * The same shape compressed into seconds, for a drill that runs for minutes on a laptop: `initialMs`,
 * doubling, capped at `maxMs`.
 */
export function compressedMetaRetries(initialMs: number, maxMs: number): MetaRetrySchedule {
  const delaysMs = [initialMs];
  while ((delaysMs.at(-1) as number) * 2 < maxMs) delaysMs.push((delaysMs.at(-1) as number) * 2);
  if (maxMs > initialMs) delaysMs.push(maxMs);
  return { delaysMs, jitter: 0.2, windowMs: META_RETRIES.windowMs };
}

/** Delay before retry number `retry` (1 = the first retry). */
export function retryDelayMs(
  retry: number,
  schedule: MetaRetrySchedule,
  random: () => number = Math.random,
): number {
  if (!Number.isInteger(retry) || retry < 1) throw new RangeError('retry counts from 1.');
  const base = schedule.delaysMs[Math.min(retry, schedule.delaysMs.length) - 1] as number;
  return Math.max(0, base * (1 + schedule.jitter * (2 * random() - 1)));
}

/** Exponentially distributed time between Poisson arrivals at `ratePerSecond`, in ms. */
export function nextArrivalGapMs(ratePerSecond: number, random: () => number = Math.random): number {
  return (-Math.log(1 - random()) / ratePerSecond) * 1000;
}
