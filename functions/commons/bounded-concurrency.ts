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
