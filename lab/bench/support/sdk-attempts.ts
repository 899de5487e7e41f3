/**
 * Runs `around` on every HTTP attempt of an SDK client: it sits in the `deserialize` step, inside the SDK's
 * retry loop, so a retried call passes once per attempt. `operation` is the command name without `Command`
 * (`PutItem`, `SendMessageBatch`, …). A DocumentClient shares its base client's stack.
 */
type Handler = (args: unknown) => Promise<unknown>;
interface AnyMiddlewareStack {
  add(
    middleware: (next: Handler, context: { commandName?: string }) => Handler,
    options: { step: 'deserialize'; name: string },
  ): void;
}

let added = 0;

export function aroundEveryAttempt(
  client: { middlewareStack: unknown },
  label: string,
  around: (operation: string, send: () => Promise<unknown>) => Promise<unknown>,
): void {
  (client.middlewareStack as AnyMiddlewareStack).add(
    (next, context) => (args) => {
      const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
      return around(operation, () => next(args));
    },
    { step: 'deserialize', name: `${label}${++added}` },
  );
}
