/**
 * docs/capacity.md's simulation region (`npm run capacity-simulation -- all --record`): what is modelled,
 * with each model's figure and source, then each scenario's report from the committed results
 * (lab/capacity-simulation/results.json), the planner's prediction beside the simulation's figure.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PROJECT_ROOT } from '../../cli/capacity/pipeline.ts';
import { META_RETRIES } from '../../cli/meta-traffic/retries.ts';
import { markdownTable } from '../../cli/tools/markdown-table.ts';
import { BENCH_FIGURES } from './bench-figures.ts';
import { LATENCIES } from './latency.ts';
import { RESEND_RATE } from './meta-sender.ts';
import { type ScaleReport, scaleReportMarkdown } from './scale-report.ts';
import { AWAITING_FULL_RUN, SCENARIO_NAMES } from './scenarios.ts';

export const SIMULATION_RESULTS = 'lab/capacity-simulation/results.json';

export interface SimulationResults {
  readonly command: string;
  readonly reports: readonly ScaleReport[];
}

export function readSimulationResults(): SimulationResults | undefined {
  const path = resolve(PROJECT_ROOT, SIMULATION_RESULTS);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as SimulationResults) : undefined;
}

/** What recorded a file whose reports come from more than one command. */
const EACH_SCENARIO_COMMAND = 'npm run capacity-simulation -- SCENARIO [--short] --record, each scenario';

/** Keeps the other scenarios' reports and replaces those run now. */
export function writeSimulationResults(reports: readonly ScaleReport[], command: string): void {
  const kept = (readSimulationResults()?.reports ?? []).filter(
    (old) => !reports.some((report) => report.scenario === old.scenario),
  );
  const all = [...kept, ...reports].sort(
    (a, b) => SCENARIO_NAMES.indexOf(a.scenario) - SCENARIO_NAMES.indexOf(b.scenario),
  );
  writeFileSync(
    resolve(PROJECT_ROOT, SIMULATION_RESULTS),
    `${JSON.stringify({ command: kept.length === 0 ? command : EACH_SCENARIO_COMMAND, reports: all }, null, 2)}\n`,
  );
}

function modelledMarkdown(): string {
  const rows = Object.entries(LATENCIES).map(([name, figure]) => [
    `latency: ${name}`,
    `log-normal, median ${figure.p50Ms} ms, p99 ${figure.p99Ms} ms`,
    figure.source,
  ]);
  return markdownTable(
    ['modelled', 'figure', 'source'],
    [
      ...rows,
      [
        'receiver CPU per POST (one update)',
        `${BENCH_FIGURES.receiverCpuMsPerPost} ms`,
        'lab/bench/results.json receiver.bodies',
      ],
      [
        'consumer CPU per record',
        `${BENCH_FIGURES.consumerCpuMsPerEvent} ms`,
        'lab/bench/results.json consumer.ours.nodeCpuMsPerEvent',
      ],
      [
        "Meta's retry delays after a failure (assumed)",
        `${META_RETRIES.delaysMs.map((ms) => ms / 1000).join(', ')} s, then hourly, ± ${META_RETRIES.jitter * 100} %`,
        'https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks',
      ],
      [
        "Meta's re-sends of accepted updates (assumed)",
        `${RESEND_RATE * 100} %`,
        'https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks',
      ],
    ],
  );
}

export function simulationMarkdown(): string {
  const results = readSimulationResults();
  const runs =
    results === undefined || results.reports.length === 0
      ? ['No scenario has been recorded yet.']
      : [
          'Recorded by `npm run capacity-simulation -- SCENARIO --record`, with `--short` where a report says so.',
          '',
          ...results.reports.flatMap((report) => [scaleReportMarkdown(report), '']),
          ...Object.entries(AWAITING_FULL_RUN).map(
            ([name, why]) =>
              `Not recorded yet: the full run of \`${name}\` (${why}); its short run is in \`npm test\`.`,
          ),
        ];
  return [modelledMarkdown(), '', ...runs].join('\n').trimEnd();
}
