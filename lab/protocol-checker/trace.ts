/**
 * What happened in one schedule, one line per step: virtual time, worker, operation, outcome. Two runs of
 * the same seed produce equal traces (the determinism test compares them); a failing schedule prints its
 * trace. Lines carry keys, message ids and outcomes only, never owner tokens (random UUIDs).
 */

export interface TraceLine {
  /** Virtual epoch ms. */
  readonly at: number;
  readonly worker: string;
  readonly operation: string;
  readonly outcome: string;
}

export class Trace {
  readonly lines: TraceLine[] = [];
  readonly #startMs: number;

  constructor(startMs: number) {
    this.#startMs = startMs;
  }

  add(at: number, worker: string, operation: string, outcome = ''): void {
    this.lines.push({ at, worker, operation, outcome });
  }

  /** One line per step, time relative to the schedule's start. */
  format(): string {
    return this.lines.map((line) => formatLine(line, this.#startMs)).join('\n');
  }
}

export function formatLine(line: TraceLine, startMs: number): string {
  const seconds = ((line.at - startMs) / 1000).toFixed(3).padStart(11);
  const outcome = line.outcome === '' ? '' : `  → ${line.outcome}`;
  return `${seconds}s  ${line.worker.padEnd(9)} ${line.operation}${outcome}`;
}
