/** Which processes descend from one, and whether a process still runs: for tests that stop commands. */
import { execFileSync } from 'node:child_process';

export interface ProcessEntry {
  readonly pid: number;
  readonly command: string;
}

/** Every live descendant of `pid` (children, their children, …), as `ps` lists them. */
export function descendants(pid: number): ProcessEntry[] {
  const rows = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((match) => match !== null)
    .map(([, child, parent, command]) => ({
      pid: Number(child),
      ppid: Number(parent),
      command: command ?? '',
    }));
  const found: ProcessEntry[] = [];
  const pending = [pid];
  for (let parent = pending.pop(); parent !== undefined; parent = pending.pop()) {
    for (const row of rows.filter((entry) => entry.ppid === parent)) {
      found.push({ pid: row.pid, command: row.command });
      pending.push(row.pid);
    }
  }
  return found;
}

/** True while `pid` runs; a zombie (ended, not yet reaped by its parent) counts as ended. */
export function isRunning(pid: number): boolean {
  try {
    const state = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return state !== '' && !state.startsWith('Z');
  } catch {
    return false;
  }
}
