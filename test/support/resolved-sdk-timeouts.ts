/**
 * What an SDK v3 client will actually use: the options its Node HTTP handler resolved, and the attempts its
 * retry strategy allows. Reads the handler's `configProvider`, which @smithy/node-http-handler resolves once
 * at construction (its `httpHandlerConfigs()` is empty until the first request).
 */
export async function resolvedSdkTimeouts(client: {
  config: { requestHandler: unknown; maxAttempts: () => Promise<number> };
}) {
  const handler = client.config.requestHandler as { configProvider: Promise<Record<string, unknown>> };
  const resolved = await handler.configProvider;
  return {
    connectionTimeout: resolved.connectionTimeout,
    requestTimeout: resolved.requestTimeout,
    throwOnRequestTimeout: resolved.throwOnRequestTimeout,
    maxAttempts: await client.config.maxAttempts(),
  };
}
