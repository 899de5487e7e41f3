/**
 * The order of WhatsApp message statuses (docs/design.md §3). Pure: no I/O.
 *
 * A customer with several devices can produce both `delivered` and `failed` for one message, and `delivered`
 * may be skipped (read at once). So `failed` ranks between `sent` and `delivered`: it becomes current over
 * `sent` (or nothing), a `delivered`, `read` or `played` advances past it, and a `failed` that comes after one
 * of them is merged. Ranks only grow, so "none of delivered, read, played was recorded" is "the current rank
 * is below delivered's", one comparison in the ledger's conditional write.
 *
 * The ranks of `sent`, `delivered`, `read` and `played` are stored in ledger items (`currentRank`) and keep
 * their values, so that items written by deployed stacks keep their meaning. A status Meta adds later and
 * this table does not know ranks 0: its time is recorded, but it only becomes current on a message that has
 * no status yet.
 *
 * @example
 * advancesStatus('failed', 'delivered'); // true: another device got it
 * advancesStatus('read', 'failed'); // false: merged, `read` stays current
 */
export const STATUS_RANK: Readonly<Record<string, number>> = {
  sent: 1,
  failed: 1.5,
  delivered: 2,
  read: 3,
  played: 4,
};

export const UNKNOWN_STATUS_RANK = 0;

/**
 * The rank releases before `failed` moved below `delivered` stored for it (it ranked above everything and
 * nothing moved past it). Ledger items carrying it live until their retention ends
 * (`DEFAULT_SETTINGS.retentionDays` by default); the ledger reads them by the current rule (status-ledger.ts).
 * No other status was ever stored at this rank.
 */
export const LEGACY_FAILED_RANK = 5;

export function rankOfStatus(status: string): number {
  return Object.hasOwn(STATUS_RANK, status) ? (STATUS_RANK[status] as number) : UNKNOWN_STATUS_RANK;
}

/**
 * Whether a status may replace the current one: it ranks higher. The ledger's conditional write encodes the
 * same rule in DynamoDB (`currentRank < :rank`); this function is its readable twin, used by tests and by
 * callers that fold statuses in memory. No status is terminal: `played` is simply the highest rank.
 */
export function advancesStatus(current: string | undefined, next: string): boolean {
  if (current === undefined) return true;
  return rankOfStatus(current) < rankOfStatus(next);
}

/**
 * The known statuses that rank above `status`, highest first. Over a ledger item written with
 * {@link LEGACY_FAILED_RANK}, `status` advances only when none of them was recorded.
 */
export function statusesRankedAbove(status: string): readonly string[] {
  const rank = rankOfStatus(status);
  return Object.keys(STATUS_RANK)
    .filter((other) => rankOfStatus(other) > rank)
    .sort((a, b) => rankOfStatus(b) - rankOfStatus(a));
}

/**
 * The current status of a set of recorded statuses by the current rule: the highest-ranked one. Undefined
 * when none is known. Used to read a ledger item written with {@link LEGACY_FAILED_RANK}.
 */
export function highestStatus(statuses: Iterable<string>): string | undefined {
  let highest: string | undefined;
  for (const status of statuses) {
    if (rankOfStatus(status) === UNKNOWN_STATUS_RANK) continue;
    if (highest === undefined || rankOfStatus(status) > rankOfStatus(highest)) highest = status;
  }
  return highest;
}
