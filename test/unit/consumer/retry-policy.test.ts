/**
 * The delay a failed record gets: exponential in its receive count up to the cap, jittered between half the
 * ceiling and the ceiling, and `RetryLater`'s delay kept up to the same cap.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffCeilingSeconds,
  backoffFloorSeconds,
  MAX_RETRY_DELAY_SECONDS,
} from '../../../contract/retry-budget.ts';
import { RetryLater } from '../../../functions/consumer/handler-api.ts';
import {
  backoffDelaySeconds,
  deferredDelaySeconds,
  receiveCountOf,
} from '../../../functions/consumer/retry-policy.ts';

const settingsArbitrary = fc
  .tuple(fc.integer({ min: 1, max: 3600 }), fc.integer({ min: 1, max: MAX_RETRY_DELAY_SECONDS }))
  .map(([a, b]) => ({ retryBaseDelaySeconds: Math.min(a, b), retryMaxDelaySeconds: Math.max(a, b) }));
const receiveCount = fc.integer({ min: 1, max: 1000 });
/** Math.random's range, its ends included. */
const unit = fc.oneof(
  fc.constant(0),
  fc.constant(1 - Number.EPSILON),
  fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
);

describe('backoff delay', () => {
  it('lies between half the ceiling and the ceiling, in whole seconds, never above the cap', () => {
    fc.assert(
      fc.property(settingsArbitrary, receiveCount, unit, (settings, n, draw) => {
        const delay = backoffDelaySeconds(n, settings, () => draw);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(backoffFloorSeconds(n, settings));
        expect(delay).toBeLessThanOrEqual(backoffCeilingSeconds(n, settings));
        expect(delay).toBeLessThanOrEqual(settings.retryMaxDelaySeconds);
        expect(delay * 2).toBeGreaterThanOrEqual(backoffCeilingSeconds(n, settings));
      }),
    );
  });

  it('reaches both ends of its range: the lowest draw gives the floor, the highest the ceiling', () => {
    fc.assert(
      fc.property(settingsArbitrary, receiveCount, (settings, n) => {
        expect(backoffDelaySeconds(n, settings, () => 0)).toBe(backoffFloorSeconds(n, settings));
        expect(backoffDelaySeconds(n, settings, () => 1 - Number.EPSILON)).toBe(
          backoffCeilingSeconds(n, settings),
        );
      }),
    );
  });

  it('does not shrink with the receive count, and doubles until the cap', () => {
    fc.assert(
      fc.property(settingsArbitrary, receiveCount, unit, (settings, n, draw) => {
        const random = () => draw;
        expect(backoffDelaySeconds(n + 1, settings, random)).toBeGreaterThanOrEqual(
          backoffDelaySeconds(n, settings, random),
        );
        const ceiling = backoffCeilingSeconds(n, settings);
        const next = backoffCeilingSeconds(n + 1, settings);
        expect(next).toBe(
          ceiling === settings.retryMaxDelaySeconds
            ? ceiling
            : Math.min(2 * ceiling, settings.retryMaxDelaySeconds),
        );
      }),
    );
  });

  it('starts at the base and ends at the cap', () => {
    const settings = { retryBaseDelaySeconds: 30, retryMaxDelaySeconds: 3600 };
    expect([1, 2, 3, 7, 8, 60].map((n) => backoffCeilingSeconds(n, settings))).toEqual([
      30, 60, 120, 1920, 3600, 3600,
    ]);
    expect([1, 2, 8].map((n) => backoffFloorSeconds(n, settings))).toEqual([15, 30, 1800]);
  });

  it('spreads the records of one outage: draws across the range give delays across the range', () => {
    const settings = { retryBaseDelaySeconds: 30, retryMaxDelaySeconds: 3600 };
    const delays = new Set(
      Array.from({ length: 11 }, (_, i) => backoffDelaySeconds(20, settings, () => i / 11)),
    );
    expect(delays.size).toBe(11);
    expect(Math.min(...delays)).toBe(1800);
    expect(Math.max(...delays)).toBeGreaterThan(3200);
  });
});

describe('receive count', () => {
  it.each([
    [{ ApproximateReceiveCount: '1' }, 1],
    [{ ApproximateReceiveCount: '17' }, 17],
    [{ ApproximateReceiveCount: '' }, 1],
    [{ ApproximateReceiveCount: 'x' }, 1],
    [{ ApproximateReceiveCount: '0' }, 1],
    [{}, 1],
    [undefined, 1],
  ])('reads %j as %i', (attributes, expected) => {
    expect(receiveCountOf(attributes)).toBe(expected);
  });
});

describe('RetryLater', () => {
  const settings = { retryBaseDelaySeconds: 30, retryMaxDelaySeconds: 3600 };

  it('keeps the delay it asks for, rounded up to whole seconds', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 3600, noNaN: true }), (afterSeconds) => {
        const delay = deferredDelaySeconds(new RetryLater({ afterSeconds }).afterSeconds, settings);
        expect(delay).toBe(Math.ceil(afterSeconds));
      }),
    );
  });

  it('is capped at retryMaxDelaySeconds, itself below the SQS maximum of 12 hours', () => {
    fc.assert(
      fc.property(fc.double({ min: 3600, max: 1e9, noNaN: true }), (afterSeconds) => {
        expect(deferredDelaySeconds(afterSeconds, settings)).toBe(3600);
      }),
    );
    const widest = { retryBaseDelaySeconds: 1, retryMaxDelaySeconds: MAX_RETRY_DELAY_SECONDS };
    expect(deferredDelaySeconds(86_400, widest)).toBe(MAX_RETRY_DELAY_SECONDS);
    expect(MAX_RETRY_DELAY_SECONDS).toBeLessThan(12 * 3600);
  });

  it.each([Number.NaN, -1, Number.POSITIVE_INFINITY])('refuses afterSeconds = %s', (afterSeconds) => {
    expect(() => new RetryLater({ afterSeconds })).toThrow(RangeError);
  });

  it('names itself and its reason, for logs', () => {
    const deferred = new RetryLater({ afterSeconds: 6, reason: 'whatsapp-131056' });
    expect(deferred).toBeInstanceOf(Error);
    expect(deferred.name).toBe('RetryLater');
    expect(deferred.reason).toBe('whatsapp-131056');
    expect(deferred.message).toBe('Retry in 6 s (whatsapp-131056)');
  });
});
