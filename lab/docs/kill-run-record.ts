/**
 * What test/integration/pipeline/consumer-killed.test.ts saw, as it prints it and as docs/consumer.md shows it.
 * `KILL_TEST_RECORD=1 npx vitest run test/integration/pipeline/consumer-killed.test.ts` appends the run to
 * KILL_RUNS_PATH; `npm run docs:runs` writes the page's region from that file, and
 * lab/test/docs/generated-figures.test.ts compares the two. The kill lands at a moment the machine's load
 * decides, so the page shows recorded runs, not a rerun.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export const KILL_RUNS_PATH = 'test/integration/pipeline/consumer-killed.runs.json';
export const KILL_RUN_PAGE = 'docs/consumer.md';
export const KILL_RUN_REGION = 'kill-test-runs';

export interface KillRun {
  readonly recordedAt: string;
  readonly machine: { readonly cores: number; readonly loadAverage: readonly [number, number] };
  readonly events: number;
  readonly killedAfterEffects: number;
  readonly claimsLeftProcessing: number;
  readonly inWindow: number;
  readonly windowCap: number;
  readonly effectedTwice: number;
  readonly killedAfterFirstEffectMs: number;
  readonly wallSeconds: number;
}

export interface KillRuns {
  readonly runs: readonly KillRun[];
}

/** The line the test prints (it adds the invocations and phase timings after it). */
export function killTestLine(run: KillRun): string {
  return (
    `kill test: ${run.events} events, killed after ${run.killedAfterEffects} effects, ` +
    `${run.claimsLeftProcessing} claims left processing, ${run.inWindow} in the effect→complete window ` +
    `(cap ${run.windowCap}), ${run.effectedTwice} effected twice`
  );
}

export function readKillRuns(path: string | URL): KillRuns {
  return JSON.parse(readFileSync(path, 'utf8')) as KillRuns;
}

export function appendKillRun(path: string | URL, run: KillRun): void {
  let runs: readonly KillRun[] = [];
  try {
    runs = readKillRuns(path).runs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  writeFileSync(path, `${JSON.stringify({ runs: [...runs, run] }, null, 2)}\n`);
}

const list = (values: readonly (number | string)[]) =>
  values.length <= 1 ? values.join('') : `${values.slice(0, -1).join(', ')} and ${values.at(-1)}`;

export function killRunsMarkdown({ runs }: KillRuns): string {
  const last = runs.at(-1);
  if (last === undefined) return 'No recorded run yet.';
  const loads = runs.flatMap((run) => run.machine.loadAverage);
  const inWindow = runs.map((run) => run.inWindow);
  const doubles = runs.map((run) => run.effectedTwice);
  const same = inWindow.every((n, i) => n === doubles[i]);
  return [
    `The last recorded run (${last.recordedAt.slice(0, 10)}, ${last.wallSeconds.toFixed(0)} s, the kill ${last.killedAfterFirstEffectMs} ms after the first effect):`,
    '',
    '```',
    killTestLine(last),
    '```',
    '',
    `The ${runs.length} recorded runs (\`${KILL_RUNS_PATH}\`, on ${list([...new Set(runs.map((run) => run.machine.cores))])} cores, load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}) put ${list(inWindow)} events in the window, and effected ${list(doubles)} twice${
      same ? ': every event in the window, and no other.' : '.'
    }`,
  ].join('\n');
}
