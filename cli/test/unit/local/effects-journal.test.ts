import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EffectsJournal } from '../../../local/stack/effects-journal.ts';

const directories: string[] = [];
function journalPath(): string {
  const directory = mkdtempSync(join(tmpdir(), 'effects-journal-'));
  directories.push(directory);
  return join(directory, 'effects.journal');
}

afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('EffectsJournal', () => {
  it('counts effects per key, in first-effect order, reading only what was appended', () => {
    const path = journalPath();
    const journal = new EffectsJournal(path);
    journal.reset();
    appendFileSync(path, 'msg:a\nst:b:read\n');
    expect(journal.read()).toEqual({
      total: 2,
      effects: [
        { key: 'msg:a', count: 1 },
        { key: 'st:b:read', count: 1 },
      ],
    });

    appendFileSync(path, 'msg:a\n');
    expect(journal.read()).toEqual({
      total: 3,
      effects: [
        { key: 'msg:a', count: 2 },
        { key: 'st:b:read', count: 1 },
      ],
    });
  });

  it('waits for the newline of a line being written, even inside a UTF-8 character', () => {
    const path = journalPath();
    const journal = new EffectsJournal(path);
    journal.reset();
    const key = Buffer.from('phone_number_name_update:1:2:Café:APPROVED\n');
    const cut = key.indexOf(0xc3) + 1; // between the two bytes of "é"
    appendFileSync(path, key.subarray(0, cut));
    expect(journal.read().total).toBe(0);

    appendFileSync(path, key.subarray(cut));
    expect(journal.read().effects).toEqual([{ key: 'phone_number_name_update:1:2:Café:APPROVED', count: 1 }]);
  });

  it("keeps each key's first run, and reads bare keys (no times) beside timed lines", () => {
    const path = journalPath();
    const journal = new EffectsJournal(path);
    journal.reset();
    journal.append('msg:a', { startedAt: 100, endedAt: 400 });
    appendFileSync(path, 'st:b:read\n');
    journal.append('msg:a', { startedAt: 500, endedAt: 800 });
    // A key holding a newline stays one effect.
    journal.append('phone_number_name_update:1:2:two\nlines:APPROVED', { startedAt: 900, endedAt: 901 });

    expect(journal.read()).toStrictEqual({
      total: 4,
      effects: [
        { key: 'msg:a', count: 2, startedAt: 100, endedAt: 400 },
        { key: 'st:b:read', count: 1 },
        { key: 'phone_number_name_update:1:2:two\nlines:APPROVED', count: 1, startedAt: 900, endedAt: 901 },
      ],
    });
  });

  it('reads an absent file as no effects', () => {
    expect(new EffectsJournal(journalPath()).read()).toEqual({ total: 0, effects: [] });
  });
});
