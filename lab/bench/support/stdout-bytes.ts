/**
 * Counts the bytes this process writes to stdout, where the Powertools logger and EMF metrics write as they
 * do in Lambda (whose log group ingests them): the consumer's log volume per invocation, measured.
 */
export function countStdoutBytes(): () => number {
  let bytes = 0;
  const write = process.stdout.write.bind(process.stdout) as (...args: unknown[]) => boolean;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    return write(chunk, ...rest);
  }) as typeof process.stdout.write;
  return () => bytes;
}
