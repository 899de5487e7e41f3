/**
 * Runs `run` with `Math.random` drawing from `random`, and puts the original back afterwards. The consumer
 * jitters its completion retries with `Math.random`, and in a schedule that jitter is virtual time: unseeded,
 * two runs of one seed would drift apart. Schedules run one after another, never concurrently, so the swap
 * is not observed by another schedule.
 */
import type { SeededRandom } from '../../cli/local/seeded-random.ts';

export async function withSeededMathRandom<T>(random: SeededRandom, run: () => Promise<T>): Promise<T> {
  const original = Math.random;
  Math.random = () => random.next();
  try {
    return await run();
  } finally {
    Math.random = original;
  }
}
