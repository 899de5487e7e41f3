/**
 * What the local stack's terminal shows of what the handlers print. Powertools writes every EMF document and
 * every log entry as one JSON line, as CloudWatch wants it; in a terminal among one-line summaries a 600-character
 * entry is noise. Routine output (EMF, INFO, DEBUG) goes to the dashboard only; a warning or an error becomes one
 * line that says what happened and why (`warn: Delivery refused: bad signature (mismatch)`). `LOCAL_VERBOSE`
 * prints every line whole instead.
 */

const VERBOSE_HINT = ' [LOCAL_VERBOSE=1 prints every log entry whole]';

interface LogEntry {
  readonly level?: unknown;
  readonly message?: unknown;
  readonly problem?: unknown;
  readonly reason?: unknown;
  readonly error?: { readonly message?: unknown; readonly name?: unknown };
}

/** A function of a line to what the terminal shows of it, or undefined to show nothing; the first condensed line carries the hint. */
export function terminalLines(verbose: boolean): (line: string) => string | undefined {
  let hinted = false;
  return (line) => {
    if (verbose) return line;
    if (line.startsWith('{"_aws"') || /^\{"level":"(INFO|DEBUG|TRACE)"/.test(line)) return undefined;
    const entry = logEntryOf(line);
    if (entry === undefined) return line;
    const why = [entry.problem, entry.reason, entry.error?.message ?? entry.error?.name].find(
      (value) => typeof value === 'string' && value !== '',
    );
    const condensed = `${String(entry.level).toLowerCase()}: ${String(entry.message)}${why === undefined ? '' : ` (${why})`}`;
    if (hinted) return condensed;
    hinted = true;
    return condensed + VERBOSE_HINT;
  };
}

function logEntryOf(line: string): LogEntry | undefined {
  if (!line.startsWith('{"level":')) return undefined;
  try {
    const entry = JSON.parse(line) as LogEntry;
    return typeof entry.level === 'string' && typeof entry.message === 'string' ? entry : undefined;
  } catch {
    return undefined;
  }
}
