/** ops replay's progress on stderr: the progress bar with an ETA on a terminal, lines otherwise. */
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Output } from '../../../../ops/output.ts';
import { ReplayProgress } from '../../../../ops/replay/replay-progress.ts';
import { emptyCounts } from '../../../../ops/replay/run-replay.ts';

const SPAN_START = Date.parse('2026-12-01T10:00:00Z');
const SPAN_END = Date.parse('2026-12-01T11:00:00Z');
const at = (minutes: number) => ({
  arrivedAt: new Date(SPAN_START + minutes * 60_000).toISOString(),
  deliveryId: `d${minutes}`,
});

function setup(terminal: boolean) {
  let stderr = '';
  let stdout = '';
  let now = 0;
  const output = new Output(
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text), isTTY: terminal, columns: 200 },
    },
    false,
  );
  const progress = new ReplayProgress(output, () => now, SPAN_START, SPAN_END);
  return {
    output,
    progress,
    advance: (ms: number) => {
      now += ms;
    },
    stderr: () => stderr,
    stdout: () => stdout,
  };
}

/** What a terminal shows of each redraw: the text written after each return to the first column. */
function frames(written: string): string[] {
  return written
    .split('\x1b[1G')
    .map((frame) => stripVTControlCharacters(frame))
    .filter((frame) => frame.trim() !== '');
}

describe('ReplayProgress', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('draws a bar with the share of the range and an ETA from the pace so far, on a terminal', () => {
    vi.useFakeTimers({ now: 0 });
    const s = setup(true);
    const counts = emptyCounts();
    s.progress.update(at(0), counts);
    vi.advanceTimersByTime(60_000);
    counts.deliveries.sent = 30;
    s.progress.update(at(30), counts);

    expect(frames(s.stderr()).at(-1)).toBe(
      'replay ██████████████░░░░░░░░░░░░░░  50 % | ETA 60s | 30 sent, 0 keys done before, 0 to effect, at 2026-12-01T10:30:00.000Z',
    );
    s.output.result({}, ['done']);
    expect(s.stdout()).toBe('done\n');
    // Cleared when the result is written, and its redraw timer gone with it.
    expect(s.stderr().endsWith('\x1b[0J')).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes progress lines above the bar and draws the bar again below them', () => {
    vi.useFakeTimers({ now: 0 });
    const s = setup(true);
    const counts = emptyCounts();
    s.progress.update(at(6), counts);
    s.output.progress('refused delivery d3 (2026-12-01T10:03:00.000Z): no proof');

    const shown = frames(s.stderr());
    const line = shown.findIndex((frame) => frame.startsWith('refused delivery d3'));
    expect(line).toBeGreaterThan(0);
    expect(shown[line]).toBe('refused delivery d3 (2026-12-01T10:03:00.000Z): no proof\n');
    expect(shown.slice(line + 1).at(-1)).toMatch(/^replay █{3}░{25} {2}10 % \| ETA – \| 0 sent/);
    s.progress.done();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes a line at most every 5 seconds without a terminal', () => {
    const s = setup(false);
    const counts = emptyCounts();
    s.progress.update(at(0), counts);
    s.advance(1_000);
    s.progress.update(at(6), counts);
    s.advance(4_000);
    s.progress.update(at(15), counts);
    s.progress.done();

    expect(
      s
        .stderr()
        .split('\n')
        .filter((line) => line !== ''),
    ).toEqual([
      'replay 0 % (ETA –): 0 sent, 0 keys done before, 0 to effect, at 2026-12-01T10:00:00.000Z',
      'replay 25 % (ETA 15 s): 0 sent, 0 keys done before, 0 to effect, at 2026-12-01T10:15:00.000Z',
    ]);
    expect(s.stderr()).not.toContain('\x1b');
  });
});
