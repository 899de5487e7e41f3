/**
 * `npm run capacity-simulation -- SCENARIO|all [--short] [--seed N] [--json]` (./capacity-simulation-command.ts):
 * runs the scenarios, prints each report and returns whether every verdict held.
 */

import { type ProgressStream, progressBar } from '../../cli/tools/progress-bar.ts';
import { type ScaleReport, scaleReport, scaleReportMarkdown } from './scale-report.ts';
import { SCENARIO_NAMES, type ScenarioName, scenario } from './scenarios.ts';
import { runScenario } from './simulation.ts';

export const DEFAULT_SEED = 1;

/**
 * The Node heap the recorded full runs had (`--max-old-space-size`): a full run holds every key it sent, and the
 * steady and outage ones outgrow Node's default heap, which fails only after most of an hour.
 */
export const FULL_RUN_HEAP_MB = 12_000;

/** What to tell someone starting a full run on a smaller heap, before it runs for an hour; short runs fit. */
export function fullRunHeapAdvice(short: boolean, heapLimitBytes: number): string | undefined {
  const heapMb = Math.floor(heapLimitBytes / 2 ** 20);
  if (short || heapMb >= FULL_RUN_HEAP_MB) return undefined;
  return (
    `This Node's heap is ${heapMb} MB; the recorded full runs had ${FULL_RUN_HEAP_MB} MB, and the steady and outage ` +
    `ones need more than the default. If it runs out, run it as NODE_OPTIONS=--max-old-space-size=${FULL_RUN_HEAP_MB} ` +
    'npm run capacity-simulation -- … (or add --short).'
  );
}

/**
 * Runs each scenario, with a progress bar of its virtual time on `progress` when that is a terminal: up to its
 * traffic and drain limit, which a run that drains sooner stops short of.
 */
export async function simulateScenarios(
  names: readonly ScenarioName[],
  options: { short: boolean; seed: number; progress?: ProgressStream },
  print: (report: ScaleReport) => void,
): Promise<ScaleReport[]> {
  const reports: ScaleReport[] = [];
  for (const name of names) {
    const config = scenario(name, options.short);
    const trafficSeconds = config.trafficMs / 1000;
    const bar = progressBar({
      label: name,
      total: trafficSeconds + config.drainLimitMs / 1000,
      formatValue: (seconds) => `${Math.floor(seconds)} s`,
      ...(options.progress === undefined ? {} : { stream: options.progress }),
    });
    const measures = await runScenario(config, options.seed, (virtualMs, backlog) =>
      bar.update(
        virtualMs / 1000,
        `${virtualMs / 1000 < trafficSeconds ? 'traffic' : 'draining'}, backlog ${backlog}`,
      ),
    ).finally(() => bar.stop());
    const report = scaleReport(name, config, options.short, measures);
    print(report);
    reports.push(report);
  }
  return reports;
}

export function scenarioNames(raw: string): ScenarioName[] | undefined {
  if (raw === 'all') return [...SCENARIO_NAMES];
  return (SCENARIO_NAMES as readonly string[]).includes(raw) ? [raw as ScenarioName] : undefined;
}

export { scaleReportMarkdown };
