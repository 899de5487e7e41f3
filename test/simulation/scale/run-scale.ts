/**
 * `npm run capacity -- --simulate SCENARIO|all [--short] [--seed N] [--json]` (ops/capacity/run-capacity.ts):
 * runs the scenarios, prints each report and returns whether every verdict held.
 */

import { type ScaleReport, scaleReport, scaleReportMarkdown } from './scale-report.ts';
import { SCENARIO_NAMES, type ScenarioName, scenario } from './scenarios.ts';
import { runScenario } from './simulation.ts';

export const DEFAULT_SEED = 1;

export async function simulateScenarios(
  names: readonly ScenarioName[],
  options: { short: boolean; seed: number },
  print: (report: ScaleReport) => void,
): Promise<ScaleReport[]> {
  const reports: ScaleReport[] = [];
  for (const name of names) {
    const config = scenario(name, options.short);
    const report = scaleReport(name, config, options.short, await runScenario(config, options.seed));
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
