/**
 * One subscriber's side effects in the local stack: every handler call that returned, one line each, for
 * `GET /local/effects`. Incremental: each read parses only the bytes appended since the last one.
 *
 * A line is a JSON object `{"key", "startedAt", "endedAt"}` (epoch ms: when the handler was called, the effect
 * delay included, and when it returned), or a bare event key (no times), as older journals hold them. No key
 * starts with `{`: every key starts with its field's prefix (docs/design.md §1).
 */
import { appendFileSync, closeSync, existsSync, fstatSync, openSync, readSync, writeFileSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** When one handler call ran: epoch ms of its start (before the effect delay) and of its return. */
export interface EffectRun {
  readonly startedAt: number;
  readonly endedAt: number;
}

export interface EffectEntry {
  readonly key: string;
  readonly count: number;
  /** The first effect of the key: when its handler was called (the effect delay included). */
  readonly startedAt?: number;
  /** The first effect of the key: when its handler returned. */
  readonly endedAt?: number;
}

export interface EffectsView {
  readonly total: number;
  /** One entry per key, in the order keys were first effected. */
  readonly effects: EffectEntry[];
}

interface Tally {
  count: number;
  first: EffectRun | undefined;
}

export class EffectsJournal {
  readonly #path: string;
  readonly #tallies = new Map<string, Tally>();
  #offset = 0;
  #partial = '';
  #total = 0;
  // Keeps a UTF-8 character cut between two reads whole.
  #decoder = new StringDecoder('utf8');

  constructor(path: string) {
    this.#path = path;
  }

  /** Empties the file (the local stack starts with no effects). */
  reset(): void {
    writeFileSync(this.#path, '');
    this.#tallies.clear();
    this.#offset = 0;
    this.#partial = '';
    this.#total = 0;
    this.#decoder = new StringDecoder('utf8');
  }

  /** Synchronous on purpose: once this returns the line is in the file. */
  append(key: string, run?: EffectRun): void {
    appendFileSync(this.#path, `${run === undefined ? key : JSON.stringify({ key, ...run })}\n`);
  }

  read(): EffectsView {
    this.#catchUp();
    return {
      total: this.#total,
      effects: [...this.#tallies].map(([key, { count, first }]) => ({ key, count, ...first })),
    };
  }

  #catchUp(): void {
    if (!existsSync(this.#path)) return;
    const fd = openSync(this.#path, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size <= this.#offset) return;
      const buffer = Buffer.alloc(size - this.#offset);
      const read = readSync(fd, buffer, 0, buffer.length, this.#offset);
      this.#offset += read;
      const lines = (this.#partial + this.#decoder.write(buffer.subarray(0, read))).split('\n');
      // A line without its newline yet is being written: keep it for the next read.
      this.#partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') continue;
        const { key, run } = parseLine(line);
        const tally = this.#tallies.get(key);
        if (tally === undefined) this.#tallies.set(key, { count: 1, first: run });
        else tally.count++;
        this.#total++;
      }
    } finally {
      closeSync(fd);
    }
  }
}

function parseLine(line: string): { key: string; run: EffectRun | undefined } {
  if (!line.startsWith('{')) return { key: line, run: undefined };
  const { key, startedAt, endedAt } = JSON.parse(line) as { key: string } & EffectRun;
  return { key, run: { startedAt, endedAt } };
}
