/**
 * One subscriber's side effects in the local stack: the key of every handler call that returned, one line
 * each, for `GET /local/effects`. Incremental: each read parses only the bytes appended since the last one.
 */
import { appendFileSync, closeSync, existsSync, fstatSync, openSync, readSync, writeFileSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

export interface EffectsView {
  readonly total: number;
  /** One entry per key, in the order keys were first effected. */
  readonly effects: { key: string; count: number }[];
}

export class EffectsJournal {
  readonly #path: string;
  readonly #counts = new Map<string, number>();
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
    this.#counts.clear();
    this.#offset = 0;
    this.#partial = '';
    this.#total = 0;
    this.#decoder = new StringDecoder('utf8');
  }

  /** Synchronous on purpose: once this returns the line is in the file. */
  append(key: string): void {
    appendFileSync(this.#path, `${key}\n`);
  }

  read(): EffectsView {
    this.#catchUp();
    return { total: this.#total, effects: [...this.#counts].map(([key, count]) => ({ key, count })) };
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
      for (const key of lines) {
        if (key === '') continue;
        this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
        this.#total++;
      }
    } finally {
      closeSync(fd);
    }
  }
}
