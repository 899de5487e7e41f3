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
 * The Node heap a full run needs, with room (`--max-old-space-size`). A run keeps the events in flight, not the
 * events sent (event-book.ts), so its heap stops growing once the queues' windows have filled (the FIFO
 * deduplication's 5 minutes, the visibility timeout's 3): the full steady run then stays well within it, and
 * Node's default heap on a 64-bit machine with 16 GB of memory or more (4 GB) is above it. A smaller default
 * heap, or a smaller --max-old-space-size, gets the advice below.
 */
export const FULL_RUN_HEAP_MB = 2_048;

/** What to tell someone starting a full run on a heap smaller than it needs, before it runs for most of an hour. */
export function fullRunHeapAdvice(short: boolean, heapLimitBytes: number): string | undefined {
  const heapMb = Math.floor(heapLimitBytes / 2 ** 20);
  if (short || heapMb >= FULL_RUN_HEAP_MB) return undefined;
  return (
    `This Node's heap is ${heapMb} MB; a full run needs up to ${FULL_RUN_HEAP_MB} MB (it keeps the events in flight, ` +
    `not every event sent). If it runs out, run it as NODE_OPTIONS=--max-old-space-size=${FULL_RUN_HEAP_MB} ` +
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
