import { describe, expect, it } from 'vitest';
import type { ClaimSnapshot } from '../../../functions/claims/claim-record.ts';
import {
  classifyAcquired,
  classifyBlocking,
  deadlineFromRemainingTime,
  expiresAtFor,
  isLeaseLapsed,
  isRecordExpired,
  leaseUntilFor,
  MAX_LAMBDA_DURATION_MS,
  nextAttempt,
  toEpochSeconds,
} from '../../../functions/claims/lease.ts';

const NOW = 1_780_000_000_500; // deliberately not on a whole second
const NOW_S = 1_780_000_000;

function snapshot(fields: Partial<ClaimSnapshot>): ClaimSnapshot {
  return {
    state: undefined,
    owner: undefined,
    leaseUntil: undefined,
    expiresAt: undefined,
    field: undefined,
    claimedAt: undefined,
    doneAt: undefined,
    attempt: undefined,
    messageId: undefined,
    ...fields,
  };
}

describe('leaseUntilFor', () => {
  it.each([
    { label: 'a deadline ahead', deadline: NOW + 25_000, expected: NOW + 25_000 + 10_000 },
    { label: 'a deadline already passed', deadline: NOW - 5_000, expected: NOW + 10_000 },
    {
      label: 'an unknown deadline (NaN)',
      deadline: Number.NaN,
      expected: NOW + MAX_LAMBDA_DURATION_MS + 10_000,
    },
    {
      label: 'an infinite deadline',
      deadline: Number.POSITIVE_INFINITY,
      expected: NOW + MAX_LAMBDA_DURATION_MS + 10_000,
    },
  ])('with $label is $expected', ({ deadline, expected }) => {
    expect(leaseUntilFor(NOW, deadline, 10_000)).toBe(expected);
  });

  it('is never absent or before now', () => {
    for (const deadline of [Number.NaN, Number.NEGATIVE_INFINITY, 0, NOW, NOW + 1]) {
      const lease = leaseUntilFor(NOW, deadline, 0);
      expect(Number.isFinite(lease)).toBe(true);
      expect(lease).toBeGreaterThanOrEqual(NOW);
    }
  });
});

describe('expiresAtFor', () => {
  it('is now + retention in epoch seconds', () => {
    expect(expiresAtFor(NOW, 8)).toBe(NOW_S + 8 * 86_400);
    expect(expiresAtFor(NOW, 7.5)).toBe(NOW_S + 7.5 * 86_400);
  });

  it('never falls before the end of the lease', () => {
    const leaseUntil = NOW + 9 * 86_400_000;
    expect(expiresAtFor(NOW, 8, leaseUntil)).toBeGreaterThan(leaseUntil / 1000);
  });
});

describe('time conversions', () => {
  it('floors to epoch seconds, as the claim condition compares them', () => {
    expect(toEpochSeconds(NOW)).toBe(NOW_S);
  });

  it('turns Lambda remaining time into a deadline, never before now', () => {
    expect(deadlineFromRemainingTime(NOW, 12_345)).toBe(NOW + 12_345);
    expect(deadlineFromRemainingTime(NOW, -1)).toBe(NOW);
  });
});

describe('expiry and lease checks mirror the claim condition', () => {
  it.each([
    { expiresAt: NOW_S - 1, expired: true },
    { expiresAt: NOW_S, expired: false },
    { expiresAt: NOW_S + 1, expired: false },
    { expiresAt: undefined, expired: false },
  ])('expiresAt $expiresAt → expired $expired', ({ expiresAt, expired }) => {
    expect(isRecordExpired({ expiresAt }, NOW)).toBe(expired);
  });

  it.each([
    { state: 'processing', leaseUntil: NOW - 1, lapsed: true },
    { state: 'processing', leaseUntil: NOW, lapsed: false },
    { state: 'done', leaseUntil: NOW - 1, lapsed: false },
    { state: 'processing', leaseUntil: undefined, lapsed: false },
  ])('$state with leaseUntil $leaseUntil → lapsed $lapsed', ({ state, leaseUntil, lapsed }) => {
    expect(isLeaseLapsed({ state, leaseUntil }, NOW)).toBe(lapsed);
  });
});

describe('classification', () => {
  it('a put over nothing is fresh, attempt 1', () => {
    expect(classifyAcquired(undefined, NOW)).toBe('fresh');
    expect(nextAttempt('fresh', undefined)).toBe(1);
  });

  it('a put over a lapsed lease is a takeover, one attempt more', () => {
    const previous = snapshot({
      state: 'processing',
      leaseUntil: NOW - 1,
      expiresAt: NOW_S + 100,
      attempt: 3,
    });
    expect(classifyAcquired(previous, NOW)).toBe('takeover');
    expect(nextAttempt('takeover', previous)).toBe(4);
    expect(nextAttempt('takeover', snapshot({ state: 'processing' }))).toBe(2);
  });

  it('a put over an expired record is reclaimed, even if its lease lapsed too, and restarts at attempt 1', () => {
    const previous = snapshot({ state: 'processing', leaseUntil: NOW - 1, expiresAt: NOW_S - 1, attempt: 3 });
    expect(classifyAcquired(previous, NOW)).toBe('reclaimed');
    expect(nextAttempt('reclaimed', previous)).toBe(1);
  });

  it.each([
    { state: 'done', outcome: 'duplicate-done' },
    { state: 'processing', outcome: 'duplicate-in-flight' },
    { state: 'weird', outcome: undefined },
    { state: undefined, outcome: undefined },
  ])('a blocking record in state $state → $outcome', ({ state, outcome }) => {
    expect(classifyBlocking({ state })).toBe(outcome);
  });
});
