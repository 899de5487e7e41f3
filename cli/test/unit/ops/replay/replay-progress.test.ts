/** ops replay's progress on stderr: a bar with an ETA rewritten in place on a terminal, lines otherwise. */
import { describe, expect, it } from 'vitest';
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

describe('ReplayProgress', () => {
  it('draws a bar with the share of the range and an ETA from the pace so far, on a terminal', () => {
    const s = setup(true);
    const counts = emptyCounts();
    s.progress.update(at(0), counts);
    s.advance(60_000);
    counts.deliveries.sent = 30;
    s.progress.update(at(30), counts);

    const frames = s
      .stderr()
      .split('\r\x1b[K')
      .filter((frame) => frame !== '');
    expect(frames).toHaveLength(2);
    expect(frames[1]).toMatch(
      /^█{14}░{14} {2}50 % {2}ETA 60 s {2}30 sent, 0 keys done before, 0 to effect, at 2026-12-01T10:30:00.000Z$/,
    );
    s.output.result({}, ['done']);
    expect(s.stderr().endsWith('\r\x1b[K')).toBe(true);
    expect(s.stdout()).toBe('done\n');
  });

  it('writes a line at most every 5 seconds without a terminal', () => {
    const s = setup(false);
    const counts = emptyCounts();
    s.progress.update(at(0), counts);
    s.advance(1_000);
    s.progress.update(at(6), counts);
    s.advance(4_000);
    s.progress.update(at(15), counts);

    expect(
      s
        .stderr()
        .split('\n')
        .filter((line) => line !== ''),
    ).toEqual([
      'replay 0 % (ETA –): 0 sent, 0 keys done before, 0 to effect, at 2026-12-01T10:00:00.000Z',
      'replay 25 % (ETA 15 s): 0 sent, 0 keys done before, 0 to effect, at 2026-12-01T10:15:00.000Z',
    ]);
    expect(s.stderr()).not.toContain('\r');
  });
});
