/**
 * Pipeline settings: the one source of truth for the CDK construct, the local stack and the tests.
 * Plain TypeScript (no aws-cdk-lib import) so the local stack and the Lambda-side tests can load it cheaply.
 */

/** The claim table's key schema and TTL attribute (DESIGN §2). */
export const CLAIM_TABLE_SCHEMA = {
  partitionKey: 'pk',
  timeToLiveAttribute: 'expiresAt',
} as const;

export const MIN_RETENTION_DAYS = 7;
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
  queueRetentionDays: 4,
  deadLetterRetentionDays: 14,
};

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

/** Fills defaults and refuses unsafe combinations with a message that says what to change. */
export function resolveSettings(input: PipelineSettingsInput = {}): PipelineSettings {
  const merged = { ...BASE, ...withoutUndefined(input) };
  const minimumVisibility = minimumVisibilityTimeoutSeconds(merged);
  const settings: PipelineSettings = {
    ...merged,
    visibilityTimeoutSeconds: input.visibilityTimeoutSeconds ?? minimumVisibility,
  };
  if (settings.retentionDays < MIN_RETENTION_DAYS) {
    throw new UnsafeSettingsError(
      `retentionDays is ${settings.retentionDays}, but Meta retries a webhook for up to 7 days: use at least ${MIN_RETENTION_DAYS} (default 8).`,
    );
  }
  if (settings.visibilityTimeoutSeconds < minimumVisibility) {
    throw new UnsafeSettingsError(
      `visibilityTimeoutSeconds is ${settings.visibilityTimeoutSeconds}, below ${VISIBILITY_TIMEOUT_FACTOR} × consumerTimeoutSeconds (${settings.consumerTimeoutSeconds}) + maxBatchingWindowSeconds (${settings.maxBatchingWindowSeconds}) = ${minimumVisibility}: a record could reach a second consumer while the first still holds it.`,
    );
  }
  if (settings.maxReceiveCount < MIN_MAX_RECEIVE_COUNT) {
    throw new UnsafeSettingsError(
      `maxReceiveCount is ${settings.maxReceiveCount}: use at least ${MIN_MAX_RECEIVE_COUNT} so that throttling and partial batch failures do not send healthy records to the DLQ.`,
    );
  }
  if (settings.leaseMarginMs < 0 || settings.batchSize < 1 || settings.maxConcurrency < 2) {
    throw new UnsafeSettingsError(
      'leaseMarginMs must be >= 0, batchSize >= 1 and maxConcurrency >= 2 (the Lambda minimum).',
    );
  }
  return settings;
}

function withoutUndefined<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}
