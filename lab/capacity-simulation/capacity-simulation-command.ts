/**
 * `npm run capacity-simulation -- steady|campaign|outage|ten-numbers|campaign-beside-nine|all [--short]
 * [--seed N] [--json] [--record]`: the scenarios of docs/capacity.md on models of AWS driven by the real code, in virtual time.
 * `--record` keeps the reports in lab/capacity-simulation/results.json and regenerates docs/capacity.md's
 * regions. Exit 0 when every verdict holds, 1 when one does not, 2 for bad arguments.
 */
import { parseArgs } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import type { ProgressStream } from '../../cli/tools/progress-bar.ts';
import { capacityRegions } from '../docs/capacity-markdown.ts';
import { writeRegions } from '../docs/generated-regions.ts';
import {
  DEFAULT_SEED,
  fullRunHeapAdvice,
  scaleReportMarkdown,
  scenarioNames,
  simulateScenarios,
} from './run-scale.ts';
import { SCENARIO_NAMES, type ScenarioName } from './scenarios.ts';
import { SIMULATION_RESULTS, writeSimulationResults } from './simulation-markdown.ts';

export const CAPACITY_SIMULATION_USAGE = `usage: npm run capacity-simulation -- ${SCENARIO_NAMES.join('|')}|all [--short] [--seed N] [--json] [--record]

--short    the scenario's short version (what npm test runs)
--seed     the seed of its draws (default ${DEFAULT_SEED})
--json     the reports as JSON instead of markdown
--record   keep the reports in ${SIMULATION_RESULTS} and regenerate docs/capacity.md's regions
Exit 0: every verdict holds; 1: one does not; 2: bad arguments.`;

export interface CapacitySimulationCommand {
  readonly scenarios: readonly ScenarioName[];
  readonly short: boolean;
  readonly seed: number;
  readonly json: boolean;
  readonly record: boolean;
}

export class CapacitySimulationUsageError extends Error {}

/** The command the arguments ask for, `help`, or one `CapacitySimulationUsageError` line. */
export function parseCapacitySimulationArguments(
  argv: readonly string[],
): CapacitySimulationCommand | 'help' {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new CapacitySimulationUsageError((error as Error).message.split('\n')[0] ?? 'bad arguments');
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  const [name, ...extra] = positionals;
  const scenarios = name === undefined ? undefined : scenarioNames(name);
  if (scenarios === undefined || extra.length > 0) {
    throw new CapacitySimulationUsageError(`name one scenario: ${SCENARIO_NAMES.join(', ')} or all.`);
  }
  const seed = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0) {
    throw new CapacitySimulationUsageError(
      `--seed is ${JSON.stringify(values.seed)}: use a whole number >= 0.`,
    );
  }
  return { scenarios, short: values.short, seed, json: values.json, record: values.record };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      short: { type: 'boolean', default: false },
      seed: { type: 'string' },
      json: { type: 'boolean', default: false },
      record: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
}

export interface CapacitySimulationIo {
  readonly stdout: { write(text: string): unknown };
  /** Advice, usage errors, and on a terminal (`isTTY`) each scenario's progress bar. */
  readonly stderr: ProgressStream;
  /** @default this process's V8 heap limit */
  readonly heapLimitBytes?: number;
}

export async function runCapacitySimulation(
  argv: readonly string[],
  io: CapacitySimulationIo,
): Promise<number> {
  let command: CapacitySimulationCommand | 'help';
  try {
    command = parseCapacitySimulationArguments(argv);
  } catch (error) {
    if (!(error instanceof CapacitySimulationUsageError)) throw error;
    io.stderr.write(`${error.message}\n`);
    return 2;
  }
  if (command === 'help') {
    io.stdout.write(`${CAPACITY_SIMULATION_USAGE}\n`);
    return 0;
  }
  const advice = fullRunHeapAdvice(command.short, io.heapLimitBytes ?? getHeapStatistics().heap_size_limit);
  if (advice !== undefined) io.stderr.write(`${advice}\n`);
  const { json } = command;
  const reports = await simulateScenarios(
    command.scenarios,
    { ...command, progress: io.stderr },
    (report) => {
      io.stdout.write(`${json ? JSON.stringify(report, null, 2) : scaleReportMarkdown(report)}\n\n`);
    },
  );
  if (command.record) {
    writeSimulationResults(reports, `npm run capacity-simulation -- ${argv.join(' ')}`);
    writeRegions(capacityRegions());
    io.stdout.write(`${SIMULATION_RESULTS} and docs/capacity.md written\n`);
  }
  return reports.every((report) => report.holds) ? 0 : 1;
}
