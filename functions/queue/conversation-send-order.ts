/**
 * Keeps the order in which this process accepted deliveries for a conversation (docs/design.md §8): a send to
 * an ordered lane waits until the previous send of the same queue and conversation has settled, so that two
 * deliveries of one conversation that arrive a few milliseconds apart are stored in the order they arrived,
 * and not in the order their SendMessageBatch calls happened to land. A Lambda container takes one request at
 * a time, so there it costs nothing; the local stack, one process for every POST, depends on it.
 * Only the order of arrival within one process: across containers the queue's order is the acceptance order.
 */
export class ConversationSendOrder {
  readonly #last = new Map<string, Promise<unknown>>();

  /**
   * Runs `send` after the previous sends of every one of `conversations` on `queueUrl` settled (whatever
   * their outcome). Must be called in arrival order, before the caller's first await for this delivery.
   */
  run<T>(queueUrl: string, conversations: readonly string[], send: () => Promise<T>): Promise<T> {
    const keys = [...new Set(conversations)].map((conversation) => `${queueUrl}\n${conversation}`);
    const previous = keys.flatMap((key) => {
      const last = this.#last.get(key);
      return last === undefined ? [] : [last];
    });
    const result = previous.length === 0 ? send() : Promise.allSettled(previous).then(() => send());
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    for (const key of keys) this.#last.set(key, settled);
    void settled.then(() => {
      for (const key of keys) if (this.#last.get(key) === settled) this.#last.delete(key);
    });
    return result;
  }

  /** Conversations with a send in flight (for tests). */
  get pending(): number {
    return this.#last.size;
  }
}
