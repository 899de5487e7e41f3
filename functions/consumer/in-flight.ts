/**
 * What to do with an event whose claim another delivery holds right now (docs/design.md §2 "In flight"; see
 * docs/consumer.md). Pure: no I/O.
 *
 * The record is never acknowledged: it stays in the queue and comes back when the holder's lease ends, by
 * which time the claim is done (duplicate-done, acknowledged then), released (fresh: this record runs it) or
 * lapsed (takeover). Acknowledging was thought safe when a *different* queue message holds the claim, since
 * that message is retried if its holder fails; but SQS may hand this record's own message to two invocations
 * at once, and a delete through the older receipt handle may still be applied: when the other delivery of
 * this message takes the claim over (the holder released it) and fails, the acknowledgement deletes the only
 * message that could retry the event, while the holder's message, found in flight too, was acknowledged as
 * well. The protocol checker found it (`npm run check:protocol -- --seed 9147`). Holding costs one more
 * receive and one failed conditional write per duplicate that arrives while its event is in flight.
 */
import type { ClaimSnapshot } from '../claims/claim-record.ts';

/** SQS's longest visibility timeout (12 hours). */
export const MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200;

/** When to bring back a record whose event is in flight: the holder's lease end; undefined leaves the queue's visibility timeout. */
export function inFlightRedeliverySeconds(
  holder: Pick<ClaimSnapshot, 'leaseUntil'>,
  nowMs: number,
): number | undefined {
  return secondsUntilLeaseEnds(holder.leaseUntil, nowMs);
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
