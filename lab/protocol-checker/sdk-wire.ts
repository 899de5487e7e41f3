/**
 * The simulated clients never touch a wire, so the SDK middlewares that only dress an HTTP request (signing,
 * user agent, content length, host header, recursion detection) or retry it (the checker decides about
 * retries: `maxAttempts` is 1) are dropped. What the code under test relies on stays: the commands, the
 * document client's marshalling and unmarshalling, the SDK's error classes. Signing alone costs more than
 * the rest of a simulated request.
 */

interface MiddlewareStackOwner {
  readonly middlewareStack: { remove(nameOrReference: string): boolean };
}

export const WIRE_MIDDLEWARES = [
  'httpSigningMiddleware',
  'getUserAgentMiddleware',
  'recursionDetectionMiddleware',
  'contentLengthMiddleware',
  'hostHeaderMiddleware',
  'retryMiddleware',
  'loggerMiddleware',
] as const;

/** Removes the wire-only middlewares from the client's stack (shared with a document client built on it). */
export function withoutWireMiddlewares<C extends MiddlewareStackOwner>(client: C): C {
  for (const name of WIRE_MIDDLEWARES) {
    if (!client.middlewareStack.remove(name)) throw new Error(`The SDK client has no ${name} to remove.`);
  }
  return client;
}
