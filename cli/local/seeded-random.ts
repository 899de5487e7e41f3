/**
 * Seeded randomness, so that a run can be repeated: the outage drill (`--seed`), the benchmarks (both
 * contestants see the same workload), the fault-injection tests, the protocol checker and the capacity
 * simulation replay the same sequence from one seed. (The order in which concurrent requests draw from one
 * generator still varies between runs.) The house's only generator: the protocol checker's recorded reports
 * and pinned seeds and the capacity simulation's recorded results are functions of its sequence
 * (docs/decisions.md, "One seeded generator, mulberry32, not pure-rand").
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

/**
 * The simulations' source of decisions: `seededRandom`'s stream with the draws they make, and independent
 * streams forked by name. Each concern (workload, faults, latencies, queue) draws from its own fork, so that a
 * change in how often one of them draws does not reshuffle the others' choices for the same seed.
 */
export class SeededRandom {
  readonly seed: number;
  readonly #next: () => number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    this.#next = seededRandom(this.seed);
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.#next();
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.#next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return probability > 0 && this.#next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.#next() * items.length)] as T;
  }

  shuffle<T>(items: readonly T[]): T[] {
    return shuffled(items, this.#next);
  }

  /** An independent stream named `label`, derived from this stream's seed (not from its position). */
  fork(label: string): SeededRandom {
    return new SeededRandom(hashSeed(this.seed, label));
  }
}

/** FNV-1a over `<seed>:<label>`. */
function hashSeed(seed: number, label: string): number {
  let hash = 0x811c9dc5;
  for (const char of `${seed}:${label}`) {
    hash ^= char.codePointAt(0) as number;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
