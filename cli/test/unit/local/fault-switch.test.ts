import { describe, expect, it } from 'vitest';
import { FaultSwitch, InvalidFaultsError, NO_FAULTS } from '../../../local/stack/fault-switch.ts';

describe('FaultSwitch', () => {
  it('starts with no faults and applies partial updates', () => {
    const faults = new FaultSwitch();
    expect(faults.current).toEqual(NO_FAULTS);

    faults.update({ webhook: { mode: 'error' } });
    faults.update({ effect: { delayMs: 150, distribution: 'exponential' } });

    expect(faults.current).toEqual({
      webhook: { mode: 'error', errorStatus: 503 },
      effect: { delayMs: 150, distribution: 'exponential' },
    });
    expect(faults.nextWebhookBehaviour()).toBe('error');
  });

  it.each([
    [{ webhook: { mode: 'down' } }, /webhook.mode/],
    [{ webhook: { errorStatus: 200 } }, /errorStatus/],
    [{ effect: { delayMs: -1 } }, /delayMs/],
    [{ effect: { delayMs: 'slow' } }, /delayMs/],
    [{ effect: { distribution: 'normal' } }, /distribution/],
    [{ surprise: true }, /Unknown setting/],
    [[], /JSON object/],
  ])('refuses %j and keeps the previous faults', (patch, message) => {
    const faults = new FaultSwitch();
    expect(() => faults.update(patch)).toThrow(InvalidFaultsError);
    expect(() => faults.update(patch)).toThrow(message);
    expect(faults.current).toEqual(NO_FAULTS);
  });

  it('splits `mixed` between 5xx answers and lost answers', () => {
    const draws = [0.1, 0.9, 0.49, 0.5];
    const faults = new FaultSwitch(NO_FAULTS, () => draws.shift() ?? 0);
    faults.update({ webhook: { mode: 'mixed' } });
    expect([1, 2, 3, 4].map(() => faults.nextWebhookBehaviour())).toEqual([
      'error',
      'lost-ack',
      'error',
      'lost-ack',
    ]);
  });

  it('draws exponential effect times around the mean', () => {
    let seed = 1;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const faults = new FaultSwitch(NO_FAULTS, random);
    faults.update({ effect: { delayMs: 100, distribution: 'exponential' } });
    const samples = Array.from({ length: 20_000 }, () => faults.nextEffectDelayMs());
    const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
    expect(mean).toBeGreaterThan(95);
    expect(mean).toBeLessThan(105);
    // An exponential's median is ln 2 × mean.
    const median = [...samples].sort((a, b) => a - b)[samples.length / 2] as number;
    expect(median).toBeGreaterThan(65);
    expect(median).toBeLessThan(74);
  });

  it('gives the fixed delay when asked for a fixed one', () => {
    const faults = new FaultSwitch();
    faults.update({ effect: { delayMs: 40 } });
    expect(faults.nextEffectDelayMs()).toBe(40);
  });
});
