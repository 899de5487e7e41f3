/**
 * The simulator's only source of decisions: seeded streams over the project's mulberry32 generator. Each
 * concern (workload, faults, latencies, queue) draws from its own fork, so that a change in how often one of
 * them draws does not reshuffle the others' choices for the same seed.
 */
import { seededRandom, shuffled } from '../../cli/local/seeded-random.ts';

export class Prng {
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
  fork(label: string): Prng {
    return new Prng(hashSeed(this.seed, label));
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
