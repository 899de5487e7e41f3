/**
 * The long commands' progress bar with an ETA (the bench, the capacity simulation, the protocol checker, ops
 * replay, the outage drill), one library: cli-progress. It is drawn on stderr, and only when stderr is a
 * terminal, so that a log or a CI job keeps plain lines and JSON on stdout stays parseable; off a terminal it
 * draws nothing and `log` writes plain lines.
 *
 * The bar is redrawn from `update` (at most five times a second), not from a timer alone: the simulations run in
 * virtual time on promise jobs, which give the event loop's timers no turn until they are done.
 */
import cliProgress from 'cli-progress';

export interface ProgressStream {
  write(text: string): unknown;
  /** A terminal: the bar is drawn. */
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface ProgressBarOptions {
  /** What is counted, before the bar. */
  readonly label: string;
  readonly total: number;
  /** @default 0 */
  readonly start?: number;
  /** How `value/total` reads after the ETA; without it, neither is shown. */
  readonly formatValue?: (value: number) => string;
  /** @default process.stderr */
  readonly stream?: ProgressStream;
}

export interface ProgressBar {
  /** Whether a bar is drawn (stderr is a terminal). */
  readonly shown: boolean;
  /** Moves the bar to `value`, with `detail` after it. */
  update(value: number, detail?: string): void;
  /** A line on the bar's stream, above the bar. */
  log(line: string): void;
  /** Writes on another stream (stdout) with the bar cleared, and draws the bar again below what it wrote. */
  aside(write: () => void): void;
  /** Clears the bar; `log` writes plain lines from then on. */
  stop(): void;
}

const REDRAW_MS = 200;
const BAR_CELLS = 28;

export function progressBar(options: ProgressBarOptions): ProgressBar {
  const stream = options.stream ?? process.stderr;
  if (stream.isTTY !== true) return plainLines(stream);
  const { label, formatValue } = options;
  const multi = new cliProgress.MultiBar({
    stream: stream as NodeJS.WritableStream,
    clearOnComplete: true,
    // Lines are cut to the terminal's width here instead of switching its line wrapping off: a command
    // interrupted with ^C would leave it off.
    linewrap: true,
    // After a line logged above it, the bar is drawn again even though its text did not change.
    forceRedraw: true,
    fps: 1000 / REDRAW_MS,
    etaBuffer: 50,
    barsize: BAR_CELLS,
    barCompleteChar: '█',
    barIncompleteChar: '░',
    format: (format, params, payload: { detail?: string }) => {
      const percent = `${Math.floor(params.progress * 100)} %`.padStart(5);
      // cli-progress's ETA is a string until two updates are apart in time, and 0 when they are not.
      const known = typeof params.eta === 'number' && (params.eta > 0 || params.value >= params.total);
      const eta = known ? cliProgress.Format.TimeFormat(params.eta, format, 5) : '–';
      const count =
        formatValue === undefined ? '' : ` | ${formatValue(params.value)}/${formatValue(params.total)}`;
      const detail = payload.detail ? ` | ${payload.detail}` : '';
      const line = `${label} ${cliProgress.Format.BarFormat(params.progress, format)} ${percent} | ETA ${eta}${count}${detail}`;
      return line.slice(0, Math.max(0, (stream.columns || 80) - 1));
    },
  });
  const bar = multi.create(options.total, options.start ?? 0, { detail: '' });
  let stopped = false;
  let drawnAt = 0;
  const draw = () => {
    multi.update();
    drawnAt = Date.now();
  };
  draw();
  return {
    shown: true,
    update(value, detail) {
      if (stopped) return;
      bar.update(value, detail === undefined ? {} : { detail });
      if (Date.now() - drawnAt >= REDRAW_MS) draw();
    },
    log(line) {
      if (stopped) {
        stream.write(`${line}\n`);
        return;
      }
      multi.log(`${line}\n`);
      draw();
    },
    aside(write) {
      if (stopped) return write();
      stream.write('\r\x1b[K');
      write();
      draw();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      // Lines logged since the last redraw are written before the bar is cleared.
      multi.update();
      multi.stop();
    },
  };
}

function plainLines(stream: ProgressStream): ProgressBar {
  return {
    shown: false,
    update: () => undefined,
    log: (line) => void stream.write(`${line}\n`),
    aside: (write) => write(),
    stop: () => undefined,
  };
}
