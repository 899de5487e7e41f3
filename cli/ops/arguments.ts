/**
 * `npm run ops -- …` arguments: which stack, which subscriber, which command. Every mistake becomes one
 * `UsageError` line (exit 2) before anything is read or changed, and before the target is reached: a bad
 * range or body file is named as such even when no stack answers. Only what needs the target (a subscriber's
 * name or fields, the archive's retention, a quarantined body's id) is checked by the command.
 */
import { parseArgs } from 'node:util';
import { isLaneName, LANES, type LaneName } from 'whatsapp-webhook-dedup/contract/lanes';
import { BodyFileError, extractEventsOfFile } from '../keys/keys.ts';
import { DEFAULT_PORT } from '../local/local-stack-api.ts';
import { UsageError } from './errors.ts';
import { type EventKeyShape, eventKeyShape, eventShapeOf } from './inspect/event-key-shape.ts';
import { type MetaOptions, metaOptions } from './meta/meta-arguments.ts';
import { attachRelativeTimes, type ReplayArguments, replayOptions } from './replay/replay-arguments.ts';
import { type SmokeOptions, smokeOptions } from './smoke/smoke-arguments.ts';

/** How this repository's script runs it; the bin passes its own (`whatsapp-webhook-dedup ops`). */
export const OPS_PROGRAM = 'npm run ops --';

/** The help, its usage line naming `program`, the way ops was invoked. */
export function opsUsage(program: string = OPS_PROGRAM): string {
  return `usage: ${program} [--local URL | --stack NAME] [--subscriber NAME] [--json] COMMAND
${OPS_HELP}`;
}

const OPS_HELP = `
Target: the local stack (default; --local URL, default http://localhost:$PORT or :${DEFAULT_PORT}), or a deployed
stack (--stack NAME, with the standard AWS credentials and region).
--subscriber NAME picks the subscriber (needed when the stack has several, for key, keys, forget, pause,
resume and dlq). --lane message|status picks one of its lanes for pause, resume and dlq (default: both).
--json prints JSON instead of text. Progress of long operations goes to stderr.

Commands:
  key EVENT_KEY                 the claim of one event (and, for st: keys, the status ledger)
  keys BODY.json                the same for every event of a webhook body (or --file BODY.json)
  forget EVENT_KEY --yes        delete a done claim, so that the next delivery runs the effect again
                                (a claim in flight only with --force)
  pause | resume                stop / restart the subscriber's lane consumers (event source mappings)
  dlq stats                     message counts of each lane's DLQ and queue
  dlq peek [-n N]               the N newest DLQ records (default 10) with lane, receives, age, event claims
  dlq redrive [--max N]         move failed records back to their lane's queue (all, or at most N)
  quarantine list               the quarantined bodies: id, reason, size, events
  quarantine show ID            one quarantined body, decoded (chunks reassembled)
  quarantine requeue ID|--all   send quarantined bodies through the receiver again (after a fix)
  meta subscribe --app-id ID [--waba ID …] [--fields F,…] [--override] [--token-secret NAME]
                                subscribe the Meta app (and WABAs) to the stack's webhook (--stack only)
  meta status --app-id ID [--waba ID …] [--token-secret NAME]
                                what Meta's subscriptions say against the stack (--stack only)
  smoke [--timeout SECONDS]     send a signed test body, wait until every subscriber is done, show alarms
  replay --since T [--until T] [--fields F,…] [--dry-run] [--rerun --yes] [--rate N/s] [--restart] [--max N]
                                send the archived deliveries of [since, until) to the subscriber's queues again
                                (T: ISO-8601, a date, now, -30m, -12h, -3d; done keys are skipped as duplicates,
                                --rerun forgets them first; continues from its cursor after an interruption)`;

export const OPS_USAGE = opsUsage();

export const DEFAULT_PEEK_LIMIT = 10;

export type TargetChoice =
  | { readonly kind: 'local'; readonly url: string }
  | { readonly kind: 'stack'; readonly stackName: string };

export type OpsCommand =
  | { readonly name: 'key'; readonly key: string }
  | { readonly name: 'keys'; readonly file: string; readonly events: readonly EventKeyShape[] }
  | { readonly name: 'forget'; readonly key: string; readonly force: boolean }
  | { readonly name: 'pause'; readonly lane: LaneName | undefined }
  | { readonly name: 'resume'; readonly lane: LaneName | undefined }
  | { readonly name: 'dlq-stats'; readonly lane: LaneName | undefined }
  | { readonly name: 'dlq-peek'; readonly lane: LaneName | undefined; readonly limit: number }
  | { readonly name: 'dlq-redrive'; readonly lane: LaneName | undefined; readonly max: number | undefined }
  | { readonly name: 'quarantine-list' }
  | { readonly name: 'quarantine-show'; readonly id: string }
  | { readonly name: 'quarantine-requeue'; readonly id: string | undefined }
  | ({ readonly name: 'meta-subscribe' | 'meta-status' } & MetaOptions)
  | ({ readonly name: 'smoke'; readonly target: TargetChoice } & SmokeOptions)
  | ({ readonly name: 'replay' } & ReplayArguments);

