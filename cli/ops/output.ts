/**
 * Where an ops command writes: its result on stdout (text, or JSON with `--json`), progress of long
 * operations and the record of what it changed on stderr, so that `--json` output stays parseable.
 */
export interface OpsStreams {
  readonly stdout: { write(text: string): unknown };
  /** `isTTY`, `columns`: a terminal, where progress is one line rewritten in place. */
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean; readonly columns?: number };
}

export class Output {
  readonly json: boolean;
  readonly #streams: OpsStreams;
  #statusShown = false;

  constructor(streams: OpsStreams, json: boolean) {
    this.#streams = streams;
    this.json = json;
  }

  /** The command's result: `value` as JSON, or the text lines. */
  result(value: unknown, textLines: readonly string[]): void {
    this.clearStatusLine();
    this.#streams.stdout.write(
      this.json ? `${JSON.stringify(value, null, 2)}\n` : `${textLines.join('\n')}\n`,
    );
  }

  progress(line: string): void {
    this.clearStatusLine();
    this.#streams.stderr.write(`${line}\n`);
  }

  /** Whether stderr is a terminal (a progress bar), or a file or pipe (progress lines). */
  get terminal(): boolean {
    return this.#streams.stderr.isTTY === true;
  }

  /** On a terminal: one status line (a progress bar) rewritten in place, cut to the terminal's width. */
  statusLine(text: string): void {
    const width = (this.#streams.stderr.columns || 120) - 1;
    this.#streams.stderr.write(`\r\x1b[K${text.slice(0, width)}`);
    this.#statusShown = true;
  }

  clearStatusLine(): void {
    if (this.#statusShown) this.#streams.stderr.write('\r\x1b[K');
    this.#statusShown = false;
  }

  /**
   * One JSON line per change an operator made (a forgotten claim, a redrive, a requeue): keys, ids and
   * counts only, never message content.
   */
  record(action: string, fields: Record<string, unknown>): void {
    this.clearStatusLine();
    this.#streams.stderr.write(
      `${JSON.stringify({ level: 'INFO', message: `ops ${action}`, timestamp: new Date().toISOString(), ...fields })}\n`,
    );
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
