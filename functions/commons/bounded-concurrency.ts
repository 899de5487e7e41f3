/**
 * Runs `task` over `items` with at most `limit` tasks in flight and returns the results in input order.
 * A rejected task stops new tasks from starting and rejects the whole call once the running ones settle.
 */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`The concurrency limit must be a positive integer, got ${limit}.`);
  }
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await task(items[index] as T, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const workers = Array.from({ length: Math.min(limit, items.length) }, worker);
  const settled = await Promise.allSettled(workers);
  const rejection = settled.find((outcome) => outcome.status === 'rejected');
  if (rejection) throw rejection.reason;
  return results;
}

/** At most `limit` tasks in flight at once among every caller of `run`, the waiting ones started in call order. */
export interface ConcurrencyLimit {
  /**
   * Runs `task` once fewer than `limit` tasks run, and settles as it does. `task` learns whether it had to wait
   * for its turn (then time has passed since the call).
   */
  run<R>(task: (waited: boolean) => Promise<R>): Promise<R>;
  /** Tasks running now. */
  readonly running: number;
  /** Tasks waiting for their turn. */
  readonly waiting: number;
}

export function concurrencyLimit(limit: number): ConcurrencyLimit {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`The concurrency limit must be a positive integer, got ${limit}.`);
  }
  let running = 0;
  const queue: (() => void)[] = [];
  const release = () => {
    const next = queue.shift();
    if (next === undefined) running -= 1;
    else next();
  };
  return {
    async run(task) {
      let waited = false;
      if (running < limit) running += 1;
      else {
        waited = true;
        // The slot passes straight from the task that ends to the one woken: `running` stays as it is.
        await new Promise<void>((resolve) => queue.push(resolve));
      }
      try {
        return await task(waited);
      } finally {
        release();
      }
    },
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
  };
}
