/**
 * `npm run capacity -- --messages-per-second N [--inbound-per-second M] [--numbers K]
 * [--handler-ms S | --handler-ms message=S,status=S] [--subscribers N | --subscribers MODULE] [--json]`
 * (or `--write-docs` alone), or `--simulate SCENARIO|all [--short] [--seed N] [--json]` (the scale simulation of
 * test/simulation/scale/). Exit 0 when every limit carries the peak (every verdict holds), 1 when one does not,
 * 2 for bad arguments.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import type { ExpectedPeak } from '../../contract/capacity.ts';
import { LANES, type LaneName } from '../../contract/lanes.ts';
import { UnsafeSettingsError } from '../../contract/settings.ts';
import {
  DEFAULT_SEED,
  fullRunHeapAdvice,
  scaleReportMarkdown,
  scenarioNames,
  simulateScenarios,
} from '../../test/simulation/scale/run-scale.ts';
import { SCENARIO_NAMES, type ScenarioName } from '../../test/simulation/scale/scenarios.ts';
import { UsageError } from '../errors.ts';
import { CAPACITY_PAGE, writeCapacityPage } from './capacity-markdown.ts';
import { defaultPipeline, type PlannedPipeline, PROJECT_ROOT, pipelineFromModule } from './pipeline.ts';
import { capacityReport, reportJson, reportMarkdown } from './report.ts';
import { SIMULATION_RESULTS, writeSimulationResults } from './simulation-markdown.ts';

export const CAPACITY_USAGE = `usage: npm run capacity -- --messages-per-second N [--inbound-per-second M] [--numbers K]
  [--handler-ms S | --handler-ms message=S,status=S] [--subscribers N | --subscribers MODULE] [--json]
  npm run capacity -- --write-docs   (regenerates ${CAPACITY_PAGE})
  npm run capacity -- --simulate steady|campaign|outage|ten-numbers|all [--short] [--seed N] [--json] [--write-docs]

--messages-per-second  outbound messages/s per number (each brings 3 status webhooks)
--inbound-per-second   inbound messages/s per number (default: the outbound rate)
--numbers              business phone numbers at that rate (default 1)
--handler-ms           a handler's milliseconds per record, for both lanes or per lane
--subscribers          N copies of the default subscriber, or a module exporting subscribers (like bin/subscribers.ts)
--receiver-ms, --claim-ms, --conversations   the receiver's duration, one claim-table write, active conversations
--simulate             runs a scenario on the scale simulation (models of AWS driven by the real code, virtual time)
--short, --seed        the scenario's short version (what npm test runs); the seed of its draws (default 1)
Exit 0: every limit carries the peak (every verdict holds); 1: a setting, quota or verdict does not; 2: bad arguments.`;

const OPTIONS = {
  'messages-per-second': { type: 'string' },
  'inbound-per-second': { type: 'string' },
  numbers: { type: 'string' },
  'handler-ms': { type: 'string' },
  subscribers: { type: 'string' },
  'receiver-ms': { type: 'string' },
  'claim-ms': { type: 'string' },
  conversations: { type: 'string' },
  json: { type: 'boolean', default: false },
  'write-docs': { type: 'boolean', default: false },
  simulate: { type: 'string' },
  short: { type: 'boolean', default: false },
  seed: { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

export type CapacityCommand =
  | { readonly kind: 'help' }
  | { readonly kind: 'write-docs' }
  | {
      readonly kind: 'simulate';
      readonly scenarios: readonly ScenarioName[];
      readonly short: boolean;
      readonly seed: number;
      readonly json: boolean;
      /** Records the reports (SIMULATION_RESULTS) and regenerates the page. */
      readonly writeDocs: boolean;
    }
  | {
      readonly kind: 'plan';
      readonly peak: ExpectedPeak;
      readonly subscribers: { readonly copies: number } | { readonly module: string };
      readonly handlerMs: Partial<Record<LaneName, number>>;
      readonly receiverMs?: number;
      readonly claimWriteMs?: number;
      readonly json: boolean;
    };

function number(name: string, raw: string | undefined, rule: 'positive' | 'whole'): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  const ok =
    raw.trim() !== '' &&
    Number.isFinite(value) &&
    (rule === 'whole' ? Number.isInteger(value) && value >= 1 : value >= 0);
  if (!ok) {
    throw new UsageError(
      `--${name} is ${JSON.stringify(raw)}: use ${rule === 'whole' ? 'a whole number >= 1' : 'a number >= 0'}.`,
    );
  }
  return value;
}

function handlerMs(raw: string | undefined): Partial<Record<LaneName, number>> {
  if (raw === undefined) return {};
  if (!raw.includes('=')) {
    const both = number('handler-ms', raw, 'positive') as number;
    return { message: both, status: both };
  }
  const result: Partial<Record<LaneName, number>> = {};
  for (const part of raw.split(',')) {
    const [lane, value, ...rest] = part.split('=');
    if (!LANES.includes(lane as LaneName) || value === undefined || rest.length > 0) {
      throw new UsageError(
        `--handler-ms ${JSON.stringify(raw)}: use milliseconds, or message=S,status=S (lanes: ${LANES.join(', ')}).`,
      );
    }
    result[lane as LaneName] = number('handler-ms', value, 'positive');
  }
  return result;
}

