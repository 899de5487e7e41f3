/**
 * Seeded randomness, so that a run can be repeated: the simulator (`--seed`), the benchmarks (both
 * contestants see the same workload) and the fault-injection tests replay the same sequence from one seed.
 * (The order in which concurrent requests draw from one generator still varies between runs.)
 */

/** A seeded uniform generator in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A shuffled copy (Fisher–Yates) drawn from the given generator. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
