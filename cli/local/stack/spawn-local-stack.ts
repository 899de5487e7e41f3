/**
 * Runs the local stack (`whatsapp-webhook-dedup start`, what `npm start` runs too) as a child process in the
 * project's directory and waits until it serves `/local/info`: used by the outage drill when no stack is
 * running, and by the end-to-end tests, which must see the stack exactly as a user starts it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import getPort from 'get-port';
import { kill, killOnExit } from '../emulators/child-process-reaper.ts';

/** `.ts` run from this repository's sources, `.js` in the installed package: the CLI entry has the same. */
const OWN_EXTENSION = extname(fileURLToPath(import.meta.url));
const CLI_ENTRY = fileURLToPath(new URL(`../cli/main${OWN_EXTENSION}`, import.meta.url));
const TYPESCRIPT_LOADER = OWN_EXTENSION === '.ts' ? ['--import', 'tsx'] : [];

export interface SpawnedLocalStack {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** The child's recent stdout and stderr lines, for diagnostics. */
  output(): string;
  /** SIGTERM, then waits for the child (and its JVM) to exit; SIGKILL to both after `graceMs`. */
  stop(graceMs?: number): Promise<number | null>;
}

export interface SpawnLocalStackOptions {
  /** The project whose subscribers it runs. @default process.cwd() */
  readonly cwd?: string;
  /** Arguments after `start` (e.g. `--subscribers PATH`). */
  readonly args?: readonly string[];
  /** Extra environment for the stack (PORT is chosen here unless given). */
  readonly env?: Readonly<Record<string, string>>;
  /** @default 120 000 (the first run downloads DynamoDB Local) */
  readonly readyTimeoutMs?: number;
  /** Lines of output kept for `output()`. @default 400 */
  readonly keepLines?: number;
}

export async function spawnLocalStack(options: SpawnLocalStackOptions = {}): Promise<SpawnedLocalStack> {
  const port = Number(options.env?.PORT ?? (await getPort()));
  const child = spawn(process.execPath, [...TYPESCRIPT_LOADER, CLI_ENTRY, 'start', ...(options.args ?? [])], {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, ...options.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, which holds its DynamoDB Local JVM too: when this process is signalled, the
    // reaper kills the group, and the JVM goes with the stack (SIGKILLing the stack alone orphaned it).
    detached: true,
  });
  const unregister = killOnExit(child, { processGroup: true });
  const lines: string[] = [];
  const keep = options.keepLines ?? 400;
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
      if (lines.length > keep) lines.splice(0, lines.length - keep);
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const stack: SpawnedLocalStack = {
    url,
    port,
    process: child,
    output: () => lines.join('\n'),
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => kill(child, { processGroup: true }), graceMs);
        await exited;
        clearTimeout(timer);
      }
      unregister();
      return child.exitCode;
    },
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);
  let exitCode: number | null | undefined;
  void exited.then((code) => {
    exitCode = code;
  });
  while (Date.now() < deadline) {
    if (exitCode !== undefined) {
      throw new Error(`The local stack exited with code ${exitCode} before it was ready:\n${stack.output()}`);
    }
    try {
      const response = await fetch(`${url}/local/info`, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return stack;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await stack.stop();
  throw new Error(
    `The local stack was not ready within ${options.readyTimeoutMs ?? 120_000} ms:\n${stack.output()}`,
  );
}