export interface OpsRequest {
  readonly target: TargetChoice;
  readonly subscriber: string | undefined;
  readonly json: boolean;
  readonly command: OpsCommand;
}

export type ParsedArguments = { readonly help: true } | ({ readonly help: false } & OpsRequest);

/** The options a command accepts beyond the global ones. */
const COMMAND_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  key: [],
  keys: ['file'],
  forget: ['yes', 'force'],
  pause: ['lane'],
  resume: ['lane'],
  'dlq stats': ['lane'],
  'dlq peek': ['lane', 'limit'],
  'dlq redrive': ['lane', 'max'],
  'quarantine list': [],
  'quarantine show': [],
  'quarantine requeue': ['all'],
  'meta subscribe': ['app-id', 'waba', 'fields', 'override', 'token-secret', 'graph-version'],
  'meta status': ['app-id', 'waba', 'token-secret', 'graph-version'],
  smoke: ['timeout'],
  replay: ['since', 'until', 'fields', 'dry-run', 'rerun', 'yes', 'rate', 'restart', 'max'],
};
const GROUPS: Readonly<Record<string, readonly string[]>> = {
  dlq: ['stats', 'peek', 'redrive'],
  quarantine: ['list', 'show', 'requeue'],
  meta: ['subscribe', 'status'],
};
const GLOBAL_OPTIONS = ['local', 'stack', 'subscriber', 'json', 'help'];
const SPELLING: Readonly<Record<string, string>> = { limit: '-n' };

/** `program`: how ops was invoked, for the hints to its help. */
export function parseOpsArguments(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  program: string = OPS_PROGRAM,
): ParsedArguments {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(attachRelativeTimes(args));
  } catch (error) {
    // node:util's messages are one sentence each, e.g. "Unknown option '--foo'".
    throw new UsageError(`${firstLine(error)} (${program} --help)`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  const [first, ...rest] = positionals;
  if (first === undefined) throw new UsageError(`no command given (${program} --help lists them)`);
  let name = first;
  let operands = rest;
  if (first in GROUPS) {
    const [sub, ...more] = rest;
    const choices = GROUPS[first] as readonly string[];
    if (sub === undefined || !choices.includes(sub)) {
      throw new UsageError(
        `${first} needs one of ${choices.join(', ')}${sub === undefined ? '' : `, not "${sub}"`}`,
      );
    }
    name = `${first} ${sub}`;
    operands = more;
  }
  const allowed = COMMAND_OPTIONS[name];
  if (allowed === undefined) {
    throw new UsageError(
      `unknown command "${first}" (commands: key, keys, forget, pause, resume, dlq, quarantine, meta, smoke, replay)`,
    );
  }
  for (const option of Object.keys(values)) {
    if (!GLOBAL_OPTIONS.includes(option) && !allowed.includes(option)) {
      throw new UsageError(`${name} takes no ${SPELLING[option] ?? `--${option}`} option`);
    }
  }
  if (values.local !== undefined && values.stack !== undefined) {
    throw new UsageError('give --local URL or --stack NAME, not both');
  }
  const target: TargetChoice =
    values.stack !== undefined
      ? { kind: 'stack', stackName: nonEmpty('--stack', values.stack) }
      : { kind: 'local', url: localUrl(values.local, env) };
  return {
    help: false,
    target,
    subscriber: values.subscriber === undefined ? undefined : nonEmpty('--subscriber', values.subscriber),
    json: values.json === true,
    command: command(name, operands, values, target, env),
  };
}

function parse(args: readonly string[]) {
  return parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      local: { type: 'string' },
      stack: { type: 'string' },
      subscriber: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      file: { type: 'string' },
      yes: { type: 'boolean' },
      force: { type: 'boolean' },
      limit: { type: 'string', short: 'n' },
      max: { type: 'string' },
      lane: { type: 'string' },
      all: { type: 'boolean' },
      'app-id': { type: 'string' },
      waba: { type: 'string', multiple: true },
      fields: { type: 'string' },
      override: { type: 'boolean' },
      'token-secret': { type: 'string' },
      'graph-version': { type: 'string' },
      timeout: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      'dry-run': { type: 'boolean' },
      rerun: { type: 'boolean' },
      rate: { type: 'string' },
      restart: { type: 'boolean' },
    },
  });
}

type Values = ReturnType<typeof parse>['values'];