/** The command the arguments ask for; every mistake is one `UsageError` line. */
export function parseCapacityArguments(argv: readonly string[]): CapacityCommand {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'bad arguments');
  }
  if (values.help) return { kind: 'help' };
  if (values.simulate !== undefined) {
    const scenarios = scenarioNames(values.simulate);
    if (scenarios === undefined) {
      throw new UsageError(
        `--simulate ${JSON.stringify(values.simulate)}: use ${SCENARIO_NAMES.join(', ')} or all.`,
      );
    }
    const planning = Object.keys(OPTIONS).filter(
      (key) =>
        !['simulate', 'short', 'seed', 'json', 'help', 'write-docs'].includes(key) &&
        values[key as keyof typeof values] !== undefined,
    );
    if (planning.length > 0) {
      throw new UsageError(
        `--simulate runs the defaults and takes only --short, --seed, --json and --write-docs.`,
      );
    }
    return {
      kind: 'simulate',
      scenarios,
      short: values.short ?? false,
      seed: number('seed', values.seed, 'positive') ?? DEFAULT_SEED,
      json: values.json ?? false,
      writeDocs: values['write-docs'] ?? false,
    };
  }
  if (values.short || values.seed !== undefined)
    throw new UsageError('--short and --seed go with --simulate.');
  if (values['write-docs']) {
    const others = Object.keys(values).filter(
      (key) =>
        !['write-docs', 'json', 'help', 'short'].includes(key) &&
        values[key as keyof typeof values] !== undefined,
    );
    if (others.length > 0 || values.json || values.short) {
      throw new UsageError(`--write-docs writes the defaults' page and takes no other option.`);
    }
    return { kind: 'write-docs' };
  }
  const messagesPerSecond = number('messages-per-second', values['messages-per-second'], 'positive');
  if (messagesPerSecond === undefined) throw new UsageError('--messages-per-second N is required.');
  const inbound = number('inbound-per-second', values['inbound-per-second'], 'positive');
  const numbers = number('numbers', values.numbers, 'whole');
  const conversations = number('conversations', values.conversations, 'whole');
  const raw = values.subscribers;
  let subscribers: { copies: number } | { module: string } = { copies: 1 };
  if (raw !== undefined) {
    if (/^\d+$/.test(raw)) {
      subscribers = { copies: number('subscribers', raw, 'whole') as number };
    } else if (existsSync(resolve(PROJECT_ROOT, raw))) {
      subscribers = { module: raw };
    } else {
      throw new UsageError(
        `--subscribers ${JSON.stringify(raw)}: neither a count nor a module path that exists.`,
      );
    }
  }
  const receiverMs = number('receiver-ms', values['receiver-ms'], 'positive');
  const claimWriteMs = number('claim-ms', values['claim-ms'], 'positive');
  return {
    kind: 'plan',
    peak: {
      messagesPerSecond,
      ...(inbound === undefined ? {} : { inboundPerSecond: inbound }),
      ...(numbers === undefined ? {} : { numbers }),
      ...(conversations === undefined ? {} : { activeConversations: conversations }),
    },
    subscribers,
    handlerMs: handlerMs(values['handler-ms']),
    ...(receiverMs === undefined ? {} : { receiverMs }),
    ...(claimWriteMs === undefined ? {} : { claimWriteMs }),
    json: values.json ?? false,
  };
}

export interface CapacityIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  /** @default this process's V8 heap limit */
  readonly heapLimitBytes?: number;
}

/** Runs the command; resolves to its exit code. */
export async function runCapacity(argv: readonly string[], io: CapacityIo): Promise<number> {
  try {
    const command = parseCapacityArguments(argv);
    if (command.kind === 'help') {
      io.stdout.write(`${CAPACITY_USAGE}\n`);
      return 0;
    }
    if (command.kind === 'simulate') {
      const advice = fullRunHeapAdvice(
        command.short,
        io.heapLimitBytes ?? getHeapStatistics().heap_size_limit,
      );
      if (advice !== undefined) io.stderr.write(`${advice}\n`);
      const reports = await simulateScenarios(command.scenarios, command, (report) => {
        io.stdout.write(
          `${command.json ? JSON.stringify(report, null, 2) : scaleReportMarkdown(report)}\n\n`,
        );
      });
      if (command.writeDocs) {
        writeSimulationResults(reports, `npm run capacity -- ${argv.join(' ')}`);
        writeCapacityPage();
        io.stdout.write(`${SIMULATION_RESULTS} and ${CAPACITY_PAGE} written\n`);
      }
      return reports.every((report) => report.holds) ? 0 : 1;
    }
    if (command.kind === 'write-docs') {
      writeCapacityPage();
      io.stdout.write(`${CAPACITY_PAGE}: the limits and the three shapes written\n`);
      return 0;
    }
    let pipeline: PlannedPipeline =
      'copies' in command.subscribers
        ? defaultPipeline(command.subscribers.copies)
        : await pipelineFromModule(command.subscribers.module);
    pipeline = {
      ...pipeline,
      handlerMs: command.handlerMs,
      ...(command.receiverMs === undefined ? {} : { receiverMs: command.receiverMs }),
      ...(command.claimWriteMs === undefined ? {} : { claimWriteMs: command.claimWriteMs }),
    };
    const report = capacityReport(command.peak, pipeline);
    io.stdout.write(`${command.json ? reportJson(report) : reportMarkdown(report)}\n`);
    return report.carries ? 0 : 1;
  } catch (error) {
    if (error instanceof UsageError || error instanceof UnsafeSettingsError || error instanceof RangeError) {
      io.stderr.write(`${error.message}\n`);
      return 2;
    }
    if (error instanceof TypeError && /exports no/.test(error.message)) {
      io.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
