/**
 * How far `ops replay` is, on stderr: on a terminal the long commands' progress bar (cli/tools/progress-bar.ts)
 * with the share of the range's time gone through and its ETA; otherwise one line every few seconds, so that a
 * log keeps a readable trail. The share is by arrival time between the first and the last delivery the archive
 * holds in the range, which needs no count of the records before reading them.
 */

import type { ProgressBar } from '../../tools/progress-bar.ts';
import type { ArchivePosition } from '../adapters/archive-reader.ts';
import { age, type Output } from '../output.ts';
import type { ReplayCounts } from './run-replay.ts';

/** The bar counts thousandths of the range. */
const BAR_TOTAL = 1000;
/** Without a terminal, a line is written at most this often. */
const LINE_INTERVAL_MS = 5_000;

export class ReplayProgress {
  readonly #output: Output;
  readonly #clock: () => number;
  readonly #spanStartMs: number;
  readonly #spanMs: number;
  readonly #startedMs: number;
  readonly #bar: ProgressBar | undefined;
  #startFraction: number | undefined;
  #lastLineMs = Number.NEGATIVE_INFINITY;

  /** `spanStartMs`..`spanEndMs`: the first and the last arrival the range's archive objects may hold. */
  constructor(output: Output, clock: () => number, spanStartMs: number, spanEndMs: number) {
    this.#output = output;
    this.#clock = clock;
    this.#spanStartMs = spanStartMs;
    this.#spanMs = Math.max(1, spanEndMs - spanStartMs);
    this.#startedMs = clock();
    this.#bar = output.terminal ? output.progressBar({ label: 'replay', total: BAR_TOTAL }) : undefined;
  }

  /** The share of the range gone through once `position` is sent. */
  fraction(position: ArchivePosition): number {
    return Math.min(1, Math.max(0, (Date.parse(position.arrivedAt) - this.#spanStartMs) / this.#spanMs));
  }

  update(position: ArchivePosition, counts: ReplayCounts): void {
    const fraction = this.fraction(position);
    const summary = `${counts.deliveries.sent} sent, ${counts.keys.done} keys done before, ${counts.keys.notDone + counts.keys.forgotten} to effect, at ${position.arrivedAt}`;
    if (this.#bar !== undefined) {
      this.#bar.update(Math.floor(fraction * BAR_TOTAL), summary);
      return;
    }
    const now = this.#clock();
    this.#startFraction ??= fraction;
    if (now - this.#lastLineMs < LINE_INTERVAL_MS) return;
    this.#lastLineMs = now;
    this.#output.progress(
      `replay ${Math.floor(fraction * 100)} % (ETA ${this.#eta(fraction, now)}): ${summary}`,
    );
  }

  done(): void {
    this.#bar?.stop();
  }

  /** The lines' ETA: the rest of the range at the pace since this run's first record. */
  #eta(fraction: number, now: number): string {
    const gone = fraction - (this.#startFraction ?? 0);
    if (gone <= 0) return '–';
    const elapsed = now - this.#startedMs;
    return age(0, (elapsed * (1 - fraction)) / gone);
  }
}
