import { describe, expect, it } from 'vitest';
import {
  decideInFlight,
  MAX_VISIBILITY_TIMEOUT_SECONDS,
  secondsUntilLeaseEnds,
} from '../../../functions/consumer/in-flight.ts';

const NOW = 1_780_000_000_000;

describe('decideInFlight', () => {
  it('acknowledges only when a different queue message holds the claim', () => {
    expect(decideInFlight({ messageId: 'other', leaseUntil: NOW + 5_000 }, 'mine', NOW)).toEqual({
      acknowledge: true,
    });
  });

  it.each([
    ['the same message', 'mine'],
    ['an unknown holder', undefined],
  ])('keeps the record when %s holds the claim, until the lease ends', (_label, holder) => {
    expect(decideInFlight({ messageId: holder, leaseUntil: NOW + 5_000 }, 'mine', NOW)).toEqual({
      acknowledge: false,
      redeliverInSeconds: 6,
    });
  });
});

describe('secondsUntilLeaseEnds', () => {
  it.each([
    [NOW + 1, 2],
    [NOW + 999, 2],
    [NOW + 1_000, 2],
    [NOW + 1_001, 3],
    [NOW - 60_000, 0],
  ])('lease until now%+d ms → %i s (one second past the end, never negative)', (leaseUntil, expected) => {
    expect(secondsUntilLeaseEnds(leaseUntil, NOW)).toBe(expected);
  });

  it('caps at SQS’s longest visibility timeout and has no answer without a lease', () => {
    expect(secondsUntilLeaseEnds(NOW + 48 * 3_600_000, NOW)).toBe(MAX_VISIBILITY_TIMEOUT_SECONDS);
    expect(secondsUntilLeaseEnds(undefined, NOW)).toBeUndefined();
    expect(secondsUntilLeaseEnds(Number.NaN, NOW)).toBeUndefined();
  });
});
