/**
 * `ops replay`'s time range and rate as the operator types them: an instant is ISO-8601 (`2026-12-01T14:00Z`,
 * `2026-12-01T14:00:00+01:00`, or a date `2026-12-01`, read as UTC midnight), `now`, or relative to now
 * (`-3d`, `-12h`, `-30m`); a rate is `N/s` or `N` deliveries per second. Every mistake is one `UsageError`.
 * Pure: the caller gives the time.
 */
import { UsageError } from '../errors.ts';

const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 };
const DAY_MS = 86_400_000;
/** An ISO-8601 date-time must say its offset: a time without one would depend on the operator's machine. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Epoch ms of `text`, or a `UsageError` naming the option and the forms accepted. */
export function parseInstant(option: string, text: string, nowMs: number): number {
  const trimmed = text.trim();
  if (trimmed === 'now') return nowMs;
  const relative = /^-(\d+)([mhd])$/.exec(trimmed);
  if (relative !== null) {
    const [, amount, unit] = relative as unknown as [string, string, string];
    return nowMs - Number(amount) * (UNIT_MS[unit] as number);
  }
  const iso = ISO_DATE.test(trimmed) ? `${trimmed}T00:00:00Z` : trimmed;
  const parsed = ISO_DATE_TIME.test(iso) ? Date.parse(iso) : Number.NaN;
  if (Number.isNaN(parsed)) {
    throw new UsageError(
      `${option} needs an ISO-8601 time with its offset (2026-12-01T14:00Z), a date (2026-12-01), now, or -30m, -12h, -3d; got "${text}"`,
    );
  }
  return parsed;
}

export interface ReplayRange {
  /** Epoch ms, inclusive. */
  readonly sinceMs: number;
  /** Epoch ms, exclusive. */
  readonly untilMs: number;
}

/**
 * The range [since, until), checked: not empty, and not reaching back before what the archive still keeps
 * (`retentionDays` before now), where a replay would silently miss deliveries.
 */
export function resolveReplayRange(
  given: { readonly since: string; readonly until: string },
  nowMs: number,
  retentionDays: number,
): ReplayRange {
  const sinceMs = parseInstant('--since', given.since, nowMs);
  const untilMs = parseInstant('--until', given.until, nowMs);
  checkRangeOrder(sinceMs, untilMs);
  const oldestKept = nowMs - retentionDays * DAY_MS;
  if (sinceMs < oldestKept) {
    throw new UsageError(
      `--since ${iso(sinceMs)} is outside the archive's retention of ${retentionDays} days (the oldest deliveries kept arrived after ${iso(oldestKept)})`,
    );
  }
  return { sinceMs, untilMs };
}

/** A `UsageError` unless since is before until. */
export function checkRangeOrder(sinceMs: number, untilMs: number): void {
  if (sinceMs >= untilMs) {
    throw new UsageError(
      `--since (${iso(sinceMs)}) must be before --until (${iso(untilMs)}): the range is empty`,
    );
  }
}

/** `now` and `-3d` move with the clock; an ISO-8601 time or a date does not. */
export function movesWithClock(text: string): boolean {
  const trimmed = text.trim();
  return trimmed === 'now' || /^-\d+[mhd]$/.test(trimmed);
}

/** Deliveries per second: `50/s` or `50`, more than 0. */
export function parseRate(text: string): number {
  const match = /^(\d+(\.\d+)?)(\/s)?$/.exec(text.trim());
  const rate = match === null ? Number.NaN : Number(match[1]);
  if (!(rate > 0)) throw new UsageError(`--rate needs deliveries per second such as 50/s, got "${text}"`);
  return rate;
}

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
