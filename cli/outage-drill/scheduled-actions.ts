/**
 * Actions set to run later (the outage switching, Meta's redeliveries): the drain waits until none is left,
 * and the end of the run cancels what never ran.
 */
export class ScheduledActions {
  readonly #timers = new Set<NodeJS.Timeout>();

  get pending(): number {
    return this.#timers.size;
  }

  after(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      action();
    }, ms);
    this.#timers.add(timer);
  }

  cancelAll(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }
}
