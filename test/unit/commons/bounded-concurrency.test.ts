import { describe, expect, it } from 'vitest';
import { concurrencyLimit, mapWithConcurrency } from '../../../functions/commons/bounded-concurrency.ts';

/** A task whose completion the test controls, to observe how many run at once. */
function tracker() {
  let running = 0;
  let maxRunning = 0;
  const started: number[] = [];
  const task = async (item: number, index: number): Promise<string> => {
    started.push(index);
    running += 1;
    maxRunning = Math.max(maxRunning, running);
    // Later items finish first, so completion order differs from input order.
    await new Promise((resolve) => setTimeout(resolve, (10 - item) % 4));
    running -= 1;
    return `r${item}`;
  };
  return { task, started, maxRunning: () => maxRunning };
}

describe('mapWithConcurrency', () => {
  it('returns results in input order', async () => {
    const { task } = tracker();
    expect(await mapWithConcurrency([1, 2, 3, 4, 5, 6, 7], 3, task)).toEqual([
      'r1',
      'r2',
      'r3',
      'r4',
      'r5',
      'r6',
      'r7',
    ]);
  });

  it.each([1, 3, 16])('never runs more than %i tasks at once', async (limit) => {
    const { task, maxRunning } = tracker();
    await mapWithConcurrency(
      Array.from({ length: 20 }, (_, i) => i),
      limit,
      task,
    );
    expect(maxRunning()).toBe(Math.min(limit, 20));
  });

  it('starts no new task after one failed, and rejects with its error', async () => {
    const started: number[] = [];
    const run = mapWithConcurrency([0, 1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (item === 1) throw new Error('boom');
      return item;
    });
    await expect(run).rejects.toThrow('boom');
    expect(started.length).toBeLessThan(6);
  });

  it('handles an empty list and refuses a limit below 1', async () => {
    expect(await mapWithConcurrency([], 4, async () => 1)).toEqual([]);
    await expect(mapWithConcurrency([1], 0, async () => 1)).rejects.toThrow(RangeError);
  });
});

describe('concurrencyLimit', () => {
  const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

  it('runs at most its limit at once over every caller, the waiting ones in call order', async () => {
    const limit = concurrencyLimit(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const waited: boolean[] = [];
    await Promise.all(
      Array.from({ length: 7 }, (_, index) =>
        limit.run(async (didWait) => {
          order.push(index);
          waited[index] = didWait;
          running += 1;
          most = Math.max(most, running);
          await tick();
          running -= 1;
        }),
      ),
    );
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(waited).toEqual([false, false, true, true, true, true, true]);
    expect([limit.running, limit.waiting]).toEqual([0, 0]);
  });

  it('frees the slot of a task that throws, and settles as the task does', async () => {
    const limit = concurrencyLimit(1);
    const failing = limit.run(async () => {
      throw new Error('boom');
    });
    const next = limit.run(async () => 'ran');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ran');
    expect(limit.running).toBe(0);
  });

  it('refuses a limit that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => concurrencyLimit(bad)).toThrow(RangeError);
  });
});
