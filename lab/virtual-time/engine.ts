/**
 * The lab's one discrete-event engine: virtual time, and a binary heap of timers due at virtual instants,
 * ordered by (due time, tie, sequence). Two tools drive it their own way:
 *
 * - the capacity simulation calls `run`, which fires every timer due at one instant, then lets the promise
 *   continuations they released run once (one `setImmediate` per instant, not per operation), with due times
 *   rounded to whole milliseconds so that an instant gathers many timers: millions of requests in minutes;
 * - the protocol checker's scheduler (../protocol-checker/scheduler.ts) takes one timer at a time
 *   (`takeNext`), with a seeded tie so that operations due at the same instant complete in an order the seed
 *   chooses, and lets the workers settle after each: a few hundred steps, reordered.
 *
 * Same timers in the same order, same run: equal due times and ties fire in the order they were set.
 */

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

/** A timer set by `after` or `at`, for `cancel`; `takeNext` hands it back to be fired. */
export interface Timer {
  /** Virtual ms at which it is due. */
  readonly at: number;
  fire(): void;
}

interface QueuedTimer extends Timer {
  readonly tie: number;
  readonly sequence: number;
  fire: () => void;
  cancelled: boolean;
}

const cancelled = () => undefined;

function firesFirst(a: QueuedTimer, b: QueuedTimer): boolean {
  if (a.at !== b.at) return a.at < b.at;
  if (a.tie !== b.tie) return a.tie < b.tie;
  return a.sequence < b.sequence;
}

const yieldToContinuations = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface EngineOptions {
  /** Round each due time to the whole millisecond, so that an instant gathers many timers. @default false */
  readonly wholeMilliseconds?: boolean;
}

export interface RunOutcome {
  /** Virtual ms when the run stopped. */
  readonly endedAt: number;
  readonly instants: number;
  readonly timersFired: number;
}

export class Engine {
  #now: number;
  #sequence = 0;
  readonly #round: (ms: number) => number;
  readonly #timers = new MinHeap<QueuedTimer>(firesFirst);
  /** The first error a timer threw in `run` (a simulator bug): the run stops on it. */
  failure: unknown;

  constructor(startMs: number, options: EngineOptions = {}) {
    this.#round = options.wholeMilliseconds ? Math.round : (ms) => ms;
    this.#now = this.#round(startMs);
  }

  get now(): number {
    return this.#now;
  }

  /** Timers in the heap, cancelled ones included until their time. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Runs `fire` `delayMs` from now (never in the past); `tie` orders it among timers due at the same time. */
  after(delayMs: number, fire: () => void, tie = 0): Timer {
    const timer: QueuedTimer = {
      at: this.#now + Math.max(0, this.#round(delayMs)),
      tie,
      sequence: this.#sequence++,
      fire,
      cancelled: false,
    };
    this.#timers.push(timer);
    return timer;
  }

  at(timeMs: number, fire: () => void): Timer {
    return this.after(timeMs - this.#now, fire);
  }

  /**
   * The timer will do nothing, and what `fire` held (a queue message and its body, kept by a visibility
   * timeout's return) is free at once. The timer stays in the heap until its time (taking one out of the middle
   * of a heap costs a search); `takeNext` passes over it, `run` fires it as a no-op.
   */
  cancel(timer: Timer): void {
    const queued = timer as QueuedTimer;
    queued.cancelled = true;
    queued.fire = cancelled;
  }

  /** The earliest timer not cancelled, taken out of the heap with the clock moved to it; the caller fires it. */
  takeNext(): Timer | undefined {
    for (;;) {
      const timer = this.#timers.pop();
      if (timer === undefined) return undefined;
      if (timer.cancelled) continue;
      this.#now = timer.at;
      return timer;
    }
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
        const timer = this.#timers.pop() as QueuedTimer;
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
