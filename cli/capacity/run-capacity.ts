/**
 * `npm run capacity -- --messages-per-second N [--inbound-per-second M] [--numbers K]
 * [--handler-ms S | --handler-ms message=S,status=S] [--subscribers N | --subscribers MODULE]
 * [--endpoint http-api|function-url] [--json | --markdown]`:
 * the capacity planner, as text for a terminal unless asked for JSON or markdown. Exit 0 when every limit carries the peak, 1 when one does not, 2 for bad arguments.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  DEFAULT_WEBHOOK_ENDPOINT,
  type ExpectedPeak,
  WEBHOOK_ENDPOINTS,
  type WebhookEndpoint,
} from 'whatsapp-webhook-dedup/contract/capacity';
import { LANES, type LaneName } from 'whatsapp-webhook-dedup/contract/lanes';
import { UnsafeSettingsError } from 'whatsapp-webhook-dedup/contract/settings';
import { UsageError } from '../ops/errors.ts';
import { defaultPipeline, type PlannedPipeline, PROJECT_ROOT, pipelineFromModule } from './pipeline.ts';
import { capacityReport, reportJson, reportMarkdown } from './report.ts';
import { reportText } from './report-text.ts';

export const CAPACITY_USAGE = `usage: npm run capacity -- --messages-per-second N [--inbound-per-second M] [--numbers K]
  [--handler-ms S | --handler-ms message=S,status=S] [--subscribers N | --subscribers MODULE]
  [--endpoint http-api|function-url] [--json | --markdown]

--messages-per-second  outbound messages/s per number (each brings 3 status webhooks)
--inbound-per-second   inbound messages/s per number (default: the outbound rate)
--numbers              business phone numbers at that rate (default 1)
--handler-ms           a handler's milliseconds per record, for both lanes or per lane
--subscribers          N copies of the default subscriber, or a module exporting subscribers (like bin/subscribers.ts)
--endpoint             the front door: http-api (default; the route throttles) or function-url (the receiver's
                       reserved concurrency throttles)
--receiver-ms, --claim-ms, --conversations   the receiver's duration, one claim-table write, active conversations
--json, --markdown     the report as JSON, or as the markdown docs/capacity.md holds (default: text for a terminal)
Exit 0: every limit carries the peak; 1: a setting or quota does not; 2: bad arguments.`;

const OPTIONS = {
  'messages-per-second': { type: 'string' },
  'inbound-per-second': { type: 'string' },
  numbers: { type: 'string' },
  'handler-ms': { type: 'string' },
  subscribers: { type: 'string' },
  endpoint: { type: 'string' },
  'receiver-ms': { type: 'string' },
  'claim-ms': { type: 'string' },
  conversations: { type: 'string' },
  json: { type: 'boolean', default: false },
  markdown: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const;

export type CapacityCommand =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'plan';
      readonly peak: ExpectedPeak;
      readonly subscribers: { readonly copies: number } | { readonly module: string };
      readonly endpoint: WebhookEndpoint;
      readonly handlerMs: Partial<Record<LaneName, number>>;
      readonly receiverMs?: number;
      readonly claimWriteMs?: number;
      readonly format: 'text' | 'json' | 'markdown';
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

function endpoint(raw: string | undefined): WebhookEndpoint {
  if (raw === undefined) return DEFAULT_WEBHOOK_ENDPOINT;
  if (!(WEBHOOK_ENDPOINTS as readonly string[]).includes(raw)) {
    throw new UsageError(`--endpoint ${JSON.stringify(raw)}: use ${WEBHOOK_ENDPOINTS.join(' or ')}.`);
  }
  return raw as WebhookEndpoint;
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
      inboundPerSecond: inbound,
      numbers,
      activeConversations: conversations,
    },
    subscribers,
    endpoint: endpoint(values.endpoint),
    handlerMs: handlerMs(values['handler-ms']),
    receiverMs,
    claimWriteMs,
    format: values.json ? 'json' : values.markdown ? 'markdown' : 'text',
  };
}

export interface CapacityIo {
  /** Colour only on a terminal (`isTTY`), and never with NO_COLOR set. */
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean };
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
    let pipeline: PlannedPipeline =
      'copies' in command.subscribers
        ? defaultPipeline(command.subscribers.copies, command.endpoint)
        : await pipelineFromModule(command.subscribers.module, command.endpoint);
    pipeline = {
      ...pipeline,
      handlerMs: command.handlerMs,
      ...(command.receiverMs === undefined ? {} : { receiverMs: command.receiverMs }),
      ...(command.claimWriteMs === undefined ? {} : { claimWriteMs: command.claimWriteMs }),
    };
    const report = capacityReport(command.peak, pipeline);
    const colour = io.stdout.isTTY === true && !process.env.NO_COLOR;
    const rendered = {
      json: () => reportJson(report),
      markdown: () => reportMarkdown(report),
      text: () => reportText(report, { colour }),
    }[command.format]();
    io.stdout.write(`${rendered}\n`);
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
