import {
  longestTimeInQueueSeconds,
  MAX_RETRY_DELAY_SECONDS,
  MIN_OUTAGE_RIDDEN_OUT_SECONDS,
  outageRiddenOutSeconds,
  type QueueStay,
  receivesToRideOut,
} from './retry-budget.ts';

/**
 * Pipeline settings: the one source of truth for the CDK construct, the local stack and the tests, with the
 * rules that refuse combinations that would lose or hide events. Plain TypeScript (no aws-cdk-lib, no AWS SDK),
 * so that the Lambda code, the local stack and the tests can load it cheaply.
 */

const DAY_SECONDS = 86_400;

/** Meta retries a webhook delivery for up to 7 days after its first attempt. */
export const META_RETRY_WINDOW_DAYS = 7;
/**
 * The part of the claims' retention floor that a reader of `retentionDays` alone can check (the consumer's
 * claim store, at start): Meta's retry window. The whole floor adds the longest retry budget of the
 * subscriber's lanes (`minimumRetentionSeconds`), which only the construct knows.
 */
export const MIN_RETENTION_DAYS = META_RETRY_WINDOW_DAYS;
/**
 * Once the receiver answered 200, Meta never sends the delivery again and the delivery queue holds the only
 * copy: an outage of the consumer longer than the queue's retention loses events. A week covers a long
 * weekend plus the time to notice and fix; 14 days is the SQS maximum.
 */
export const MIN_QUEUE_RETENTION_DAYS = 7;
export const MAX_QUEUE_RETENTION_DAYS = 14;
export const MIN_MAX_RECEIVE_COUNT = 5;
/** The largest redrive `maxReceiveCount` SQS accepts. */
export const MAX_MAX_RECEIVE_COUNT = 1000;
/** AWS guidance for SQS event sources: visibility timeout at least 6× the function timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

export interface PipelineSettings {
  /**
   * Days a done claim keeps blocking retries: at least Meta's 7 days of retries plus the longest retry budget
   * of the subscriber's lanes (`minimumRetentionSeconds`), the most a retry may then wait in a queue.
   */
  readonly retentionDays: number;
  /** Margin added to the invocation's remaining time to form the processing lease. */
  readonly leaseMarginMs: number;
  readonly consumerTimeoutSeconds: number;
  readonly receiverTimeoutSeconds: number;
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  readonly maxConcurrency: number;
  readonly visibilityTimeoutSeconds: number;
  /**
   * Receives before SQS moves a record to the DLQ. With the retry delays below, it sets how long a downstream
   * outage records ride out (contract/retry-budget.ts, docs/consumer.md "Retry budget").
   */
  readonly maxReceiveCount: number;
  /** Ceiling of the delay after a record's first failed receive; doubles with each receive. */
  readonly retryBaseDelaySeconds: number;
  /** Ceiling of every delay the consumer sets on a failed record: backoff and `RetryLater` alike. */
  readonly retryMaxDelaySeconds: number;
  /** Largest SQS message body the receiver writes; bigger deliveries are split on event boundaries. */
  readonly maximumMessageSizeBytes: number;
  readonly queueRetentionDays: number;
  readonly deadLetterRetentionDays: number;
}

export type PipelineSettingsInput = Partial<PipelineSettings>;

const BASE_WITHOUT_RETENTION: Omit<PipelineSettings, 'visibilityTimeoutSeconds' | 'retentionDays'> = {
  leaseMarginMs: 10_000,
  consumerTimeoutSeconds: 30,
  receiverTimeoutSeconds: 10,
  batchSize: 10,
  maxBatchingWindowSeconds: 1,
  // A floor: the construct raises each lane's to what the capacity planner sizes for its expected peak
  // (lib/capacity-sizing.ts, docs/capacity.md); this is what the local stack and a small peak run with.
  maxConcurrency: 8,
  // 30 s, 1 min, … up to 1 h apart (each delay between half its ceiling and the ceiling): 60 receives ride
  // out a downstream outage of over a day, the DLQ is reached within 3 days (docs/consumer.md, "Retry budget").
  maxReceiveCount: 60,
  retryBaseDelaySeconds: 30,
  retryMaxDelaySeconds: 3600,
  maximumMessageSizeBytes: 1024 * 1024,
  queueRetentionDays: MAX_QUEUE_RETENTION_DAYS,
  deadLetterRetentionDays: 14,
};

