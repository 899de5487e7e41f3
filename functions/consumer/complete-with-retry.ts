import { setTimeout as delay } from 'node:timers/promises';
import type { ClaimHandle, ClaimStore, CompletedClaim } from '../claims/claim-store.ts';
import { ClaimLostError, isTransientDynamoDbError } from '../claims/errors.ts';

export interface CompletionRetryPolicy {
  /** Retries after the first attempt. @default 3 */
  readonly retries: number;
  /** First backoff; doubles each retry, half of it jittered. @default 100 */
  readonly baseDelayMs: number;
  /** Never sleep past this many ms before the invocation's deadline. @default 1000 */
  readonly deadlineReserveMs: number;
}

export const DEFAULT_COMPLETION_RETRY: CompletionRetryPolicy = {
  retries: 3,
  baseDelayMs: 100,
  deadlineReserveMs: 1000,
};

function isRetryable(error: unknown): boolean {
  if (error instanceof ClaimLostError) return false;
  if ((error as { transient?: unknown }).transient === true) return true;
  return isTransientDynamoDbError((error as { cause?: unknown }).cause ?? error);
}

export interface CompletionRetryOptions {
  /** Milliseconds left in the invocation: no retry sleeps past `policy.deadlineReserveMs` before it. */
  readonly remainingTimeMs: () => number;
  readonly policy?: CompletionRetryPolicy;
  /** @default Math.random */
  readonly random?: () => number;
  /** @default setTimeout from node:timers/promises */
  readonly sleep?: (ms: number) => Promise<unknown>;
}

/**
 * Marks a claim done after its side effect ran. The SDK has already retried each request; these retries
 * cover a longer throttling burst, because giving up here leaves the event open to a second effect. A lost
 * claim is never retried: another worker owns the event now. Throws the last error when it gives up.
 */
export async function completeWithRetry(
  claims: Pick<ClaimStore, 'complete'>,
  claim: ClaimHandle,
  options: CompletionRetryOptions,
): Promise<CompletedClaim> {
  const { remainingTimeMs, policy = DEFAULT_COMPLETION_RETRY, random = Math.random, sleep = delay } = options;
  for (let retry = 0; ; retry++) {
    try {
      return await claims.complete(claim);
    } catch (error) {
      if (retry >= policy.retries || !isRetryable(error)) throw error;
      const ceiling = policy.baseDelayMs * 2 ** retry;
      const backoff = Math.round(ceiling / 2 + (random() * ceiling) / 2);
      if (remainingTimeMs() - backoff < policy.deadlineReserveMs) throw error;
      await sleep(backoff);
    }
  }
}
