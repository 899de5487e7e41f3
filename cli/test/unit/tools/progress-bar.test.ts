/** The long commands' progress bar: drawn on a terminal only, lines and other streams' output kept apart from it. */
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { progressBar } from '../../../tools/progress-bar.ts';

function stream(isTTY: boolean) {
  let written = '';
  return { write: (text: string) => (written += text), isTTY, columns: 100, written: () => written };
}

describe('progressBar', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('draws nothing off a terminal: lines are plain, and other output passes straight through', () => {
    const stderr = stream(false);
    const bar = progressBar({ label: 'schedules', total: 10, formatValue: String, stream: stderr });
    bar.update(5, 'half');
    bar.log('a line');
    let asideRan = false;
    bar.aside(() => {
      asideRan = true;
    });
    bar.stop();
    expect(bar.shown).toBe(false);
    expect(asideRan).toBe(true);
    expect(stderr.written()).toBe('a line\n');
  });

  it('on a terminal, shows the count and the ETA, clears itself around other output, and leaves no timer', () => {
    vi.useFakeTimers({ now: 0 });
    const stderr = stream(true);
    const bar = progressBar({ label: 'schedules', total: 10, formatValue: String, stream: stderr });
    bar.update(1);
    vi.setSystemTime(10_000);
    bar.update(5, '1 failing');
    const last = () => stripVTControlCharacters(stderr.written().split('\x1b[1G').at(-1) ?? '');
    expect(last()).toBe(`schedules ${'█'.repeat(14)}${'░'.repeat(14)}  50 % | ETA 10s | 5/10 | 1 failing`);

    let before = '';
    bar.aside(() => {
      before = stderr.written();
    });
    expect(before.endsWith('\r\x1b[K')).toBe(true);
    expect(last()).toContain('5/10 | 1 failing');

    bar.stop();
    bar.stop();
    expect(vi.getTimerCount()).toBe(0);
    bar.log('after');
    expect(stderr.written().endsWith('\x1b[0Jafter\n')).toBe(true);
  });
});
