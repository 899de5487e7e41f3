/**
 * The order of WhatsApp message statuses (docs/design.md §3). Pure: no I/O.
 *
 * `failed` ranks above everything so that it always becomes current and nothing moves past it (terminal).
 * A status Meta adds later and this table does not know ranks 0: its time is recorded, but it only becomes
 * current on a message that has no status yet.
 */
export const STATUS_RANK: Readonly<Record<string, number>> = {
  sent: 1,
  delivered: 2,
  read: 3,
  played: 4,
  failed: 5,
};

export const UNKNOWN_STATUS_RANK = 0;

export function rankOfStatus(status: string): number {
  return Object.hasOwn(STATUS_RANK, status) ? (STATUS_RANK[status] as number) : UNKNOWN_STATUS_RANK;
}

export function isTerminalStatus(status: string): boolean {
  return status === 'failed';
}

/**
 * Whether a status may replace the current one. The ledger's conditional write encodes the same rule in
 * DynamoDB (`currentRank < :rank`); this function is its readable twin, used by tests and by callers that
 * fold statuses in memory.
 */
export function advancesStatus(current: string | undefined, next: string): boolean {
  if (current === undefined) return true;
  return rankOfStatus(current) < rankOfStatus(next);
}
