/**
 * docs/capacity.md's simulation region (`npm run capacity -- --simulate all --write-docs`): what is modelled,
 * with each model's figure and source, then each scenario's report from the committed results
 * (test/simulation/scale/results.json), the planner's prediction beside the simulation's figure.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { BENCH_FIGURES } from '../../test/simulation/scale/bench-figures.ts';
import { LATENCIES } from '../../test/simulation/scale/latency.ts';
import { RESEND_RATE, RETRY_DELAYS_S } from '../../test/simulation/scale/meta-sender.ts';
import { type ScaleReport, scaleReportMarkdown } from '../../test/simulation/scale/scale-report.ts';
import { SCENARIO_NAMES } from '../../test/simulation/scale/scenarios.ts';
import { markdownTable } from '../../tools/markdown/table.ts';
import { PROJECT_ROOT } from './pipeline.ts';

export const SIMULATION_RESULTS = 'test/simulation/scale/results.json';

export interface SimulationResults {
  readonly command: string;
  readonly reports: readonly ScaleReport[];
}

export function readSimulationResults(): SimulationResults | undefined {
  const path = resolve(PROJECT_ROOT, SIMULATION_RESULTS);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as SimulationResults) : undefined;
}

/** What recorded a file whose reports come from more than one command. */
const EACH_SCENARIO_COMMAND = 'npm run capacity -- --simulate SCENARIO [--short] --write-docs, each scenario';

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
        'bench/results.json receiver.bodies',
      ],
      [
        'consumer CPU per record',
        `${BENCH_FIGURES.consumerCpuMsPerEvent} ms`,
        'bench/results.json consumer.ours.nodeCpuMsPerEvent',
      ],
      [
        "Meta's retry delays after a failure (assumed)",
        `${RETRY_DELAYS_S.join(', ')} s, then hourly, ± 20 %`,
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
          'Recorded by `npm run capacity -- --simulate SCENARIO --write-docs`, with `--short` where a report says so.',
          '',
          ...results.reports.flatMap((report) => [scaleReportMarkdown(report), '']),
        ];
  return [modelledMarkdown(), '', ...runs].join('\n').trimEnd();
}