const BASE: Omit<PipelineSettings, 'visibilityTimeoutSeconds'> = {
  ...BASE_WITHOUT_RETENTION,
  // The smallest retention the default budget allows, rounded up to whole days: the status lane's is the
  // longest of the default lanes (the ordered message lane's is far shorter), and the rest of the day is margin
  // for what no budget counts, such as a backlog before a record's first receive.
  retentionDays: Math.ceil(
    minimumRetentionDays({
      'status lane': {
        ...BASE_WITHOUT_RETENTION,
        visibilityTimeoutSeconds: minimumVisibilityTimeoutSeconds(BASE_WITHOUT_RETENTION),
      },
    }),
  ),
};

/**
 * The defaults, resolved: what a reader of one setting (the Lambda functions, the claim store) falls back to
 * when the setting is not given.
 */
export const DEFAULT_SETTINGS: PipelineSettings = {
  ...BASE,
  visibilityTimeoutSeconds: minimumVisibilityTimeoutSeconds(BASE),
};

/** A subscriber's lanes by name (`status lane`, `message lane`), each as its records may stay in its queue. */
export type LaneStays = Readonly<Record<string, QueueStay>>;

/**
 * The claims' retention floor, in seconds: a done claim must still block Meta's last retry, which comes up to
 * 7 days after Meta's first attempt (so at most 7 days after the completion, which came later), and which may
 * then wait in its lane's queue, for that lane's whole retry budget (`longestTimeInQueueSeconds`), before a
 * consumer checks its claim. Retention is the subscriber's, so the lane with the longest budget sets it.
 * Without lanes, Meta's window alone.
 */
export function minimumRetentionSeconds(lanes: LaneStays): number {
  return META_RETRY_WINDOW_DAYS * DAY_SECONDS + longestLaneStay(lanes).seconds;
}

/** `minimumRetentionSeconds` as a `retentionDays` value: the smallest the construct accepts. */
export function minimumRetentionDays(lanes: LaneStays): number {
  return minimumRetentionSeconds(lanes) / DAY_SECONDS;
}

function longestLaneStay(lanes: LaneStays): { lane?: string; stay?: QueueStay; seconds: number } {
  let longest: { lane?: string; stay?: QueueStay; seconds: number } = { seconds: 0 };
  for (const [lane, stay] of Object.entries(lanes)) {
    const seconds = longestTimeInQueueSeconds(stay);
    if (seconds > longest.seconds) longest = { lane, stay, seconds };
  }
  return longest;
}

/**
 * The retention the claim store writes, in whole seconds rounded up (`expiresAtFor`,
 * functions/claims/lease.ts): the floor is compared with it, so a fraction of a day is judged as written.
 */
function writtenRetentionSeconds(retentionDays: number): number {
  return Math.ceil(retentionDays * DAY_SECONDS);
}

/**
 * The rules on one setting alone, as the message to show when the value breaks them. The consumer checks the
 * values it reads with these (its claim store does, at start); `resolveSettings` applies them together with
 * the rules that compare settings, which only the CDK construct and the local stack can check, since only
 * they know every setting.
 *
 * `retentionDaysProblem` takes the subscriber's lanes where they are known (the construct, at synth): then
 * the floor is 7 days plus the longest of their retry budgets (`minimumRetentionSeconds`); without them, the
 * 7 days alone.
 */
export function retentionDaysProblem(retentionDays: number, lanes: LaneStays = {}): string | undefined {
  const floor = Math.ceil(minimumRetentionSeconds(lanes));
  if (Number.isFinite(retentionDays) && writtenRetentionSeconds(retentionDays) >= floor) return undefined;
  const { lane, stay, seconds } = longestLaneStay(lanes);
  if (lane === undefined || stay === undefined) {
    return `retentionDays is ${retentionDays}, but Meta retries a webhook for up to ${META_RETRY_WINDOW_DAYS} days: use at least ${MIN_RETENTION_DAYS} days plus the longest retry budget of the subscriber's lanes (default ${BASE.retentionDays}).`;
  }
  return `retentionDays is ${retentionDays}, but Meta retries a webhook for up to ${META_RETRY_WINDOW_DAYS} days, and its last retry may then wait in the ${lane}'s queue for that lane's retry budget, ${stay.maxReceiveCount} receives × up to ${seconds / stay.maxReceiveCount} s = ${seconds} s (${days(seconds)}), before its claim is checked: a done claim must outlast both. Use a retentionDays of at least ${daysRoundedUp(floor)} (${META_RETRY_WINDOW_DAYS} days + ${seconds} s; ${Math.ceil(floor / DAY_SECONDS)} in whole days), or a shorter retry budget.`;
}

export function leaseMarginMsProblem(leaseMarginMs: number): string | undefined {
  if (Number.isFinite(leaseMarginMs) && leaseMarginMs >= 0) return undefined;
  return `leaseMarginMs is ${leaseMarginMs}: use a finite number >= 0.`;
}

