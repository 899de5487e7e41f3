/**
 * Listens to everything this process writes to stdout (or another stream), line by line, and decides what of
 * each line reaches the terminal. The handlers run in-process and Powertools writes their EMF metrics and JSON
 * logs to stdout, warnings and errors to stderr (as in Lambda, where CloudWatch reads them), so this is where
 * the local stack picks them up for its dashboard, without changing the handlers.
 */

export interface StdoutTap {
  /** Puts `process.stdout.write` back as it was. */
  restore(): void;
}

export interface StdoutTapOptions {
  /** Every complete line written, without its newline. Must not throw or write to the stream. */
  readonly onLine?: (line: string) => void;
  /** @default process.stdout (Powertools writes warnings and errors to process.stderr) */
  readonly stream?: NodeJS.WriteStream;
  /** What of a line reaches the terminal: the line, another line, or nothing (undefined). @default the line */
  readonly show?: (line: string) => string | undefined;
}

export function tapStdout(options: StdoutTapOptions): StdoutTap {
  const stream = options.stream ?? process.stdout;
  const original = stream.write;
  let pending = '';
  const write = original.bind(stream) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    pending += text;
    let echoed = '';
    let newline = pending.indexOf('\n');
    while (newline !== -1) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      try {
        options.onLine?.(line);
      } catch {
        // An observer's bug must not break the handler that printed.
      }
      const shown = options.show === undefined ? line : options.show(line);
      if (shown !== undefined) echoed += `${shown}\n`;
      newline = pending.indexOf('\n');
    }
    if (echoed === '') {
      // Keep the write contract: call back (if asked) even when nothing is printed.
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      if (callback) process.nextTick(callback);
      return true;
    }
    return write(echoed, ...rest);
  }) as typeof stream.write;
  return {
    restore() {
      stream.write = original;
    },
  };
}
