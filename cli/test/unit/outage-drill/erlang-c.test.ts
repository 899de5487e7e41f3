import { describe, expect, it } from 'vitest';
import {
  allenCunneenWaitSeconds,
  erlangB,
  erlangC,
  meanWaitSeconds,
  recommendServers,
  utilisation,
  waitPercentileSeconds,
} from '../../../../contract/erlang-c.ts';

describe('Erlang B and C', () => {
  it.each([
    // servers, load, blocking: textbook values (B(1,a) = a/(1+a); 10 servers at 5 Erlangs block 1.84 %)
    [1, 1, 0.5],
    [2, 1, 0.2],
    [10, 5, 0.01838],
  ])('B(%i, %d) = %d', (servers, load, expected) => {
    expect(erlangB(servers, load)).toBeCloseTo(expected, 4);
  });

  it.each([
    // M/M/1: the probability of waiting is ρ
    [1, 0.5, 0.5],
    [2, 1, 1 / 3],
    [3, 2, 4 / 9],
    // the classic call-centre table: 10 agents at 8 Erlangs, 40.9 % of callers wait
    [10, 8, 0.4092],
    [20, 15, 0.1604],
  ])('C(%i, %d) = %d', (servers, load, expected) => {
    expect(erlangC(servers, load)).toBeCloseTo(expected, 4);
  });

  it('is 1 when the load reaches the server count, 0 without load', () => {
    expect(erlangC(4, 4)).toBe(1);
    expect(erlangC(4, 7)).toBe(1);
    expect(erlangC(4, 0)).toBe(0);
  });

  it('refuses a non-integer or zero server count', () => {
    expect(() => erlangC(0, 1)).toThrow(RangeError);
    expect(() => erlangC(1.5, 1)).toThrow(RangeError);
  });
});

describe('M/M/c waits', () => {
  it('matches M/M/1: Wq = ρ / (μ − λ)', () => {
    // λ = 4/s, S = 0.2 s (μ = 5/s): ρ = 0.8, Wq = 0.8 / 1 = 0.8 s
    expect(meanWaitSeconds({ arrivalRatePerSecond: 4, meanServiceSeconds: 0.2, servers: 1 })).toBeCloseTo(
      0.8,
      10,
    );
  });

  it('matches the textbook M/M/3 example (λ = 2, μ = 1): Wq = 4/9', () => {
    const model = { arrivalRatePerSecond: 2, meanServiceSeconds: 1, servers: 3 };
    expect(meanWaitSeconds(model)).toBeCloseTo(4 / 9, 10);
    expect(utilisation(model)).toBeCloseTo(2 / 3, 10);
  });

  it('is infinite for an unstable queue', () => {
    expect(meanWaitSeconds({ arrivalRatePerSecond: 10, meanServiceSeconds: 0.5, servers: 5 })).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it('gives wait percentiles from the exponential tail', () => {
    const model = { arrivalRatePerSecond: 2, meanServiceSeconds: 1, servers: 3 };
    // P(Wq > t) = 4/9 · e^(−t): the median wait is 0 (fewer than half wait), p95 = ln((4/9)/0.05)
    expect(waitPercentileSeconds(model, 0.5)).toBe(0);
    expect(waitPercentileSeconds(model, 0.95)).toBeCloseTo(Math.log(4 / 9 / 0.05), 10);
  });
});

describe('Allen–Cunneen (M/G/c)', () => {
  it('equals M/M/c for exponential service', () => {
    const model = { arrivalRatePerSecond: 2, meanServiceSeconds: 1, servers: 3 };
    expect(allenCunneenWaitSeconds(model, 1)).toBeCloseTo(meanWaitSeconds(model), 12);
  });

  it('is exact for M/D/1: Pollaczek–Khinchine gives Wq = ρS / (2(1 − ρ))', () => {
    // λ = 4/s, S = 0.2 s: ρ = 0.8, Wq = 0.8 × 0.2 / 0.4 = 0.4 s
    expect(
      allenCunneenWaitSeconds({ arrivalRatePerSecond: 4, meanServiceSeconds: 0.2, servers: 1 }, 0),
    ).toBeCloseTo(0.4, 10);
  });
});

describe('recommendServers', () => {
  it('picks the fewest servers meeting the target mean wait', () => {
    // λ = 8/s, S = 0.2 s: a = 1.6 Erlangs; 2 servers wait 0.356 s, 3 servers 0.039 s
    const recommendation = recommendServers(8, 0.2, 0.1);
    expect(recommendation.servers).toBe(3);
    expect(recommendation.meanWaitSeconds).toBeLessThanOrEqual(0.1);
    expect(meanWaitSeconds({ arrivalRatePerSecond: 8, meanServiceSeconds: 0.2, servers: 2 })).toBeGreaterThan(
      0.1,
    );
  });

  it('never recommends fewer than Lambda’s minimum of 2', () => {
    expect(recommendServers(0.1, 0.01, 1).servers).toBe(2);
  });

  it('refuses a target no server count can meet', () => {
    expect(() => recommendServers(100, 1, 0.001, { maxServers: 50 })).toThrow(RangeError);
  });
});
