/**
 * Records how long each SDK request takes, per operation, from the `deserialize` step (inside the retry
 * loop, so every attempt): the time the client waited on the emulator, including queueing for a socket.
 */
export interface LatencyRecorder {
  /** Per operation: attempts and summed milliseconds. */
  totals(): Record<string, { readonly count: number; readonly totalMs: number }>;
}

type Handler = (args: unknown) => Promise<unknown>;
interface AnyMiddlewareStack {
  add(
    middleware: (next: Handler, context: { commandName?: string }) => Handler,
    options: { step: 'deserialize'; name: string },
  ): void;
}

let recorders = 0;

export function recordLatency(client: { middlewareStack: unknown }): LatencyRecorder {
  const seen: Record<string, { count: number; totalMs: number }> = {};
  (client.middlewareStack as AnyMiddlewareStack).add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const started = performance.now();
      try {
        return await next(args);
      } finally {
        const entry = seen[operation] ?? { count: 0, totalMs: 0 };
        entry.count++;
        entry.totalMs += performance.now() - started;
        seen[operation] = entry;
      }
    },
    { step: 'deserialize', name: `latencyRecorder${++recorders}` },
  );
  return { totals: () => structuredClone(seen) };
}
