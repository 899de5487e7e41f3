/**
 * What to do with an event whose claim another delivery holds right now (docs/design.md §2 "In flight"; see
 * docs/consumer.md). Pure: no I/O.
 *
 * The holder is known from the `messageId` the claim stored. Acknowledging the duplicate is safe only when a
 * *different* queue message holds the claim: if that holder fails, its own message is retried and carries
 * the event. When the same queue message holds it (SQS delivered one message to two invocations, or a poller
 * retried), acknowledging would delete the only message that can retry the event: if the first delivery's
 * handler then fails, the event is lost for good. So the record stays in the queue and comes back when the
 * lease ends, by which time the claim is done (duplicate-done), released (fresh) or lapsed (takeover).
 * A claim without `messageId` (written before the attribute existed) is treated as held by this message:
 * a wasted retry at worst, never a lost event.
 */
import type { ClaimSnapshot } from '../claims/claim-record.ts';

/** SQS's longest visibility timeout (12 hours). */
export const MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200;

export type InFlightDecision =
  | { readonly acknowledge: true }
  /** `redeliverInSeconds`: when the holder's lease ends; undefined leaves the queue's visibility timeout. */
  | { readonly acknowledge: false; readonly redeliverInSeconds: number | undefined };

export function decideInFlight(
  holder: Pick<ClaimSnapshot, 'messageId' | 'leaseUntil'>,
  messageId: string,
  nowMs: number,
): InFlightDecision {
  if (holder.messageId !== undefined && holder.messageId !== messageId) return { acknowledge: true };
  return { acknowledge: false, redeliverInSeconds: secondsUntilLeaseEnds(holder.leaseUntil, nowMs) };
}

/**
 * Whole seconds until the lease has certainly lapsed: the claim condition is `leaseUntil < now`, so one
 * second past it. Clamped to what SQS accepts.
 */
export function secondsUntilLeaseEnds(leaseUntil: number | undefined, nowMs: number): number | undefined {
  if (leaseUntil === undefined || !Number.isFinite(leaseUntil)) return undefined;
  const seconds = Math.ceil((leaseUntil - nowMs) / 1000) + 1;
  return Math.min(Math.max(seconds, 0), MAX_VISIBILITY_TIMEOUT_SECONDS);
}
