import type { ChildProcess } from 'node:child_process';

/**
 * Kills registered emulator processes when this process ends, so that no JVM outlives a test run or an
 * interrupted `npm start`. A SIGKILL of this process cannot be caught; everything else is covered.
 */
const children = new Map<ChildProcess, KillOptions>();
let installed = false;
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface KillOptions {
  /**
   * The child leads its own process group (spawned `detached`), and the group is killed with it: a child that
   * runs emulators of its own (a spawned local stack) cannot stop them once it is SIGKILLed, so they die
   * with it instead of outliving both.
   */
  readonly processGroup?: boolean;
}

function killAll(): void {
  for (const [child, options] of children) kill(child, options);
  children.clear();
}

/** SIGKILLs the child (its process group where it leads one) unless it has exited. */
export function kill(child: ChildProcess, options: KillOptions = {}): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (options.processGroup === true && child.pid !== undefined && process.platform !== 'win32') {
    try {
      process.kill(-child.pid, 'SIGKILL');
      return;
    } catch {
      // The group is gone already; the child itself is killed below.
    }
  }
  child.kill('SIGKILL');
}

function onSignal(signal: NodeJS.Signals): void {
  killAll();
  // Without other listeners Node would have ended the process on this signal: let it do so.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

/** Registers `child` for killing at exit; the returned function unregisters it (after a normal stop). */
export function killOnExit(child: ChildProcess, options: KillOptions = {}): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', killAll);
    for (const signal of SIGNALS) process.once(signal, onSignal);
  }
  children.set(child, options);
  return () => {
    children.delete(child);
  };
}
