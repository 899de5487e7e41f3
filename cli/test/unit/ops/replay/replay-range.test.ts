import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../../ops/errors.ts';
import { replayOptions } from '../../../../ops/replay/replay-arguments.ts';
import { parseInstant, parseRate, resolveReplayRange } from '../../../../ops/replay/replay-range.ts';

const NOW = Date.parse('2026-12-02T00:00:00Z');

describe('replay times', () => {
  it('reads ISO-8601 with its offset, a date as UTC midnight, now and relative times', () => {
    expect(parseInstant('--since', '2026-12-01T14:00Z', NOW)).toBe(Date.parse('2026-12-01T14:00:00Z'));
    expect(parseInstant('--since', '2026-12-01T15:00:00.5+01:00', NOW)).toBe(
      Date.parse('2026-12-01T14:00:00.500Z'),
    );
    expect(parseInstant('--since', '2026-11-30', NOW)).toBe(Date.parse('2026-11-30T00:00:00Z'));
    expect(parseInstant('--until', 'now', NOW)).toBe(NOW);
    expect(parseInstant('--since', '-3d', NOW)).toBe(NOW - 3 * 86_400_000);
    expect(parseInstant('--since', '-12h', NOW)).toBe(NOW - 12 * 3_600_000);
    expect(parseInstant('--since', '-30m', NOW)).toBe(NOW - 30 * 60_000);
  });

  it('refuses a time without an offset, and anything else, naming the option', () => {
    for (const text of ['2026-12-01T14:00', 'yesterday', '3d', '-3w', '2026-13-01', '']) {
      expect(() => parseInstant('--since', text, NOW), text).toThrow(UsageError);
    }
    expect(() => parseInstant('--until', 'soon', NOW)).toThrow(/^--until needs an ISO-8601 time/);
  });

  it('checks that the range is not empty and within the archive’s retention', () => {
    expect(resolveReplayRange({ since: '-2d', until: 'now' }, NOW, 30)).toEqual({
      sinceMs: NOW - 2 * 86_400_000,
      untilMs: NOW,
    });
    expect(() => resolveReplayRange({ since: '-1h', until: '-2h' }, NOW, 30)).toThrow(
      /--since \(2026-12-01T23:00:00.000Z\) must be before --until \(2026-12-01T22:00:00.000Z\)/,
    );
    expect(() => resolveReplayRange({ since: 'now', until: 'now' }, NOW, 30)).toThrow(/the range is empty/);
    expect(() => resolveReplayRange({ since: '-31d', until: 'now' }, NOW, 30)).toThrow(
      /outside the archive's retention of 30 days \(the oldest deliveries kept arrived after 2026-11-02T00:00:00.000Z\)/,
    );
    expect(resolveReplayRange({ since: '-7d', until: '-6d' }, NOW, 7).sinceMs).toBe(NOW - 7 * 86_400_000);
  });

  it('reads a rate as N/s or N, above 0', () => {
    expect(parseRate('50/s')).toBe(50);
    expect(parseRate('2.5')).toBe(2.5);
    for (const text of ['0', '0/s', 'fast', '-1', '5/min'])
      expect(() => parseRate(text), text).toThrow(UsageError);
  });
});

describe('replay options', () => {
  it('defaults --until to now and the rate to 50 deliveries a second', () => {
    expect(replayOptions({ since: '-1d' }, NOW)).toEqual({
      since: '-1d',
      until: 'now',
      fields: undefined,
      dryRun: false,
      rerun: false,
      ratePerSecond: 50,
      restart: false,
      maxDeliveries: undefined,
    });
  });

  it('needs --since, --yes for --rerun (not for a dry run), known fields and a whole --max', () => {
    expect(() => replayOptions({}, NOW)).toThrow(/replay needs --since/);
    expect(() => replayOptions({ since: '-1d', rerun: true }, NOW)).toThrow(/add --yes to confirm/);
    expect(replayOptions({ since: '-1d', rerun: true, 'dry-run': true }, NOW).rerun).toBe(true);
    expect(replayOptions({ since: '-1d', rerun: true, yes: true }, NOW).rerun).toBe(true);
    expect(replayOptions({ since: '-1d', fields: 'messages, calls,messages' }, NOW).fields).toEqual([
      'calls',
      'messages',
    ]);
    expect(() => replayOptions({ since: '-1d', fields: 'messages,chats' }, NOW)).toThrow(
      /unknown webhook field chats/,
    );
    expect(() => replayOptions({ since: '-1d', max: '0' }, NOW)).toThrow(/--max needs a whole number/);
    expect(() => replayOptions({ since: 'soon' }, NOW)).toThrow(/--since needs/);
  });

  it.each([
    ['2026-12-02', '2026-12-01'],
    ['2026-12-01T12:00Z', '2026-12-01T12:00Z'],
    ['-1h', '-2h'],
    ['now', 'now'],
    ['2026-12-03', 'now'],
    ['2026-12-03', '-1d'],
  ])('refuses --since %s --until %s with the arguments, before any target is reached', (since, until) => {
    expect(() => replayOptions({ since, until }, NOW)).toThrow(
      /^--since \(.+\) must be before --until \(.+\): the range is empty$/,
    );
  });

  it('leaves a --since that moves with the clock before a fixed --until to the command: an interrupted run may continue it', () => {
    // In order when the cursor was saved three days ago; out of order now. resolveReplayRange refuses it
    // when no cursor continues it.
    expect(replayOptions({ since: '-3d', until: '2026-11-28T00:00Z' }, NOW).until).toBe('2026-11-28T00:00Z');
    expect(() => resolveReplayRange({ since: '-3d', until: '2026-11-28T00:00Z' }, NOW, 30)).toThrow(
      /the range is empty/,
    );
  });
});
