/** The options of `smoke`: how long to wait for the subscribers. */
import { UsageError } from '../errors.ts';

/** Long enough for a cold start of each lane's consumer and the lanes' batching windows. */
export const DEFAULT_SMOKE_TIMEOUT_SECONDS = 60;
const MAX_SMOKE_TIMEOUT_SECONDS = 900;

export interface SmokeOptions {
  /** How long to wait for every subscriber's claims to be done. */
  readonly timeoutMs: number;
}

export function smokeOptions(values: { readonly timeout?: string }): SmokeOptions {
  const raw = values.timeout;
  if (raw === undefined) return { timeoutMs: DEFAULT_SMOKE_TIMEOUT_SECONDS * 1000 };
  const seconds = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || seconds <= 0 || seconds > MAX_SMOKE_TIMEOUT_SECONDS) {
    throw new UsageError(
      `--timeout needs seconds, above 0 and at most ${MAX_SMOKE_TIMEOUT_SECONDS}, got "${raw}"`,
    );
  }
  return { timeoutMs: Math.round(seconds * 1000) };
}
