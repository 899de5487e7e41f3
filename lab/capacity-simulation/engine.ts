/**
 * The scale simulator's discrete-event engine (docs/capacity.md, "Simulation"): virtual time in whole
 * milliseconds, a binary heap of timers keyed (virtual ms, sequence), and a run loop that fires every timer
 * due at one instant, then lets the promise continuations they released run once (one `setImmediate` per
 * instant, not per operation). The protocol simulator's scheduler (../scheduler.ts) scans and settles per
 * operation, which is right for reordering a few hundred steps and far too slow for millions of requests.
 *
 * Same timers in the same order, same run: ties fire in the order they were set.
 */

type Timer = { readonly at: number; readonly sequence: number; fire: () => void };

/** A timer set by `after` or `at`, for `cancel`. */
export type TimerHandle = { readonly at: number };

const cancelled = () => undefined;

export class MinHeap<T> {
  readonly #items: T[] = [];
  readonly #before: (a: T, b: T) => boolean;

  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let index = items.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.#before(item, items[parent] as T)) break;
      items[index] = items[parent] as T;
      index = parent;
    }
    items[index] = item;
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let index = 0;
    const length = items.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && this.#before(items[right] as T, items[left] as T) ? right : left;
      if (!this.#before(items[child] as T, last)) break;
      items[index] = items[child] as T;
      index = child;
    }
    items[index] = last;
    return top;
  }
}

const yieldToContinuations = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface RunOutcome {
  /** Virtual ms when the run stopped. */
  readonly endedAt: number;
  readonly instants: number;
  readonly timersFired: number;
}

export class Engine {
  #now: number;
  #sequence = 0;
  readonly #timers = new MinHeap<Timer>((a, b) => a.at < b.at || (a.at === b.at && a.sequence < b.sequence));
  /** The first error a timer threw (a simulator bug): the run stops on it. */
  failure: unknown;

  constructor(startMs: number) {
    this.#now = Math.round(startMs);
  }

  get now(): number {
    return this.#now;
  }

  get pending(): number {
    return this.#timers.size;
  }

  /** Runs `fire` `delayMs` from now (rounded to the millisecond, never in the past). */
  after(delayMs: number, fire: () => void): TimerHandle {
    const at = this.#now + Math.max(0, Math.round(delayMs));
    const timer: Timer = { at, sequence: this.#sequence++, fire };
    this.#timers.push(timer);
    return timer;
  }

  at(timeMs: number, fire: () => void): TimerHandle {
    return this.after(timeMs - this.#now, fire);
  }

  /**
   * The timer will do nothing, and what `fire` held (a queue message and its body, kept by a visibility
   * timeout's return) is free at once. The timer itself stays in the heap until its time, so that every other
   * timer fires at the same instant in the same order as without the cancel.
   */
  cancel(handle: TimerHandle): void {
    (handle as Timer).fire = cancelled;
  }

  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.after(delayMs, resolve));
  }

  /** Fires timers instant by instant until none is left, `untilMs` is passed or `stop()` says so. */
  async run(options: { untilMs?: number; stop?: () => boolean } = {}): Promise<RunOutcome> {
    const until = options.untilMs ?? Number.POSITIVE_INFINITY;
    let instants = 0;
    let timersFired = 0;
    await yieldToContinuations();
    for (;;) {
      const next = this.#timers.peek();
      if (next === undefined || next.at > until || this.failure !== undefined) break;
      if (options.stop?.()) break;
      this.#now = next.at;
      instants++;
      while (this.#timers.peek()?.at === this.#now) {
        const timer = this.#timers.pop() as Timer;
        timersFired++;
        try {
          timer.fire();
        } catch (error) {
          this.failure ??= error;
        }
      }
      await yieldToContinuations();
    }
    if (this.failure !== undefined) throw this.failure;
    return { endedAt: this.#now, instants, timersFired };
  }
}
