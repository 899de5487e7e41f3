/**
 * Benchmark parts run in child processes: each gets a fresh V8 heap and JIT, and its stdout (where the
 * Powertools logger and EMF metrics write, as in Lambda) goes to /dev/null instead of the report. Input and
 * results travel over the IPC channel; progress lines go to the parent's stderr.
 */
import { fork } from 'node:child_process';

type WorkerMessage<O> =
  | { readonly type: 'progress'; readonly line: string }
  | { readonly type: 'result'; readonly value: O }
  | { readonly type: 'error'; readonly message: string };

export interface RunWorkerOptions {
  /** Extra environment for the child (merged over the parent's). */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra Node flags, e.g. `--cpu-prof`. */
  readonly nodeFlags?: readonly string[];
  readonly onProgress?: (line: string) => void;
}

export function runWorker<I, O>(modulePath: string, input: I, options: RunWorkerOptions = {}): Promise<O> {
  const child = fork(modulePath, [], {
    execArgv: ['--import', 'tsx', ...(options.nodeFlags ?? [])],
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise<O>((resolve, reject) => {
    let settled = false;
    child.on('message', (message: WorkerMessage<O>) => {
      if (message.type === 'progress') options.onProgress?.(message.line);
      else if (message.type === 'result') {
        settled = true;
        resolve(message.value);
      } else {
        settled = true;
        reject(new Error(message.message));
      }
    });
    child.once('error', (error) => {
      if (!settled) reject(error);
      settled = true;
    });
    child.once('exit', (code, signal) => {
      if (!settled) reject(new Error(`Worker ${modulePath} exited (${signal ?? code}) without a result.`));
      settled = true;
    });
    child.send(input as object);
  });
}

/** The child's side: runs `work` on the input the parent sends, replies, and exits. */
export function serveWorker<I, O>(work: (input: I, progress: (line: string) => void) => Promise<O>): void {
  if (process.send === undefined) throw new Error('Run this module through runWorker().');
  const send = (message: WorkerMessage<O>) =>
    new Promise<void>((resolve) => process.send?.(message, undefined, {}, () => resolve()));
  process.once('message', (input: I) => {
    work(input, (line) => void send({ type: 'progress', line }))
      .then(async (value) => {
        await send({ type: 'result', value });
        process.exit(0);
      })
      .catch(async (error: unknown) => {
        // The name first: a subclass sets it after V8 wrote the stack's first line with the base name.
        const message =
          error instanceof Error
            ? `${error.name}: ${error.message}\n${(error.stack ?? '').split('\n').slice(1).join('\n')}`
            : String(error);
        await send({ type: 'error', message });
        process.exit(1);
      });
  });
}
