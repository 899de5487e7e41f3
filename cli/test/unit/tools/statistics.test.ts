/** The one statistics module: nearest-rank percentiles, the median and its distribution-free interval. */
import { describe, expect, it } from 'vitest';
import { median, medianInterval, percentile, percentileOfSorted, round } from '../../../tools/statistics.ts';

describe('percentile', () => {
  it.each([
    [[7], 50, 7],
    [[7], 99, 7],
    [[1, 2], 50, 1],
    [[1, 2], 99, 2],
    [[1, 2, 3, 4], 50, 2],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0, 1],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 100, 10],
  ])('of ascending %j at p%i is %s, the nearest rank', (sorted, p, expected) => {
    expect(percentileOfSorted(sorted, p)).toBe(expected);
    expect(percentile([...sorted].reverse(), p)).toBe(expected);
  });

  it('sorts numbers as numbers, in any order, typed arrays too', () => {
    expect(percentile([10, 9, 1, 100, 2], 50)).toBe(9);
    expect(percentile(Float64Array.of(3, 1, 2), 99)).toBe(3);
  });

  it('is NaN for no value', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(percentileOfSorted([], 99)).toBeNaN();
  });
});

describe('median', () => {
  it('takes the middle, or the mean of the two middle values', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([10, 9])).toBe(9.5);
    expect(median([])).toBeNaN();
  });
});

describe('medianInterval', () => {
  it('takes the order statistics whose binomial coverage reaches 95%', () => {
    const ranks = (n: number) => Array.from({ length: n }, (_, i) => n - i);
    expect(medianInterval(ranks(6))).toEqual({ low: 1, high: 6, confidence: 0.96875 });
    expect(medianInterval(ranks(12))).toMatchObject({ low: 3, high: 10 });
    expect(medianInterval(ranks(12)).confidence).toBeCloseTo(0.9614, 4);
    expect(medianInterval(ranks(20))).toMatchObject({ low: 6, high: 15 });
    expect(medianInterval(ranks(3)).confidence).toBeLessThan(0.95);
  });
});

describe('round', () => {
  it('keeps the digits asked for, and what is not finite as it is', () => {
    expect(round(1.23456)).toBe(1.235);
    expect(round(1.25, 1)).toBe(1.3);
    expect(round(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
  });
});
