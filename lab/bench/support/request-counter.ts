import { aroundEveryAttempt } from './sdk-attempts.ts';

/**
 * Counts the requests an SDK client sends, per operation (`PutItem`, `GetItem`, `SendMessage`, …), to assert
 * cost floors. It sits in the `deserialize` step, inside the SDK's retry loop, so every HTTP attempt counts,
 * failed ones (a refused condition, a throttle) included: that is what AWS bills.
 */
export interface RequestCounter {
  /** Requests of one operation, e.g. `count('PutItem')`. */
  count(operation: string): number;
  /** All operations seen so far. */
  counts(): Record<string, number>;
  total(): number;
  reset(): void;
}

/** Adds a counting middleware to `client` (a DocumentClient shares its base client's stack). */
export function countRequests(client: { middlewareStack: unknown }): RequestCounter {
  let seen: Record<string, number> = {};
  aroundEveryAttempt(client, 'requestCounter', (operation, send) => {
    seen[operation] = (seen[operation] ?? 0) + 1;
    return send();
  });
  return {
    count: (operation) => seen[operation] ?? 0,
    counts: () => ({ ...seen }),
    total: () => Object.values(seen).reduce((sum, n) => sum + n, 0),
    reset: () => {
      seen = {};
    },
  };
}
