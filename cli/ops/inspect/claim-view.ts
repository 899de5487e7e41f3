/**
 * A stored claim as an operator needs to read it: what the next delivery of its event would meet
 * (docs/design.md §2), with every time as an ISO date. Pure: `nowMs` comes from the caller.
 */
import type { ClaimSnapshot } from 'whatsapp-webhook-dedup/functions/claims/claim-record';
import { isLeaseLapsed, isRecordExpired, MS_PER_SECOND } from 'whatsapp-webhook-dedup/functions/claims/lease';

/**
 * - `done`: the effect ran; every delivery of the event until `expiresAt` is skipped as a duplicate.
 * - `in-flight`: a worker holds the claim and its lease runs: it may be running the effect right now.
 * - `lease-lapsed`: the worker vanished (crash, timeout); the next delivery takes the claim over.
 * - `expired`: past its retention; the next delivery claims the key as new (TTL deletes it eventually).
 * - `unknown-state`: an item the consumer did not write; the consumer refuses to claim over it.
 */
export type ClaimStatus = 'done' | 'in-flight' | 'lease-lapsed' | 'expired' | 'unknown-state';

export interface ClaimView {
  readonly pk: string;
  readonly status: ClaimStatus;
  /** The `state` attribute as stored. */
  readonly state: string | undefined;
  readonly field: string | undefined;
  readonly attempt: number | undefined;
  readonly claimedAt: string | undefined;
  readonly leaseUntil: string | undefined;
  readonly doneAt: string | undefined;
  readonly expiresAt: string | undefined;
  /** The queue message whose delivery took the claim. */
  readonly messageId: string | undefined;
  /** The claim's owner token (one per claim attempt). */
  readonly owner: string | undefined;
}

export function viewClaim(pk: string, claim: ClaimSnapshot, nowMs: number): ClaimView {
  return {
    pk,
    status: claimStatus(claim, nowMs),
    state: claim.state,
    field: claim.field,
    attempt: claim.attempt,
    claimedAt: isoDate(claim.claimedAt),
    leaseUntil: isoDate(claim.leaseUntil),
    doneAt: isoDate(claim.doneAt),
    expiresAt: isoDate(claim.expiresAt === undefined ? undefined : claim.expiresAt * MS_PER_SECOND),
    messageId: claim.messageId,
    owner: claim.owner,
  };
}

export function claimStatus(claim: ClaimSnapshot, nowMs: number): ClaimStatus {
  if (isRecordExpired(claim, nowMs)) return 'expired';
  if (claim.state === 'done') return 'done';
  if (claim.state !== 'processing') return 'unknown-state';
  return isLeaseLapsed(claim, nowMs) ? 'lease-lapsed' : 'in-flight';
}

/** One phrase per status, for text output. */
export const CLAIM_STATUS_TEXT: Readonly<Record<ClaimStatus, string>> = {
  done: 'done: deliveries of this event are skipped as duplicates until it expires',
  'in-flight': 'in flight: a worker holds the claim and may be running the effect now',
  'lease-lapsed': 'lease lapsed: its worker vanished; the next delivery takes the claim over',
  expired: 'expired: the next delivery claims the event as new',
  'unknown-state': 'unknown state: not written by the consumer, which will not claim over it',
};

function isoDate(epochMs: number | undefined): string | undefined {
  return epochMs === undefined ? undefined : new Date(epochMs).toISOString();
}
