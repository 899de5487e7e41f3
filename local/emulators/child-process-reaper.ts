import type { ChildProcess } from 'node:child_process';

/**
 * Kills registered emulator processes when this process ends, so that no JVM outlives a test run or an
 * interrupted `npm start`. A SIGKILL of this process cannot be caught; everything else is covered.
 */
const children = new Set<ChildProcess>();
let installed = false;
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  killAll();
  // Without other listeners Node would have ended the process on this signal: let it do so.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

/** Registers `child` for killing at exit; the returned function unregisters it (after a normal stop). */
export function killOnExit(child: ChildProcess): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', killAll);
    for (const signal of SIGNALS) process.once(signal, onSignal);
  }
  children.add(child);
  return () => {
    children.delete(child);
  };
}
