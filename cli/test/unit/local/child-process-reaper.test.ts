/**
 * The reaper (cli/local/emulators/child-process-reaper.ts) on a signal: a registered child that leads its own
 * process group goes with its whole group, so a process it started (the local stack's JVM) ends too; a child
 * registered without the group is killed alone and leaves its own child running, which is what
 * `npm run outage-drill` did to its stack's DynamoDB Local on SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isRunning } from '../../../../test/support/process-tree.ts';
import { waitFor } from '../../../../test/support/wait-for.ts';

const REAPER = new URL('../../../local/emulators/child-process-reaper.ts', import.meta.url).href;

/** A process that starts one long-running child and prints its pid: a stand-in for the stack and its JVM. */
const PARENT_OF_ONE = `
const grandchild = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' });
console.log(grandchild.pid);
setInterval(() => {}, 1e9);
`;

/** Registers one such child with the reaper (in its own group when asked) and prints both pids. */
const HOST = `
import { spawn } from 'node:child_process';
import { killOnExit } from '${REAPER}';
const processGroup = process.argv[2] === 'group';
const child = spawn(process.execPath, ['-e', ${JSON.stringify(PARENT_OF_ONE)}], {
  detached: processGroup,
  stdio: ['ignore', 'pipe', 'inherit'],
});
killOnExit(child, { processGroup });
child.stdout.once('data', (line) => {
  process.stdout.write(JSON.stringify({ child: child.pid, grandchild: Number(String(line).trim()) }) + '\\n');
});
setInterval(() => {}, 1e9);
`;

let scratch: string;
const started: number[] = [];

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'reaper-'));
  writeFileSync(join(scratch, 'host.mts'), HOST);
});
afterEach(() => {
  for (const pid of started.splice(0).filter(isRunning)) process.kill(pid, 'SIGKILL');
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Started {
  readonly host: ChildProcess;
  readonly child: number;
  readonly grandchild: number;
  readonly exited: Promise<NodeJS.Signals | null>;
}

async function startHost(mode: 'group' | 'alone'): Promise<Started> {
  const host = spawn(process.execPath, ['--import', 'tsx', join(scratch, 'host.mts'), mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    host.once('exit', (_code, signal) => resolve(signal)),
  );
  const pids = await new Promise<{ child: number; grandchild: number }>((resolve, reject) => {
    host.stdout.once('data', (line) => resolve(JSON.parse(String(line))));
    host.once('exit', () => reject(new Error('the host exited before it started its child')));
  });
  started.push(host.pid as number, pids.child, pids.grandchild);
  return { host, ...pids, exited };
}

describe('the child-process reaper, on a signal', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s, kills a group-leading child with the process it started',
    async (signal) => {
      const { host, child, grandchild, exited } = await startHost('group');
      expect([isRunning(child), isRunning(grandchild)]).toEqual([true, true]);
      host.kill(signal);
      expect(await exited).toBe(signal);
      await waitFor(
        () => !isRunning(child) && !isRunning(grandchild),
        5_000,
        () => 'child or grandchild still runs',
      );
    },
  );

  it('kills a child registered without its group alone: the process it started runs on', async () => {
    const { host, child, grandchild, exited } = await startHost('alone');
    host.kill('SIGTERM');
    expect(await exited).toBe('SIGTERM');
    await waitFor(
      () => !isRunning(child),
      5_000,
      () => 'the child still runs',
    );
    expect(isRunning(grandchild)).toBe(true);
  });
});
