/**
 * `npm run outage-drill` without a running stack starts its own, whose DynamoDB Local is a JVM two processes
 * down. A SIGTERM to the drill (a CI job cancelled, a `kill`) must take that JVM down too: before, the
 * drill's reaper SIGKILLed the stack, which could then never stop its JVM, and the JVM ran on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import getPort from 'get-port';
import { describe, expect, it } from 'vitest';
import { descendants, isRunning, type ProcessEntry } from '../../../test/support/process-tree.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { INTERVAL_HEADER } from '../../outage-drill/console-output.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('npm run outage-drill, signalled', () => {
  it('stops the DynamoDB Local of the stack it started on SIGTERM', async () => {
    // A free PORT: the drill must start its own stack, not drive one a developer has running.
    const port = await getPort();
    const drill = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'cli/outage-drill/outage-drill.ts',
        '--short',
        '--report',
        join(tmpdir(), 'outage-drill-signals.html'),
      ],
      { cwd: ROOT, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    for (const stream of [drill.stdout, drill.stderr]) stream.on('data', (chunk) => (output += chunk));
    const exited = exitOf(drill);
    let started: ProcessEntry[] = [];
    try {
      // The interval header is printed once its stack answers, and so once its JVM runs.
      await waitFor(
        () => output.includes(INTERVAL_HEADER),
        60_000,
        () => `the drill never started:\n${output}`,
      );
      started = descendants(drill.pid as number);
      const jvms = started.filter((entry) => /\bjava\b.*DynamoDBLocal/.test(entry.command));
      expect(jvms, output).toHaveLength(1);

      drill.kill('SIGTERM');
      expect(await exited).toEqual({ code: null, signal: 'SIGTERM' });
      await waitFor(
        () => started.every((entry) => !isRunning(entry.pid)),
        5_000,
        () => `still running: ${JSON.stringify(started.filter((entry) => isRunning(entry.pid)))}`,
      );
    } finally {
      // Whatever this test started and left running (the JVM, when the stop failed) goes now.
      if (drill.exitCode === null && drill.signalCode === null) drill.kill('SIGKILL');
      for (const entry of started.filter((entry) => isRunning(entry.pid))) process.kill(entry.pid, 'SIGKILL');
    }
  }, 90_000);
});

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}
