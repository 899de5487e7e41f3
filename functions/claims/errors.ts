/**
 * Errors of the claim store. A duplicate is never an error (it is a claim outcome); these are for the cases
 * where the caller cannot know whether to run the side effect, or where its claim was lost.
 */

export type ClaimOperation = 'claim' | 'complete' | 'release';

export class ClaimStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClaimStoreError';
  }
}

/** The store was built with settings that would break exactly-once (e.g. retention below Meta's retry window). */
export class ClaimStoreConfigError extends ClaimStoreError {
  constructor(message: string) {
    super(message);
    this.name = 'ClaimStoreConfigError';
  }
}

/** DynamoDB did not answer the request: throttling, a 5xx, a timeout or a network failure. Retry later. */
export class TransientClaimStoreError extends ClaimStoreError {
  readonly operation: ClaimOperation;
  readonly key: string;
  readonly transient = true;
  constructor(operation: ClaimOperation, key: string, cause: unknown) {
    super(`${operation} of ${key} failed transiently: ${describe(cause)}`, { cause });
    this.name = 'TransientClaimStoreError';
    this.operation = operation;
    this.key = key;
  }
}

/** DynamoDB refused the request for a reason retrying will not fix (missing table, access denied, validation). */
export class ClaimStoreRequestError extends ClaimStoreError {
  readonly operation: ClaimOperation;
  readonly key: string;
  readonly transient = false;
  constructor(operation: ClaimOperation, key: string, cause: unknown) {
    super(`${operation} of ${key} was refused: ${describe(cause)}`, { cause });
    this.name = 'ClaimStoreRequestError';
    this.operation = operation;
    this.key = key;
  }
}

/** The stored item cannot be classified (unknown `state`): someone other than this store wrote it. */
export class MalformedClaimRecordError extends ClaimStoreError {
  readonly key: string;
  constructor(key: string, detail: string) {
    super(`The claim record of ${key} is malformed: ${detail}`);
    this.name = 'MalformedClaimRecordError';
    this.key = key;
  }
}

/**
 * `complete` found that this worker no longer owns the claim: its lease lapsed and another worker took the
 * event over (or the record expired and was reclaimed or deleted). The item was left unchanged.
 */
export class ClaimLostError extends ClaimStoreError {
  readonly key: string;
  /** The owner token this worker held. */
  readonly owner: string;
  /** The owner now stored, when the item still exists. */
  readonly currentOwner: string | undefined;
  constructor(key: string, owner: string, currentOwner: string | undefined) {
    super(
      currentOwner === undefined
        ? `The claim of ${key} is lost: its record no longer exists.`
        : `The claim of ${key} is lost: another worker took it over.`,
    );
    this.name = 'ClaimLostError';
    this.key = key;
    this.owner = owner;
    this.currentOwner = currentOwner;
  }
}

/** Error names the SDK gives to throttling and server-side failures of DynamoDB. */
const TRANSIENT_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'LimitExceededException',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'TransactionConflictException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);

const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

interface SdkErrorShape {
  name?: unknown;
  code?: unknown;
  $fault?: unknown;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

/**
 * True for failures worth retrying. The SDK has already retried these with backoff before they reach us, so
 * the caller's retry is the SQS redelivery, not an immediate loop.
 */
export function isTransientDynamoDbError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as SdkErrorShape;
  if (typeof e.name === 'string' && TRANSIENT_ERROR_NAMES.has(e.name)) return true;
  if (typeof e.code === 'string' && TRANSIENT_NETWORK_CODES.has(e.code)) return true;
  if (e.$retryable !== undefined && e.$retryable !== null) return true;
  if (e.$fault === 'server') return true;
  const status = e.$metadata?.httpStatusCode;
  return typeof status === 'number' && (status === 429 || status >= 500);
}

/** Wraps an SDK failure into the typed error the caller branches on. */
export function toClaimStoreError(operation: ClaimOperation, key: string, error: unknown): ClaimStoreError {
  if (error instanceof ClaimStoreError) return error;
  return isTransientDynamoDbError(error)
    ? new TransientClaimStoreError(operation, key, error)
    : new ClaimStoreRequestError(operation, key, error);
}

function describe(cause: unknown): string {
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  return String(cause);
}