export class UnsafeSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeSettingsError';
  }
}

/** The smallest visibility timeout that cannot hand a record to a second consumer while the first still runs. */
export function minimumVisibilityTimeoutSeconds(s: {
  consumerTimeoutSeconds: number;
  maxBatchingWindowSeconds: number;
}): number {
  return VISIBILITY_TIMEOUT_FACTOR * s.consumerTimeoutSeconds + s.maxBatchingWindowSeconds;
}

/**
 * The latest a lease can end, in seconds after SQS handed the record out: the record may wait up to the
 * batching window before the invocation starts, the invocation runs up to the consumer timeout, and the
 * lease outlives the invocation's deadline by `leaseMarginMs`. SQS may deliver the record again only after
 * the visibility timeout, counted from that same hand-out, so the lease must end before it.
 */
export function latestLeaseEndSeconds(s: {
  consumerTimeoutSeconds: number;
  maxBatchingWindowSeconds: number;
  leaseMarginMs: number;
}): number {
  return s.consumerTimeoutSeconds + s.maxBatchingWindowSeconds + s.leaseMarginMs / 1000;
}

export interface ResolveSettingsOptions {
  /**
   * The downstream outage the retry budget must ride out. Only tests and the simulator, which compress time
   * into seconds, lower it; the construct and the local stack keep the default.
   * @default MIN_OUTAGE_RIDDEN_OUT_SECONDS (24 hours)
   */
  readonly outageToRideOutSeconds?: number;
}

/**
 * Fills defaults and refuses unsafe values and combinations with a message that says what to change. Runs
 * where every setting is known: the CDK construct (at synth) and the local stack (at start).
 */
export function resolveSettings(
  input: PipelineSettingsInput = {},
  options: ResolveSettingsOptions = {},
): PipelineSettings {
  const merged = { ...BASE, ...withoutUndefined(input) };
  const minimumVisibility = minimumVisibilityTimeoutSeconds(merged);
  const settings: PipelineSettings = {
    ...merged,
    visibilityTimeoutSeconds: input.visibilityTimeoutSeconds ?? minimumVisibility,
  };
  for (const [name, value] of Object.entries(settings)) {
    // NaN and Infinity pass every `<` comparison below unnoticed; an env variable or a computed prop can hold one.
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new UnsafeSettingsError(`${name} is ${String(value)}: every setting must be a finite number.`);
    }
  }
  for (const problem of [
    retentionDaysProblem(settings.retentionDays),
    leaseMarginMsProblem(settings.leaseMarginMs),
  ]) {
    if (problem !== undefined) throw new UnsafeSettingsError(problem);
  }
  if (settings.visibilityTimeoutSeconds < minimumVisibility) {
    throw new UnsafeSettingsError(
      `visibilityTimeoutSeconds is ${settings.visibilityTimeoutSeconds}, below ${VISIBILITY_TIMEOUT_FACTOR} × consumerTimeoutSeconds (${settings.consumerTimeoutSeconds}) + maxBatchingWindowSeconds (${settings.maxBatchingWindowSeconds}) = ${minimumVisibility}: a record could reach a second consumer while the first still holds it.`,
    );
  }
  const leaseReach = latestLeaseEndSeconds(settings);
  if (leaseReach >= settings.visibilityTimeoutSeconds) {
    const marginRoomMs =
      (settings.visibilityTimeoutSeconds -
        settings.consumerTimeoutSeconds -
        settings.maxBatchingWindowSeconds) *
      1000;
    throw new UnsafeSettingsError(
      `leaseMarginMs is ${settings.leaseMarginMs}: consumerTimeoutSeconds (${settings.consumerTimeoutSeconds}) + maxBatchingWindowSeconds (${settings.maxBatchingWindowSeconds}) + leaseMarginMs reaches visibilityTimeoutSeconds (${settings.visibilityTimeoutSeconds}), so SQS could deliver a record again while its first delivery's lease still holds the claim. Use a leaseMarginMs below ${marginRoomMs}, or a visibilityTimeoutSeconds above ${leaseReach}.`,
    );
  }
  if (
    settings.queueRetentionDays < MIN_QUEUE_RETENTION_DAYS ||
    settings.queueRetentionDays > MAX_QUEUE_RETENTION_DAYS
  ) {
    throw new UnsafeSettingsError(
      `queueRetentionDays is ${settings.queueRetentionDays}: once Meta has its 200 the delivery queue holds the only copy of a delivery, so keep it ${MIN_QUEUE_RETENTION_DAYS} to ${MAX_QUEUE_RETENTION_DAYS} days (default ${MAX_QUEUE_RETENTION_DAYS}, the SQS maximum).`,
    );
  }
  if (settings.maxReceiveCount < MIN_MAX_RECEIVE_COUNT) {
    throw new UnsafeSettingsError(
      `maxReceiveCount is ${settings.maxReceiveCount}: use at least ${MIN_MAX_RECEIVE_COUNT} so that throttling and partial batch failures do not send healthy records to the DLQ.`,
    );
  }
  if (settings.batchSize < 1 || settings.maxConcurrency < 2) {
    throw new UnsafeSettingsError('batchSize must be >= 1 and maxConcurrency >= 2 (the Lambda minimum).');
  }
  const problem = retryBudgetProblem(
    settings,
    options.outageToRideOutSeconds ?? MIN_OUTAGE_RIDDEN_OUT_SECONDS,
  );
  if (problem !== undefined) throw new UnsafeSettingsError(problem);
  return settings;
}

