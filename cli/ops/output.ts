/**
 * Where an ops command writes: its result on stdout (text, or JSON with `--json`), progress of long
 * operations and the record of what it changed on stderr, so that `--json` output stays parseable.
 */
import { type ProgressBar, type ProgressBarOptions, progressBar } from '../tools/progress-bar.ts';

export interface OpsStreams {
  readonly stdout: { write(text: string): unknown };
  /** `isTTY`, `columns`: a terminal, where a long operation shows a progress bar. */
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean; readonly columns?: number };
}

export class Output {
  readonly json: boolean;
  readonly #streams: OpsStreams;
  #bar: ProgressBar | undefined;

  constructor(streams: OpsStreams, json: boolean) {
    this.#streams = streams;
    this.json = json;
  }

  /** The command's result: `value` as JSON, or the text lines; a progress bar is cleared first. */
  result(value: unknown, textLines: readonly string[]): void {
    this.#bar?.stop();
    this.#streams.stdout.write(
      this.json ? `${JSON.stringify(value, null, 2)}\n` : `${textLines.join('\n')}\n`,
    );
  }

  progress(line: string): void {
    this.#stderrLine(line);
  }

  /** Whether stderr is a terminal (a progress bar), or a file or pipe (progress lines). */
  get terminal(): boolean {
    return this.#streams.stderr.isTTY === true;
  }

  /**
   * A progress bar on stderr (cli/tools/progress-bar.ts), drawn on a terminal only; progress and records are
   * written above it while it runs.
   */
  progressBar(options: Omit<ProgressBarOptions, 'stream'>): ProgressBar {
    this.#bar?.stop();
    this.#bar = progressBar({ ...options, stream: this.#streams.stderr });
    return this.#bar;
  }

  /**
   * One JSON line per change an operator made (a forgotten claim, a redrive, a requeue): keys, ids and
   * counts only, never message content.
   */
  record(action: string, fields: Record<string, unknown>): void {
    this.#stderrLine(
      JSON.stringify({
        level: 'INFO',
        message: `ops ${action}`,
        timestamp: new Date().toISOString(),
        ...fields,
      }),
    );
  }

  #stderrLine(line: string): void {
    if (this.#bar === undefined) this.#streams.stderr.write(`${line}\n`);
    else this.#bar.log(line);
  }
}

/**
 * `label  value` lines with the labels padded to one width (the longest, or `width`); undefined values are
 * left out.
 */
export function labelled(
  rows: readonly (readonly [string, string | number | undefined])[],
  options: { readonly indent?: string; readonly width?: number } = {},
): string[] {
  const present = rows.filter((row): row is readonly [string, string | number] => row[1] !== undefined);
  const width = options.width ?? Math.max(0, ...present.map(([label]) => label.length));
  return present.map(([label, value]) => `${options.indent ?? ''}${label.padEnd(width)}  ${value}`);
}

/** `3 s`, `4 min`, `2 h`, `8 d`: how far an epoch-ms time is from now, for text output. */
export function age(fromMs: number, toMs: number): string {
  const seconds = Math.max(0, Math.round((toMs - fromMs) / 1000));
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}
