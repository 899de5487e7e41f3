/** `npm run outage-drill`'s scenarios: the default and `--short` (docs/outage-drill.md, "The scenario"). */
import { COMPRESSED_META_RETRIES } from './meta-retries.ts';

export const DEFAULTS = {
  rate: 8,
  effectMs: 150,
  workers: 2,
  duration: 60,
  outageStart: 20,
  outage: 15,
  interval: 5,
  metaTimeoutMs: 3_000,
  retryInitialMs: COMPRESSED_META_RETRIES.initialDelayMs,
  retryMaxMs: COMPRESSED_META_RETRIES.maxDelayMs,
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
