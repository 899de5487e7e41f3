/**
 * Waits until each subscriber has done the smoke test's events: reads their claims (the claim table, under
 * each subscriber's namespace) until every one is `done` or the time is up, and says for each what it saw.
 */
import { storageKey } from 'whatsapp-webhook-dedup/functions/claims/storage-key';
import { ClaimRecords } from '../adapters/claim-records.ts';
import { type ClaimStatus, viewClaim } from '../inspect/claim-view.ts';
import type { OpsTarget } from '../target/ops-target.ts';

export interface AwaitedClaim {
  readonly subscriber: string;
  readonly lane: string;
  readonly key: string;
}

export interface ClaimOutcome extends AwaitedClaim {
  /** `missing`: no claim was ever written. */
  readonly status: ClaimStatus | 'missing';
  /** The claim's `doneAt` less the moment the body was sent (two clocks: ops's and the consumer's). */
  readonly doneAfterMs: number | undefined;
}

export interface AwaitOptions {
  /** When the body holding the claim's event was sent: one time for all, or each claim's own. */
  readonly sentAtMs: number | ((claim: AwaitedClaim) => number);
  readonly deadlineMs: number;
  readonly clock: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** @default 200 */
  readonly pollIntervalMs?: number;
}

export async function awaitClaimsDone(
  target: OpsTarget,
  namespaces: ReadonlyMap<string, string | undefined>,
  awaited: readonly AwaitedClaim[],
  options: AwaitOptions,
): Promise<ClaimOutcome[]> {
  const claims = new ClaimRecords({ documentClient: target.documentClient, tableName: target.tableName });
  const pkOf = (claim: AwaitedClaim) => storageKey(claim.key, namespaces.get(claim.subscriber));
  const sentAt = (claim: AwaitedClaim) =>
    typeof options.sentAtMs === 'number' ? options.sentAtMs : options.sentAtMs(claim);
  for (;;) {
    const found = await claims.readMany(awaited.map(pkOf));
    const now = options.clock();
    const outcomes = awaited.map((claim): ClaimOutcome => {
      const pk = pkOf(claim);
      const snapshot = found.get(pk);
      if (snapshot === undefined) return { ...claim, status: 'missing', doneAfterMs: undefined };
      const view = viewClaim(pk, snapshot, now);
      const doneAt = snapshot.doneAt;
      return {
        ...claim,
        status: view.status,
        doneAfterMs: view.status === 'done' && doneAt !== undefined ? doneAt - sentAt(claim) : undefined,
      };
    });
    if (outcomes.every((outcome) => outcome.status === 'done') || now >= options.deadlineMs) return outcomes;
    await options.sleep(Math.min(options.pollIntervalMs ?? 200, Math.max(0, options.deadlineMs - now)));
  }
}

/** Why a claim is not done, for the operator. */
export function notDoneReason(outcome: ClaimOutcome): string {
  switch (outcome.status) {
    case 'done':
      return 'done';
    case 'missing':
      return 'never claimed: not in its queue (the receiver did not route it there), its consumer is paused or failing, or it has no handler for it and claimUnhandledEvents is false';
    case 'in-flight':
      return 'claim still in flight when the time ran out: its handler is running, or slow';
    case 'lease-lapsed':
      return 'lease lapsed: the consumer crashed or timed out during the handler';
    case 'expired':
      return 'claim expired';
    case 'unknown-state':
      return 'a claim item the consumer did not write';
  }
}
