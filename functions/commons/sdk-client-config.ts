/**
 * Connection and request timeouts, and SDK-level attempts, of every AWS SDK client the two Lambdas build.
 * Without them the SDK waits on a silent socket for its service default (5 min for DynamoDB and Secrets
 * Manager, 15 min for SQS): one hung connection then burns the whole invocation, and with it the consumer's
 * lease and the receiver's chance to answer 503 before API Gateway gives up.
 *
 * `throwOnRequestTimeout` is required: in @smithy/node-http-handler 4.x a `requestTimeout` alone only logs a
 * warning and lets the request run on.
 *
 * Free of SDK imports (the client constructors type-check the shape), so tests and tools can read the values.
 */

export interface SdkTimeouts {
  /** Most time to open the TCP connection (DNS included); in-Region endpoints answer in milliseconds. */
  readonly connectionTimeoutMs: number;
  /** Most time for one attempt, from sending the request to the end of the answer. */
  readonly requestTimeoutMs: number;
  /** SDK attempts per call, the first included (the SDK's standard retry mode between them). */
  readonly maxAttempts: number;
}

export const SDK_TIMEOUTS = {
  /**
   * Consumer: single-item writes (claim, complete, release, ledger) that answer in single-digit
   * milliseconds. 3 s is hundreds of times a normal answer; 3 attempts with throttling backoff (1 s, 2 s)
   * stay near 12 s, well inside the consumer's 30 s default timeout, leaving time to release the claim or
   * fail the record cleanly.
   */
  consumerDynamoDb: { connectionTimeoutMs: 1_000, requestTimeoutMs: 3_000, maxAttempts: 3 },
  /**
   * Consumer: quarantine writes to the quarantine queue (up to 1 MiB, a few milliseconds of transfer inside AWS) and
   * visibility changes. The SDK retries, because the visibility change has no retry loop of its own; the
   * quarantine's own retries stop at its deadline (`QUARANTINE_BUDGET_MS`), so the nesting stays bounded.
   */
  consumerSqs: { connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000, maxAttempts: 3 },
  /**
   * Receiver: SendMessageBatch of up to 1 MiB. One SDK attempt, because `SqsBatchSender` owns the retries
   * (entry-level, with a deadline); nested retries would multiply attempts past the receiver's budget
   * (`RETRY_BUDGET_MS`) and its 10 s timeout.
   */
  receiverSqs: { connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000, maxAttempts: 1 },
  /**
   * Receiver: one small GetSecretValue per container every 5 minutes, before it can answer anything. Two
   * attempts stay near 5 s; the receiver's retry budget counts from before this read, so a slow read
   * shortens the enqueue retries instead of pushing the answer past the function timeout.
   */
  receiverSecretsManager: { connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000, maxAttempts: 2 },
  /**
   * Consumer: one small GetSecretValue per container (the log digest key), before its first batch. A read that
   * still fails leaves a per-container key in place (create-consumer.ts), so two attempts are enough.
   */
  consumerSecretsManager: { connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000, maxAttempts: 2 },
  /**
   * Archiver: one PutObject per arrival hour of a batch (a few MB of gzip at most, the batch being capped by
   * Lambda's 6 MB payload: tens of milliseconds of transfer inside AWS), off the acknowledgement path; the
   * SDK's retries stay well inside the archiver's timeout. A batch that still fails comes back from the queue.
   */
  archiverS3: { connectionTimeoutMs: 1_000, requestTimeoutMs: 3_000, maxAttempts: 3 },
} as const satisfies Record<string, SdkTimeouts>;

/** Which Lambda's client, for which service. */
export type SdkClientUse = keyof typeof SDK_TIMEOUTS;

/** The part of an SDK v3 client's configuration that this module sets. */
export interface SdkClientConfig {
  readonly maxAttempts: number;
  readonly requestHandler: {
    readonly connectionTimeout: number;
    readonly requestTimeout: number;
    readonly throwOnRequestTimeout: true;
  };
}

/** A client's constructor argument, e.g. `new DynamoDBClient(sdkClientConfig('consumerDynamoDb'))`. */
export function sdkClientConfig(use: SdkClientUse): SdkClientConfig {
  const { connectionTimeoutMs, requestTimeoutMs, maxAttempts } = SDK_TIMEOUTS[use];
  return {
    maxAttempts,
    requestHandler: {
      connectionTimeout: connectionTimeoutMs,
      requestTimeout: requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  };
}

/** Throttling backoff of the SDK's standard retry mode: up to 1 s before the first retry, doubling after. */
const THROTTLING_BACKOFF_BASE_MS = 1_000;

/**
 * The longest one SDK call can take when every attempt times out or is throttled: each attempt's request
 * timeout plus the largest backoff before each retry (a server's Retry-After hint may add up to 5 s more
 * per retry).
 */
export function worstCaseCallMs(use: SdkClientUse): number {
  const { requestTimeoutMs, maxAttempts } = SDK_TIMEOUTS[use];
  let backoff = 0;
  for (let retry = 0; retry < maxAttempts - 1; retry++) backoff += THROTTLING_BACKOFF_BASE_MS * 2 ** retry;
  return maxAttempts * requestTimeoutMs + backoff;
}
