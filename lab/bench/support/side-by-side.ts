/**
 * Timing several things in the same iterations, so that their ratio compares samples taken moments apart
 * rather than runs made minutes apart on a machine whose load changes (the receiver bench's floor, one
 * subscriber and several).
 */

/** One measurement on a fresh input: returns the milliseconds it took. */
export type Timer<I> = (input: I) => Promise<number>;

/**
 * Runs every timer once per iteration, each on its own `nextInput()`, their order rotated from one iteration
 * to the next so that none always runs first or always right after another (which would warm its caches).
 * The first `warmup` iterations are run and dropped; returns the measured samples of each timer, in the
 * timers' order.
 */
export async function timeSideBySide<I>(
  timers: readonly Timer<I>[],
  nextInput: () => I,
  warmup: number,
  iterations: number,
): Promise<number[][]> {
  const samples = timers.map(() => [] as number[]);
  for (let iteration = 0; iteration < warmup + iterations; iteration++) {
    for (let step = 0; step < timers.length; step++) {
      const which = (iteration + step) % timers.length;
      const elapsed = await (timers[which] as Timer<I>)(nextInput());
      if (iteration >= warmup) (samples[which] as number[]).push(elapsed);
    }
  }
  return samples;
}
