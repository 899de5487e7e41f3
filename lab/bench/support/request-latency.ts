import { setTimeout as sleep } from 'node:timers/promises';
import { aroundEveryAttempt } from './sdk-attempts.ts';

/**
 * Records how long each SDK request takes, per operation, from the `deserialize` step (inside the retry
 * loop, so every attempt): the time the client waited on the emulator, including queueing for a socket.
 */
export interface LatencyRecorder {
  /** Per operation: attempts and summed milliseconds. */
  totals(): Record<string, { readonly count: number; readonly totalMs: number }>;
}

export function recordLatency(client: { middlewareStack: unknown }): LatencyRecorder {
  const seen: Record<string, { count: number; totalMs: number }> = {};
  aroundEveryAttempt(client, 'latencyRecorder', async (operation, send) => {
    const started = performance.now();
    try {
      return await send();
    } finally {
      const entry = seen[operation] ?? { count: 0, totalMs: 0 };
      entry.count++;
      entry.totalMs += performance.now() - started;
      seen[operation] = entry;
    }
  });
  return { totals: () => structuredClone(seen) };
}

/**
 * Adds `roundTripMs` of network to every attempt, half on the way out and half on the way back: DynamoDB
 * Local answers from the same machine in well under a millisecond when idle, where DynamoDB answers a Lambda
 * in the same region in a few milliseconds.
 */
export function addRoundTrip(client: { middlewareStack: unknown }, roundTripMs: number): void {
  aroundEveryAttempt(client, 'addedRoundTrip', async (_operation, send) => {
    await sleep(roundTripMs / 2);
    try {
      return await send();
    } finally {
      await sleep(roundTripMs / 2);
    }
  });
}
