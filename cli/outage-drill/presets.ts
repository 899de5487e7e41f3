/**
 * `npm run outage-drill`'s scenarios: the default and `--short` (docs/outage-drill.md, "The scenario"). Meta's retries
 * are compressed into seconds (compressedMetaRetries): from `retryInitialMs`, doubling, capped at `retryMaxMs`.
 */

export const DEFAULTS = {
  rate: 8,
  effectMs: 150,
  workers: 2,
  duration: 60,
  outageStart: 20,
  outage: 15,
  interval: 5,
  metaTimeoutMs: 3_000,
  retryInitialMs: 1_000,
  retryMaxMs: 16_000,
  drain: 45,
};

/** A quick run for tests and a first look: about 20 s of traffic. */
export const SHORT = {
  rate: 6,
  effectMs: 40,
  workers: 2,
  duration: 16,
  outageStart: 5,
  outage: 4,
  interval: 2,
  metaTimeoutMs: 1_500,
  retryInitialMs: 500,
  retryMaxMs: 4_000,
  drain: 40,
};