function command(
  name: string,
  operands: readonly string[],
  values: Values,
  target: TargetChoice,
  env: NodeJS.ProcessEnv,
): OpsCommand {
  const expect = (count: number, what: string) => {
    if (operands.length !== count) {
      throw new UsageError(
        count === 0
          ? `${name} takes no operand, got "${operands.join(' ')}"`
          : operands.length === 0
            ? `${name} needs ${what}`
            : `${name} takes one ${what}, got ${operands.length} operands`,
      );
    }
  };
  switch (name) {
    case 'key':
      expect(1, 'EVENT_KEY');
      return { name, key: eventKeyShape(operands[0] as string).key };
    case 'keys': {
      // The body as an operand, as `npm run keys -- FILE` takes it, or as --file.
      if (operands.length > 1 || (operands.length === 1 && values.file !== undefined)) {
        throw new UsageError('keys takes one BODY.json, as an operand or as --file');
      }
      const given = operands[0] ?? values.file;
      if (given === undefined) throw new UsageError('keys needs BODY.json (or --file BODY.json)');
      const file = nonEmpty('BODY.json', given);
      return { name, file, events: bodyFileEvents(file) };
    }
    case 'forget':
      expect(1, 'EVENT_KEY');
      if (values.yes !== true) {
        throw new UsageError(
          'forget deletes a claim, so that the next delivery of the event runs its effect again: add --yes to confirm',
        );
      }
      return { name, key: eventKeyShape(operands[0] as string).key, force: values.force === true };
    case 'pause':
    case 'resume':
      expect(0, '');
      return { name, lane: lane(values.lane) };
    case 'dlq stats':
      expect(0, '');
      return { name: 'dlq-stats', lane: lane(values.lane) };
    case 'dlq peek':
      expect(0, '');
      return {
        name: 'dlq-peek',
        lane: lane(values.lane),
        limit: values.limit === undefined ? DEFAULT_PEEK_LIMIT : positiveInteger('-n', values.limit),
      };
    case 'dlq redrive':
      expect(0, '');
      return {
        name: 'dlq-redrive',
        lane: lane(values.lane),
        max: values.max === undefined ? undefined : positiveInteger('--max', values.max),
      };
    case 'quarantine list':
      expect(0, '');
      return { name: 'quarantine-list' };
    case 'quarantine show':
      expect(1, 'ID');
      return { name: 'quarantine-show', id: operands[0] as string };
    case 'meta subscribe':
    case 'meta status':
      expect(0, '');
      return {
        name: name === 'meta subscribe' ? 'meta-subscribe' : 'meta-status',
        ...metaOptions(values, target.kind === 'stack' ? target.stackName : undefined, env),
      };
    case 'replay':
      expect(0, '');
      return { name: 'replay', ...replayOptions(values) };
    case 'smoke':
      expect(0, '');
      return { name: 'smoke', target, ...smokeOptions(values) };
    default: {
      // quarantine requeue
      if (values.all === true) {
        if (operands.length > 0) throw new UsageError('quarantine requeue takes an ID or --all, not both');
        return { name: 'quarantine-requeue', id: undefined };
      }
      if (operands.length !== 1) throw new UsageError('quarantine requeue needs one ID, or --all');
      return { name: 'quarantine-requeue', id: operands[0] as string };
    }
  }
}

/** The events of a webhook body file, as key shapes; a file that cannot be read or holds none is a usage error. */
function bodyFileEvents(file: string): EventKeyShape[] {
  let extraction: ReturnType<typeof extractEventsOfFile>;
  try {
    extraction = extractEventsOfFile(file);
  } catch (error) {
    if (error instanceof BodyFileError) throw new UsageError(error.message);
    throw error;
  }
  if (!extraction.ok) {
    throw new UsageError(`${file} holds no events: ${extraction.reason} (${extraction.detail})`);
  }
  return extraction.events.map(eventShapeOf);
}

/** `--local URL`, else the port `npm start` listens on. */
function localUrl(given: string | undefined, env: NodeJS.ProcessEnv): string {
  const raw = given ?? `http://localhost:${env.PORT || DEFAULT_PORT}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--local needs a URL such as http://localhost:3000, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--local needs an http(s) URL, got "${raw}"`);
  }
  return url.origin;
}

function lane(raw: string | undefined): LaneName | undefined {
  if (raw === undefined) return undefined;
  if (!isLaneName(raw)) {
    throw new UsageError(`--lane needs ${LANES.join(' or ')}, got "${raw}"`);
  }
  return raw;
}

function positiveInteger(option: string, raw: string): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`${option} needs a whole number of at least 1, got "${raw}"`);
  }
  return value;
}

function nonEmpty(option: string, value: string): string {
  if (value.trim() === '') throw new UsageError(`${option} needs a value`);
  return value;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
