import { createServer } from 'node:net';

/**
 * A TCP port that was free a moment ago: the OS picks it for a throwaway listener, which is closed again.
 * Another process can still take it before the caller binds, so callers retry on EADDRINUSE.
 */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() => (port === undefined ? reject(new Error('No port was assigned.')) : resolve(port)));
    });
  });
}
