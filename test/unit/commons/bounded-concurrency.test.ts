import { describe, expect, it } from 'vitest';
import { mapWithConcurrency } from '../../../functions/commons/bounded-concurrency.ts';

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
