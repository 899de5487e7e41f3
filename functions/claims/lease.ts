/**
 * Lease and record-expiry arithmetic of the claim protocol (docs/design.md §2), and the classification of an existing
 * claim record. Pure: every function takes `nowMs` from the caller's clock.
 *
 * Two clocks run on every claim record, and they answer different questions:
 *
 *   claim (t0)          deadline    leaseUntil                                    expiresAt = t0 + retention
 *     |--- processing ------|-----------|--- lapsed: the next claim TAKES OVER ----------|--- RECLAIMED ->
 *     |  retries are duplicate-in-flight |   (the worker died, timed out, or lost the      |
 *     |                                  |    record in a crash before release)            |
 *
 *   complete (t1)                                                  expiresAt = t1 + retention     TTL delete
 *     |--- done: every retry (Meta retries for up to 7 days) is duplicate-done ---|--- RECLAIMED ---|-> gone
 *
 * - `leaseUntil` (epoch ms) says how long a worker may still be running the side effect: the invocation's
 *   deadline plus a margin for clock skew between Lambda hosts. It is always written, so a claim whose worker
 *   vanished is always taken over eventually (Powertools writes none when the remaining time is unknown, and
 *   such a record blocks its event until the record expires).
 * - `expiresAt` (epoch s, the TTL attribute) says how long the record blocks retries at all. After
 *   completion it is `doneAt + retention`: Meta's retries stop 7 days after the first delivery, which came
 *   before completion, so a retention of at least 7 days counted from completion covers every retry.
 *   At claim time it is already `claimedAt + retention`, never before `leaseUntil`: an abandoned claim is
 *   then cleaned up by TTL like any other record, and the expiry branch of the claim condition can never let
 *   a second worker in while the first one's lease is still running.
 * - TTL deletes an expired item only eventually (typically within days), so expiry is checked in the claim
 *   condition itself; a claim over an expired but present record is `reclaimed`, as if it were absent.
 */
import type { ClaimSnapshot } from './claim-record.ts';

export const MS_PER_SECOND = 1000;
export const SECONDS_PER_DAY = 86_400;
/** The longest a Lambda invocation can run: the lease used when the caller cannot say when its deadline is. */
export const MAX_LAMBDA_DURATION_MS = 15 * 60 * MS_PER_SECOND;

export function toEpochSeconds(epochMs: number): number {
  return Math.floor(epochMs / MS_PER_SECOND);
}

/** The invocation's deadline from Lambda's `context.getRemainingTimeInMillis()`. */
export function deadlineFromRemainingTime(nowMs: number, remainingTimeMs: number): number {
  return nowMs + Math.max(0, remainingTimeMs);
}

/**
 * The end of the processing lease: the invocation's deadline (never earlier than now) plus the margin. An
 * unknown deadline (NaN, ±Infinity) is treated as the longest possible invocation, so the lease is never absent.
 */
export function leaseUntilFor(nowMs: number, deadlineMs: number, leaseMarginMs: number): number {
  const deadline = Number.isFinite(deadlineMs) ? Math.max(deadlineMs, nowMs) : nowMs + MAX_LAMBDA_DURATION_MS;
  return deadline + leaseMarginMs;
}

/** Epoch seconds at which a record written at `nowMs` stops blocking retries, never before the lease ends. */
export function expiresAtFor(nowMs: number, retentionDays: number, leaseUntilMs = nowMs): number {
  const retentionEnd = toEpochSeconds(nowMs) + Math.ceil(retentionDays * SECONDS_PER_DAY);
  return Math.max(retentionEnd, Math.ceil(leaseUntilMs / MS_PER_SECOND) + 1);
}

/** Mirrors the claim condition's `expiresAt < :nowS`. A record without expiry never expires. */
export function isRecordExpired(record: Pick<ClaimSnapshot, 'expiresAt'>, nowMs: number): boolean {
  return record.expiresAt !== undefined && record.expiresAt < toEpochSeconds(nowMs);
}

/** Mirrors the claim condition's `state = processing AND leaseUntil < :nowMs`. */
export function isLeaseLapsed(record: Pick<ClaimSnapshot, 'state' | 'leaseUntil'>, nowMs: number): boolean {
  return record.state === 'processing' && record.leaseUntil !== undefined && record.leaseUntil < nowMs;
}

/**
 * How this worker obtained the claim:
 * - `fresh`: nobody had claimed the key.
 * - `reclaimed`: a claim existed but had expired (older than the retention), so the key counts as new.
 * - `takeover`: another worker claimed the key and its lease lapsed without completing: it crashed or timed
 *   out, possibly AFTER running its side effect (see docs/consumer.md, "the effect→complete window"). A
 *   handler whose effect must not happen twice can check its own system here, or pass `key` as an
 *   idempotency key to the API it calls.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onMessage({ key, claimedAs }) {
 *     // A takeover may follow a run that did the effect but died before completing: look first.
 *     const url = `https://crm.example.com/tickets/${encodeURIComponent(key)}`;
 *     if (claimedAs === 'takeover' && (await fetch(url)).ok) return;
 *     await fetch(url, { method: 'PUT' });
 *   },
 * });
 * ```
 */
export type ClaimedAs = 'fresh' | 'takeover' | 'reclaimed';
export type DuplicateOutcome = 'duplicate-done' | 'duplicate-in-flight';

/**
 * How a successful claim relates to the record it replaced (`ReturnValues: ALL_OLD`), evaluated with the same
 * `nowMs` the condition was sent with. Expiry wins over a lapsed lease: an expired record is logically absent
 * (TTL may delete it at any moment), so its event starts a new life at attempt 1.
 */
export function classifyAcquired(previous: ClaimSnapshot | undefined, nowMs: number): ClaimedAs {
  if (previous === undefined) return 'fresh';
  if (isRecordExpired(previous, nowMs)) return 'reclaimed';
  return 'takeover';
}

/** The attempt number of a new claim: one more than the record it takes over, 1 otherwise. */
export function nextAttempt(outcome: ClaimedAs, previous: ClaimSnapshot | undefined): number {
  return outcome === 'takeover' ? (previous?.attempt ?? 1) + 1 : 1;
}

/**
 * Why a claim was refused, from the record the failed condition returned. `undefined` means the record is not
 * one this store wrote (unknown state); the caller decides how to report that.
 */
export function classifyBlocking(record: Pick<ClaimSnapshot, 'state'>): DuplicateOutcome | undefined {
  if (record.state === 'done') return 'duplicate-done';
  if (record.state === 'processing') return 'duplicate-in-flight';
  return undefined;
}
