/**
 * Listens to everything this process writes to stdout, line by line. The handlers run in-process and
 * Powertools writes their EMF metrics and JSON logs to stdout (as in Lambda, where CloudWatch reads them),
 * so this is where the local stack picks them up for its dashboard, without changing the handlers.
 */

export interface StdoutTap {
  /** Puts `process.stdout.write` back as it was. */
  restore(): void;
}

export interface StdoutTapOptions {
  /** Every complete line written to stdout, without its newline. Must not throw or write to stdout. */
  readonly onLine: (line: string) => void;
  /** Whether a line still reaches the terminal. @default every line */
  readonly echo?: (line: string) => boolean;
}

export function tapStdout(options: StdoutTapOptions): StdoutTap {
  const original = process.stdout.write;
  let pending = '';
  const write = original.bind(process.stdout) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    pending += text;
    let echoed = '';
    let newline = pending.indexOf('\n');
    while (newline !== -1) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      try {
        options.onLine(line);
      } catch {
        // An observer's bug must not break the handler that printed.
      }
      if (options.echo?.(line) ?? true) echoed += `${line}\n`;
      newline = pending.indexOf('\n');
    }
    if (echoed === '') {
      // Keep the write contract: call back (if asked) even when nothing is printed.
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      if (callback) process.nextTick(callback);
      return true;
    }
    return write(echoed, ...rest);
  }) as typeof process.stdout.write;
  return {
    restore() {
      process.stdout.write = original;
    },
  };
}
