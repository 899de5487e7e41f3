/**
 * `npm run ops -- …` as a function of its arguments: parse, resolve the target, run the command, and turn
 * every failure into one line on stderr and an exit code (2: usage, 1: the operation failed, 0: done; a command
 * may answer with its own, such as 3 for `key` with no claim).
 */
import { type OpsCommand, opsUsage, parseOpsArguments, type TargetChoice } from './arguments.ts';
import type { CommandContext } from './commands/command-context.ts';
import { dlqPeekCommand, dlqRedriveCommand, dlqStatsCommand } from './commands/dlq.ts';
import { forgetCommand } from './commands/forget.ts';
import { keyCommand, keysCommand } from './commands/key.ts';
import { metaStatusCommand, metaSubscribeCommand } from './commands/meta.ts';
import { switchConsumerCommand } from './commands/pause.ts';
import {
  quarantineListCommand,
  quarantineRequeueCommand,
  quarantineShowCommand,
} from './commands/quarantine.ts';
import { replayCommand } from './commands/replay.ts';
import { smokeCommand } from './commands/smoke.ts';
import { OpsError, UsageError } from './errors.ts';
import { type OpsStreams, Output } from './output.ts';
import { resolveLocalTarget } from './target/local-target.ts';
import type { OpsTarget } from './target/ops-target.ts';
import { selectSubscriber } from './target/select-subscriber.ts';
import { resolveStackTarget } from './target/stack-target.ts';

export interface OpsDependencies {
  readonly resolveTarget: (choice: TargetChoice) => Promise<OpsTarget>;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly env?: NodeJS.ProcessEnv;
  /** How ops was invoked, for its help. @default `npm run ops --` */
  readonly program?: string;
}

export function resolveTarget(choice: TargetChoice): Promise<OpsTarget> {
  return choice.kind === 'local' ? resolveLocalTarget(choice.url) : resolveStackTarget(choice.stackName);
}

export async function runOps(
  args: readonly string[],
  streams: OpsStreams,
  dependencies: OpsDependencies = { resolveTarget },
): Promise<number> {
  let target: OpsTarget | undefined;
  try {
    const parsed = parseOpsArguments(args, dependencies.env ?? process.env, dependencies.program);
    if (parsed.help) {
      streams.stdout.write(`${opsUsage(dependencies.program)}\n`);
      return 0;
    }
    // Only now, with every argument checked: a usage problem is named as such, stack or no stack.
    const resolved = await dependencies.resolveTarget(parsed.target);
    target = resolved;
    const context: CommandContext = {
      target: resolved,
      output: new Output(streams, parsed.json),
      clock: dependencies.clock ?? Date.now,
      sleep: dependencies.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      env: dependencies.env ?? process.env,
      subscriber: () => selectSubscriber(resolved.subscribers, parsed.subscriber),
    };
    if (parsed.subscriber !== undefined) context.subscriber();
    const code = await run(context, parsed.command);
    return typeof code === 'number' ? code : 0;
  } catch (error) {
    streams.stderr.write(`ops: ${oneLine(error)}\n`);
    return error instanceof UsageError ? error.exitCode : error instanceof OpsError ? error.exitCode : 1;
  } finally {
    target?.close();
  }
}

/** Resolves to the command's exit code when it has one other than 0 (else nothing). */
async function run(context: CommandContext, command: OpsCommand): Promise<unknown> {
  switch (command.name) {
    case 'key':
      return keyCommand(context, command.key);
    case 'keys':
      return keysCommand(context, command.events);
    case 'forget':
      return forgetCommand(context, command.key, command.force);
    case 'pause':
      return switchConsumerCommand(context, command.lane, false);
    case 'resume':
      return switchConsumerCommand(context, command.lane, true);
    case 'dlq-stats':
      return dlqStatsCommand(context, command.lane);
    case 'dlq-peek':
      return dlqPeekCommand(context, command.lane, command.limit);
    case 'dlq-redrive':
      return dlqRedriveCommand(context, command.lane, command.max);
    case 'quarantine-list':
      return quarantineListCommand(context);
    case 'quarantine-show':
      return quarantineShowCommand(context, command.id);
    case 'quarantine-requeue':
      return quarantineRequeueCommand(context, command.id);
    case 'meta-subscribe':
      return metaSubscribeCommand(context, command);
    case 'meta-status':
      return metaStatusCommand(context, command);
    case 'smoke':
      return smokeCommand(context, command);
    case 'replay':
      return replayCommand(context, command);
  }
}

/**
 * Our errors are written as one line; an SDK's may hold several: the first, with its name. The AWS setup
 * problems every first deployed run meets say what to set instead of the SDK's words.
 */
function oneLine(error: unknown): string {
  if (error instanceof UsageError || error instanceof OpsError) return error.message;
  const awsSetup = awsSetupProblem(error);
  if (awsSetup !== undefined) return awsSetup;
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.split('\n')[0] ?? text;
}

function awsSetupProblem(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.message === 'Region is missing') {
    return 'no AWS region: set AWS_REGION (e.g. AWS_REGION=eu-west-1), or AWS_PROFILE to a profile with a region';
  }
  if (error.name === 'CredentialsProviderError') {
    return (
      'no AWS credentials: set AWS_PROFILE to a configured profile (aws configure, or aws sso login --profile ' +
      'NAME), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'
    );
  }
  if (['ExpiredToken', 'ExpiredTokenException', 'TokenRefreshRequired'].includes(error.name)) {
    return 'your AWS credentials have expired: renew them (aws sso login --profile NAME) and run it again';
  }
  return undefined;
}
