/**
 * Seeded randomness for the fault-injection tests, so that a run can be repeated with the same fault
 * sequence. The order in which concurrent requests draw from it still varies between runs.
 */
export { seededRandom } from '../../local/seeded-random.ts';

/** Fisher–Yates with the given generator. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
