/**
 * How far `ops replay` is, on stderr: on a terminal a bar with the share of the range's time gone through and
 * an ETA (the outage drill's bar, `textBar`), rewritten in place; otherwise one line every few seconds, so
 * that a log keeps a readable trail. The share is by arrival time between the first and the last delivery the
 * archive holds in the range, which needs no count of the records before reading them.
 */
import { textBar } from '../../tools/text-bar.ts';
import type { ArchivePosition } from '../adapters/archive-reader.ts';
import { age, type Output } from '../output.ts';
import type { ReplayCounts } from './run-replay.ts';

/** A bar is redrawn at most this often; a line is written at most this often without a terminal. */
const BAR_REDRAW_MS = 200;
const LINE_INTERVAL_MS = 5_000;

export class ReplayProgress {
  readonly #output: Output;
  readonly #clock: () => number;
  readonly #spanStartMs: number;
  readonly #spanMs: number;
  readonly #startedMs: number;
  #startFraction: number | undefined;
  #lastShownMs = Number.NEGATIVE_INFINITY;

  /** `spanStartMs`..`spanEndMs`: the first and the last arrival the range's archive objects may hold. */
  constructor(output: Output, clock: () => number, spanStartMs: number, spanEndMs: number) {
    this.#output = output;
    this.#clock = clock;
    this.#spanStartMs = spanStartMs;
    this.#spanMs = Math.max(1, spanEndMs - spanStartMs);
    this.#startedMs = clock();
  }

  /** The share of the range gone through once `position` is sent. */
  fraction(position: ArchivePosition): number {
    return Math.min(1, Math.max(0, (Date.parse(position.arrivedAt) - this.#spanStartMs) / this.#spanMs));
  }

  update(position: ArchivePosition, counts: ReplayCounts): void {
    const now = this.#clock();
    const fraction = this.fraction(position);
    this.#startFraction ??= fraction;
    if (now - this.#lastShownMs < (this.#output.terminal ? BAR_REDRAW_MS : LINE_INTERVAL_MS)) return;
    this.#lastShownMs = now;
    const percent = `${Math.floor(fraction * 100)} %`;
    const summary = `${counts.deliveries.sent} sent, ${counts.keys.done} keys done before, ${counts.keys.notDone + counts.keys.forgotten} to effect, at ${position.arrivedAt}`;
    if (this.#output.terminal) {
      this.#output.statusLine(
        `${textBar(fraction)} ${percent.padStart(5)}  ETA ${this.#eta(fraction, now)}  ${summary}`,
      );
    } else {
      this.#output.progress(`replay ${percent} (ETA ${this.#eta(fraction, now)}): ${summary}`);
    }
  }

  done(): void {
    this.#output.clearStatusLine();
  }

  #eta(fraction: number, now: number): string {
    const gone = fraction - (this.#startFraction ?? 0);
    if (gone <= 0) return '–';
    const elapsed = now - this.#startedMs;
    return age(0, (elapsed * (1 - fraction)) / gone);
  }
}
