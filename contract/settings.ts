/**
 * Pipeline settings: the one source of truth for the CDK construct, the local stack and the tests, with the
 * rules that refuse combinations that would lose or hide events. Plain TypeScript (no aws-cdk-lib, no AWS SDK),
 * so that the Lambda code, the local stack and the tests can load it cheaply.
 */

export const MIN_RETENTION_DAYS = 7;
/**
 * Once the receiver answered 200, Meta never sends the delivery again and the delivery queue holds the only
 * copy: an outage of the consumer longer than the queue's retention loses events. A week covers a long
 * weekend plus the time to notice and fix; 14 days is the SQS maximum.
 */
export const MIN_QUEUE_RETENTION_DAYS = 7;
export const MAX_QUEUE_RETENTION_DAYS = 14;
export const MIN_MAX_RECEIVE_COUNT = 5;
/** AWS guidance for SQS event sources: visibility timeout at least 6× the function timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

export interface PipelineSettings {
  /** Days a done claim keeps blocking retries. Meta retries for up to 7 days. */
  readonly retentionDays: number;
  /** Margin added to the invocation's remaining time to form the processing lease. */
  readonly leaseMarginMs: number;
  readonly consumerTimeoutSeconds: number;
  readonly receiverTimeoutSeconds: number;
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  readonly maxConcurrency: number;
  readonly visibilityTimeoutSeconds: number;
  readonly maxReceiveCount: number;
  /** Largest SQS message body the receiver writes; bigger deliveries are split on event boundaries. */
  readonly maximumMessageSizeBytes: number;
  readonly queueRetentionDays: number;
  readonly deadLetterRetentionDays: number;
}

export type PipelineSettingsInput = Partial<PipelineSettings>;

const BASE: Omit<PipelineSettings, 'visibilityTimeoutSeconds'> = {
  retentionDays: 8,
  leaseMarginMs: 10_000,
  consumerTimeoutSeconds: 30,
  receiverTimeoutSeconds: 10,
  batchSize: 10,
  maxBatchingWindowSeconds: 1,
  maxConcurrency: 5,
  maxReceiveCount: 5,
  maximumMessageSizeBytes: 256 * 1024,
  queueRetentionDays: MAX_QUEUE_RETENTION_DAYS,
  deadLetterRetentionDays: 14,
};

/**
 * The defaults, resolved: what a reader of one setting (the Lambda functions, the claim store) falls back to
 * when the setting is not given.
 */
export const DEFAULT_SETTINGS: PipelineSettings = {
  ...BASE,
  visibilityTimeoutSeconds: minimumVisibilityTimeoutSeconds(BASE),
};

/**
 * The rules on one setting alone, as the message to show when the value breaks them. The consumer checks the
 * values it reads with these (its claim store does, at start); `resolveSettings` applies them together with
 * the rules that compare settings, which only the CDK construct and the local stack can check, since only
 * they know every setting.
 */
export function retentionDaysProblem(retentionDays: number): string | undefined {
  if (Number.isFinite(retentionDays) && retentionDays >= MIN_RETENTION_DAYS) return undefined;
  return `retentionDays is ${retentionDays}, but Meta retries a webhook for up to 7 days: use at least ${MIN_RETENTION_DAYS} (default ${BASE.retentionDays}).`;
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

/**
 * Fills defaults and refuses unsafe values and combinations with a message that says what to change. Runs
 * where every setting is known: the CDK construct (at synth) and the local stack (at start).
 */
export function resolveSettings(input: PipelineSettingsInput = {}): PipelineSettings {
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
  return settings;
}

/** `input` without its undefined entries, so that spreading it over defaults keeps the defaults. */
export function withoutUndefined<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}