/**
 * The retry budget against the outage it must ride out and the two retentions it must fit in: SQS deletes a
 * message at the queue's retention wherever it is in its retries, and a standard queue's DLQ counts its
 * retention from the message's first enqueue, not from the move.
 */
function retryBudgetProblem(settings: PipelineSettings, outageToRideOut: number): string | undefined {
  const { maxReceiveCount, retryBaseDelaySeconds: base, retryMaxDelaySeconds: max } = settings;
  if (!Number.isInteger(maxReceiveCount) || maxReceiveCount > MAX_MAX_RECEIVE_COUNT) {
    return `maxReceiveCount is ${maxReceiveCount}: SQS takes a whole number up to ${MAX_MAX_RECEIVE_COUNT}.`;
  }
  if (!Number.isInteger(base) || base < 1 || !Number.isInteger(max) || max < base) {
    return `retryBaseDelaySeconds is ${base} and retryMaxDelaySeconds ${max}: use whole seconds, 1 <= retryBaseDelaySeconds <= retryMaxDelaySeconds.`;
  }
  if (max > MAX_RETRY_DELAY_SECONDS) {
    return `retryMaxDelaySeconds is ${max}: SQS keeps a message invisible for at most 12 hours after its receive, and up to 20 minutes of them may pass before the consumer sets the delay; use at most ${MAX_RETRY_DELAY_SECONDS}.`;
  }
  const riddenOut = outageRiddenOutSeconds(settings);
  if (riddenOut < outageToRideOut) {
    const receives = receivesToRideOut(outageToRideOut, settings);
    return `maxReceiveCount ${maxReceiveCount} with retry delays from ${base} s up to ${max} s keeps a record out of the DLQ through a downstream outage of ${hours(riddenOut)} only, at the shortest draws: a backend down for ${hours(outageToRideOut)} would send its records to the DLQ. Use a maxReceiveCount of at least ${receives}, or raise retryMaxDelaySeconds.`;
  }
  const longest = longestTimeInQueueSeconds(settings);
  const retention = Math.min(settings.queueRetentionDays, settings.deadLetterRetentionDays);
  if (longest >= retention * DAY_SECONDS) {
    const perReceive = longest / maxReceiveCount;
    const fitting = Math.max(1, Math.ceil((retention * DAY_SECONDS) / perReceive) - 1);
    const which =
      settings.queueRetentionDays <= settings.deadLetterRetentionDays
        ? `queueRetentionDays (${settings.queueRetentionDays}): SQS would delete it before it reaches the DLQ`
        : `deadLetterRetentionDays (${settings.deadLetterRetentionDays}), counted from its first enqueue: the DLQ would delete it on arrival`;
    return `maxReceiveCount ${maxReceiveCount} with delays up to retryMaxDelaySeconds (${max}) can keep a record retrying for ${days(longest)}, past ${which}. Use a maxReceiveCount of at most ${fitting}, a smaller retryMaxDelaySeconds, or longer retentions.`;
  }
  return undefined;
}

function hours(seconds: number): string {
  return `${Number((seconds / 3600).toFixed(1))} h`;
}

function days(seconds: number): string {
  return `${Number((seconds / DAY_SECONDS).toFixed(1))} days`;
}

/** `seconds` in days to six decimals, rounded up, so that the value shown is one `retentionDays` accepts. */
function daysRoundedUp(seconds: number): number {
  // toPrecision first, so that a float's tail (9.5 days × 1e6 = 9500000.000000002) does not round a unit up.
  return Math.ceil(Number(((seconds / DAY_SECONDS) * 1e6).toPrecision(12))) / 1e6;
}

/** `input` without its undefined entries, so that spreading it over defaults keeps the defaults. */
export function withoutUndefined<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}
