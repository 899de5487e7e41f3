import { describe, expect, it } from 'vitest';
import {
  inFlightRedeliverySeconds,
  MAX_VISIBILITY_TIMEOUT_SECONDS,
  secondsUntilLeaseEnds,
} from '../../../functions/consumer/in-flight.ts';

const NOW = 1_780_000_000_000;

describe('inFlightRedeliverySeconds', () => {
  it.each([
    ['a different queue message', 'other'],
    ['the same message', 'mine'],
    ['an unknown holder', undefined],
  ])('brings the record back one second past the lease end whoever holds the claim: %s', (_label, holder) => {
    expect(inFlightRedeliverySeconds({ messageId: holder, leaseUntil: NOW + 5_000 } as never, NOW)).toBe(6);
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
