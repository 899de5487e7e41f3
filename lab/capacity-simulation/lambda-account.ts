/**
 * The account's Lambda concurrency, shared by the receiver and every consumer: an invocation takes one
 * execution environment for its duration and is throttled when none is free (1,000 per account and Region by
 * default). https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 */
export class LambdaAccount {
  readonly limit: number;
  #running = 0;
  #peak = 0;
  throttles = 0;
  readonly #peakBy = new Map<string, number>();
  readonly #runningBy = new Map<string, number>();

  constructor(limit: number) {
    this.limit = limit;
  }

  get running(): number {
    return this.#running;
  }

  get peak(): number {
    return this.#peak;
  }

  /** The most executions `fn` (a function's name) held at once. */
  peakOf(fn: string): number {
    return this.#peakBy.get(fn) ?? 0;
  }

  /** Takes an execution for `fn`; false (a throttle) when the account has none left. */
  acquire(fn: string): boolean {
    if (this.#running >= this.limit) {
      this.throttles++;
      return false;
    }
    this.#running++;
    this.#peak = Math.max(this.#peak, this.#running);
    const mine = (this.#runningBy.get(fn) ?? 0) + 1;
    this.#runningBy.set(fn, mine);
    if (mine > (this.#peakBy.get(fn) ?? 0)) this.#peakBy.set(fn, mine);
    return true;
  }

  release(fn: string): void {
    this.#running--;
    this.#runningBy.set(fn, (this.#runningBy.get(fn) ?? 1) - 1);
  }
}
