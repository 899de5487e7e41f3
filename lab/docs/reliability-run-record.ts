/**
 * What a reliability test printed for its run, as docs/reliability.md shows it: the same mechanism as the kill
 * test's (lab/docs/kill-run-record.ts). `RELIABILITY_RECORD=1 npx vitest run test/reliability/NAME.test.ts`
 * appends the run to the test's committed record (`RELIABILITY_RUNS[NAME].path`), after its assertions
 * passed; `npm run docs:runs` (lab/docs/run-regions.ts) writes the page's region from the records, and
 * lab/test/docs/generated-figures.test.ts compares the two. Faults and kills land where the machine's load
 * decides, so the page shows recorded runs, not a rerun.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';

export const RELIABILITY_PAGE = 'docs/reliability.md';

export interface ReliabilityRun {
  readonly recordedAt: string;
  readonly machine: {
    readonly cores: number;
    readonly cpu: string;
    readonly memoryGb: number;
    readonly node: string;
    /** One-minute load average at the test's start and at its end. */
    readonly loadAverage: readonly [number, number];
  };
  readonly wallSeconds: number;
  /** The run's report, line by line, as the test printed it. */
  readonly lines: readonly string[];
  /** The counts the page sums up across runs. */
  readonly summary: Readonly<Record<string, number>>;
}

export interface ReliabilityRuns {
  readonly runs: readonly ReliabilityRun[];
}

interface RecordedTest {
  readonly path: string;
  readonly region: string;
  /** What the runs' summaries say together, after the last run's report. */
  readonly across: (runs: readonly ReliabilityRun[]) => string;
  readonly title: string;
}

const list = (values: readonly (number | string)[]) =>
  values.length <= 1 ? values.join('') : `${values.slice(0, -1).join(', ')} and ${values.at(-1)}`;
const across = (runs: readonly ReliabilityRun[]) =>
  runs.length === 1 ? 'In the one recorded run' : `Across the ${runs.length} recorded runs`;
const each = (runs: readonly ReliabilityRun[], name: string) =>
  list(runs.map((run) => run.summary[name] ?? 0));

export const RELIABILITY_RUNS = {
  'dynamodb-faults': {
    path: 'test/reliability/dynamodb-faults.runs.json',
    region: 'reliability-dynamodb-faults-runs',
    title: 'DynamoDB faults, 1000 events',
    across: (runs) =>
      `${across(runs)}: ${each(runs, 'doubles')} doubles, ${each(runs, 'effectedNotDone')} ` +
      `effects without \`done\`, ${each(runs, 'lost')} lost, ${each(runs, 'dlqKeys')} keys in the DLQ; ` +
      `${each(runs, 'timedOutInvocations')} of ${each(runs, 'invocations')} invocations timed out.`,
  },
  'consumer-kills': {
    path: 'test/reliability/consumer-kills.runs.json',
    region: 'reliability-consumer-kills-runs',
    title: 'Consumer SIGKILLed three times, 600 events',
    across: (runs) =>
      `${across(runs)} the kills caught ${each(runs, 'caughtInWindow')} events in the ` +
      `effect→complete window, and ${each(runs, 'doubles')} events were effected twice.`,
  },
  'enqueue-faults': {
    path: 'test/reliability/enqueue-faults.runs.json',
    region: 'reliability-enqueue-faults-runs',
    title:
      'SQS `SendMessageBatch` failing under the receiver, one delivery of 40 events split into queue messages',
    across: (runs) =>
      `${across(runs)}: every fault answered 503 and acknowledged only on Meta's retry, and each event ` +
      `effected once; failed SendMessageBatch calls before the 503, fewest ${each(runs, 'fewestFailedCalls')} ` +
      `and most ${each(runs, 'mostFailedCalls')}; the partial store left ${each(runs, 'partialPartsStored')} ` +
      `parts unacknowledged, ${each(runs, 'partialEventsRunEarly')} events run from them before the retry.`,
  },
  'receiver-fuzz': {
    path: 'test/reliability/receiver-fuzz.runs.json',
    region: 'reliability-receiver-fuzz-runs',
    title: 'Fuzzing, seeded (the mutated-body split as enqueued/quarantined)',
    across: (runs) =>
      `${across(runs)}: ${each(runs, 'requests')} requests, ${each(runs, 'mutatedBodies')} signed mutated bodies ` +
      `(${each(runs, 'mutationsEnqueued')} enqueued, ${each(runs, 'mutationsQuarantined')} quarantined), ` +
      `${each(runs, 'jsonValues')} JSON values and ${each(runs, 'byteStrings')} byte strings, with no failure.`,
  },
} as const satisfies Record<string, RecordedTest>;

export type RecordedTestName = keyof typeof RELIABILITY_RUNS;

/** The machine as the test starts; `finish` completes the run after its assertions. */
export function startRun(): {
  finish: (lines: readonly string[], summary: Record<string, number>) => ReliabilityRun;
} {
  const startedAt = Date.now();
  const loadAtStart = loadavg()[0] as number;
  return {
    finish: (lines, summary) => ({
      recordedAt: new Date().toISOString(),
      machine: {
        cores: availableParallelism(),
        cpu: cpus()[0]?.model.trim() ?? 'unknown',
        memoryGb: Math.round(totalmem() / 2 ** 30),
        node: process.version,
        loadAverage: [round2(loadAtStart), round2(loadavg()[0] as number)],
      },
      wallSeconds: (Date.now() - startedAt) / 1000,
      lines,
      summary,
    }),
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Appends the run to the test's record when RELIABILITY_RECORD=1; call it after the last assertion. */
export function recordRunIfAsked(name: RecordedTestName, run: ReliabilityRun): void {
  if (process.env.RELIABILITY_RECORD !== '1') return;
  const path = new URL(`../../${RELIABILITY_RUNS[name].path}`, import.meta.url);
  let runs: readonly ReliabilityRun[] = [];
  try {
    runs = readReliabilityRuns(path).runs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  writeFileSync(path, `${JSON.stringify({ runs: [...runs, run] }, null, 2)}\n`);
}

export function readReliabilityRuns(path: string | URL): ReliabilityRuns {
  return JSON.parse(readFileSync(path, 'utf8')) as ReliabilityRuns;
}

export function reliabilityRunMarkdown(name: RecordedTestName, { runs }: ReliabilityRuns): string {
  const test = RELIABILITY_RUNS[name];
  const last = runs.at(-1);
  if (last === undefined) return `${test.title}: no recorded run yet.`;
  const loads = runs.flatMap((run) => run.machine.loadAverage);
  const m = last.machine;
  return [
    `${test.title}, the last recorded run (${last.recordedAt.slice(0, 10)}, ${last.wallSeconds.toFixed(0)} s; ` +
      `${m.cores} cores, ${m.cpu}, ${m.memoryGb} GB, Node ${m.node}, load average ` +
      `${m.loadAverage[0].toFixed(1)}–${m.loadAverage[1].toFixed(1)}):`,
    '',
    '```',
    ...last.lines,
    '```',
    '',
    `${test.across(runs)} (\`${test.path}\`, load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}.)`,
  ].join('\n');
}

/** The page's regions, from the committed records (lab/docs/run-regions.ts). */
export function reliabilityRegions(root: URL): Record<string, Record<string, string>> {
  const regions: Record<string, string> = {};
  for (const name of Object.keys(RELIABILITY_RUNS) as RecordedTestName[]) {
    const test = RELIABILITY_RUNS[name];
    regions[test.region] = reliabilityRunMarkdown(name, readReliabilityRuns(new URL(test.path, root)));
  }
  return { [RELIABILITY_PAGE]: regions };
}
