/**
 * How much one delivery may become in the queues of one subscriber (docs/receiver.md, "Amplification"). Pure.
 *
 * The lane split writes one envelope per conversation and the size split repeats the context of a cut change
 * in each part, so a body can come out larger than it went in. Legitimate bodies grow by a small factor; a
 * body built to be copied (one member repeated into thousands of parts) would otherwise fill the queues with
 * gigabytes or take the receiver past its timeout, and a 5xx makes Meta resend it for 7 days. The planner
 * charges every part it makes to a budget and stops as soon as the budget is spent: the body is then
 * quarantined whole (`amplifying-body`), so the work done is bounded by the budget, not by the body's design.
 */

/**
 * Bytes a subscriber's view of a delivery (its parts, plus the pieces quarantined as too large) may hold per
 * byte of the body. A conversation part repeats the envelope around its messages (`object`, the entry's `id`
 * and `time`, `field`, `messaging_product`, `metadata`: about 250 bytes) and the rest keeps the contacts, so the
 * worst legitimate body, a thousand customers' shortest messages in one change (about 200 bytes each with
 * its contact), comes out under 3 times its size (test/unit/receiver/amplification.test.ts checks it); 4
 * leaves a margin without letting a body multiply itself.
 */
export const AMPLIFICATION_FACTOR = 4;

/** Added to the bound so that a small body, where the repeated envelope outweighs the events, never reaches it. */
export const AMPLIFICATION_ALLOWANCE_BYTES = 64 * 1024;

/**
 * Parts a view may have besides those the size split makes: Meta batches at most 1000 updates in a body, so
 * at most 1000 conversations, and twice that is a margin. Tiny conversations are cheap in bytes but each is a
 * queue message: without this bound, a 3 MB body of empty messages from distinct senders would be 100,000
 * messages, more than the receiver can store before its timeout.
 */
export const MAX_PARTS_BEFORE_SIZE_SPLIT = 2_000;

export class OutputBudget {
  /** The most bytes the view may hold. */
  readonly maxBytes: number;
  /** The most parts (queue messages and quarantined pieces) the view may hold. */
  readonly maxParts: number;
  #bytes = 0;
  #parts = 0;
  #overrun = false;

  constructor(maxBytes: number, maxParts: number) {
    this.maxBytes = maxBytes;
    this.maxParts = maxParts;
  }

  /**
   * The budget of one view of a body of `bodyBytes`: `AMPLIFICATION_FACTOR` × the body +
   * `AMPLIFICATION_ALLOWANCE_BYTES`, in at most `MAX_PARTS_BEFORE_SIZE_SPLIT` parts plus two per message size
   * of those bytes (the size split fills each pair of consecutive parts past one message).
   *
   * @example
   * const budget = OutputBudget.forBody(reading.bytes, fanOut.maximumBodyBytes);
   */
  static forBody(bodyBytes: number, maximumBodyBytes: number): OutputBudget {
    const maxBytes = AMPLIFICATION_FACTOR * bodyBytes + AMPLIFICATION_ALLOWANCE_BYTES;
    return new OutputBudget(
      maxBytes,
      MAX_PARTS_BEFORE_SIZE_SPLIT + 2 * Math.ceil(maxBytes / Math.max(1, maximumBodyBytes)),
    );
  }

  /**
   * Counts `parts` parts (one by default) of `bytes` in all; `false` once the budget is spent (then it stays
   * spent). Parts known in advance may be counted first and their bytes as they are made.
   */
  charge(bytes: number, parts = 1): boolean {
    this.#bytes += bytes;
    this.#parts += parts;
    if (this.#bytes > this.maxBytes || this.#parts > this.maxParts) this.#overrun = true;
    return !this.#overrun;
  }

  /** Takes back a part that is replaced by others (a piece cut to the message size). */
  refund(bytes: number): void {
    this.#bytes -= bytes;
    this.#parts--;
  }

  get exceeded(): boolean {
    return this.#overrun;
  }

  /** What the view holds so far, for a log line. */
  get spent(): { readonly bytes: number; readonly parts: number } {
    return { bytes: this.#bytes, parts: this.#parts };
  }
}
