/**
 * The options of `replay`: the range as typed (resolved against the clock and the archive's retention by the
 * command), `--fields`, `--dry-run`, `--rerun` (with `--yes`), `--rate`, `--restart` and `--max`.
 */
import { isKnownField } from 'whatsapp-webhook-dedup/functions/events/extract-events';
import { UsageError } from '../errors.ts';
import { checkRangeOrder, movesWithClock, parseInstant, parseRate } from './replay-range.ts';
import { DEFAULT_REPLAY_RATE_PER_SECOND } from './run-replay.ts';

export interface ReplayArguments {
  /** As typed: ISO-8601, a date, `now` or relative (`-3d`). */
  readonly since: string;
  /** @default 'now' */
  readonly until: string;
  /** Narrows the subscriber's fields; undefined: all of them. */
  readonly fields: readonly string[] | undefined;
  readonly dryRun: boolean;
  readonly rerun: boolean;
  readonly ratePerSecond: number;
  /** Start from the range's beginning, ignoring a cursor an earlier run left. */
  readonly restart: boolean;
  /** Stop after this many deliveries (the next run continues from the cursor). */
  readonly maxDeliveries: number | undefined;
}

export interface ReplayOptionValues {
  readonly since?: string;
  readonly until?: string;
  readonly fields?: string;
  readonly 'dry-run'?: boolean;
  readonly rerun?: boolean;
  readonly yes?: boolean;
  readonly rate?: string;
  readonly restart?: boolean;
  readonly max?: string;
}

const TIME_OPTIONS = new Set(['--since', '--until']);

/**
 * `--since -3d` as `--since=-3d`: node's parseArgs takes a value that starts with a dash for an option of its
 * own and refuses it as ambiguous, while a relative time is what an operator types most.
 */
export function attachRelativeTimes(args: readonly string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    const next = args[index + 1];
    if (TIME_OPTIONS.has(arg) && next !== undefined && /^-\d+[mhd]$/.test(next)) {
      joined.push(`${arg}=${next}`);
      index++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

export function replayOptions(values: ReplayOptionValues, nowMs: number = Date.now()): ReplayArguments {
  if (values.since === undefined)
    throw new UsageError('replay needs --since TIME (and --until TIME, default now)');
  const until = values.until ?? 'now';
  const sinceMs = parseInstant('--since', values.since, nowMs);
  const untilMs = parseInstant('--until', until, nowMs);
  // The order, before any target is reached. Only a --since that moves with the clock before a fixed --until
  // (`--since -3d --until 2026-12-01T12:00Z`) can have been in order when an interrupted run saved its cursor
  // and be out of order now: the command checks that one when no cursor continues it (resolveReplayRange).
  // The retention needs the target's archive.
  if (!movesWithClock(values.since) || movesWithClock(until)) checkRangeOrder(sinceMs, untilMs);
  const dryRun = values['dry-run'] === true;
  const rerun = values.rerun === true;
  if (rerun && !dryRun && values.yes !== true) {
    throw new UsageError(
      'replay --rerun forgets the done claims of the range, so that their effects run again: add --yes to confirm',
    );
  }
  return {
    since: values.since,
    until,
    fields: values.fields === undefined ? undefined : fieldList(values.fields),
    dryRun,
    rerun,
    ratePerSecond: values.rate === undefined ? DEFAULT_REPLAY_RATE_PER_SECOND : parseRate(values.rate),
    restart: values.restart === true,
    maxDeliveries: values.max === undefined ? undefined : wholeNumber('--max', values.max),
  };
}

function fieldList(raw: string): string[] {
  const fields = [...new Set(raw.split(',').map((field) => field.trim()))].filter((field) => field !== '');
  if (fields.length === 0) throw new UsageError('--fields needs webhook field names, such as messages,calls');
  const unknown = fields.filter((field) => !isKnownField(field));
  if (unknown.length > 0) throw new UsageError(`--fields: unknown webhook field ${unknown.join(', ')}`);
  return fields.sort();
}

function wholeNumber(option: string, raw: string): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`${option} needs a whole number of at least 1, got "${raw}"`);
  }
  return value;
}
