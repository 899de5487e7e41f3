/**
 * `smoke`: checks a deployment end to end. Signs a synthetic body (one message, one status, marked as a test:
 * contract/smoke-test.ts) with the stack's app secret, POSTs it to the webhook, waits until every subscriber
 * that receives `messages` has done both events (each in its lane), then reads the alarms. Prints the ack
 * time, each subscriber's time to done per lane and the alarms' states; any failed step exits 1 with its
 * reason, after printing what was seen.
 */
import { randomBytes } from 'node:crypto';
import { ENV } from 'whatsapp-webhook-dedup/contract/environment';
import { wantsField } from 'whatsapp-webhook-dedup/contract/subscribers';
import { OpsError } from '../errors.ts';
import { labelled } from '../output.ts';
import {
  type AwaitedClaim,
  awaitClaimsDone,
  type ClaimOutcome,
  notDoneReason,
} from '../smoke/await-claims.ts';
import { postSignedBody } from '../smoke/post-webhook.ts';
import { smokeBody } from '../smoke/smoke-body.ts';
import {
  type AlarmState,
  type Deployment,
  type DeploymentChoice,
  resolveDeployment,
} from '../target/deployment.ts';
import { messageLane } from '../target/ops-target.ts';
import type { CommandContext } from './command-context.ts';

export interface SmokeCommand {
  readonly target: DeploymentChoice;
  readonly timeoutMs: number;
}

export interface SmokeDependencies {
  readonly resolveDeployment?: (choice: DeploymentChoice) => Promise<Deployment>;
  /** @default 12 random hex digits */
  readonly runId?: () => string;
}

export async function smokeCommand(
  context: CommandContext,
  command: SmokeCommand,
  dependencies: SmokeDependencies = {},
): Promise<void> {
  const deployment = await (dependencies.resolveDeployment ?? resolveDeployment)(command.target);
  try {
    await runSmokeTest(
      context,
      command,
      deployment,
      dependencies.runId ?? (() => randomBytes(6).toString('hex')),
    );
  } finally {
    deployment.close();
  }
}

async function runSmokeTest(
  context: CommandContext,
  command: SmokeCommand,
  deployment: Deployment,
  runId: () => string,
): Promise<void> {
  const { target, output } = context;
  const receiving = target.subscribers.filter((subscriber) => wantsField(subscriber.fields, 'messages'));
  const skipped = target.subscribers.filter((subscriber) => !receiving.includes(subscriber));
  if (receiving.length === 0) {
    throw new OpsError('no subscriber receives the messages field, so a smoke test would reach nobody');
  }
  const { appSecrets } = await deployment.webhookSecrets();
  const [appSecret] = appSecrets;
  if (appSecret === undefined) {
    throw new OpsError(
      `${deployment.description} has no app secret stored yet, so its receiver refuses every POST (401): store the Meta app secret (docs/deploy.md)`,
    );
  }
  const id = runId();
  const test = smokeBody(`${context.clock()}-${id}`, context.clock());
  const awaited: AwaitedClaim[] = receiving.flatMap((subscriber) => [
    // Without a message lane, inbound messages travel in the status lane.
    {
      subscriber: subscriber.name,
      lane: messageLane(subscriber) ? 'message' : 'status',
      key: test.messageKey,
    },
    { subscriber: subscriber.name, lane: 'status', key: test.statusKey },
  ]);
  output.record('smoke', { webhookUrl: deployment.webhookUrl, keys: [test.messageKey, test.statusKey] });

  const sentAtMs = context.clock();
  const ack = await postSignedBody(
    deployment.webhookUrl,
    test.body,
    appSecret,
    command.target.kind === 'local'
      ? `; locally ops signs with ${ENV.appSecrets} (else the development default): give it the value npm start has`
      : '',
  );
  output.progress(
    `smoke: accepted in ${Math.round(ack.ackMs)} ms; waiting for ${receiving.length} subscriber(s)`,
  );
  const outcomes = await awaitClaimsDone(
    target,
    new Map(receiving.map((subscriber) => [subscriber.name, subscriber.keyNamespace])),
    awaited,
    { sentAtMs, deadlineMs: sentAtMs + command.timeoutMs, clock: context.clock, sleep: context.sleep },
  );
  let alarms: AlarmState[] | undefined;
  let alarmProblem: string | undefined;
  if (deployment.alarmStates !== undefined) {
    try {
      alarms = await deployment.alarmStates();
    } catch (error) {
      alarmProblem = `reading the alarms failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
    }
  }
  const notDone = outcomes.filter((outcome) => outcome.status !== 'done');
  const firing = (alarms ?? []).filter((alarm) => alarm.state === 'ALARM');

  output.result(
    {
      ok: notDone.length === 0 && firing.length === 0 && alarmProblem === undefined,
      webhookUrl: deployment.webhookUrl,
      keys: { message: test.messageKey, status: test.statusKey },
      ack: { status: ack.status, ms: round(ack.ackMs) },
      subscribers: outcomes.map((outcome) => ({
        ...outcome,
        doneAfterMs: outcome.doneAfterMs === undefined ? undefined : round(outcome.doneAfterMs),
        ...(outcome.status === 'done' ? {} : { reason: notDoneReason(outcome) }),
      })),
      skippedSubscribers: skipped.map((subscriber) => subscriber.name),
      alarms: alarms ?? null,
      alarmProblem,
    },
    textLines(
      deployment,
      test.messageKey,
      test.statusKey,
      ack.ackMs,
      outcomes,
      skipped.map((s) => s.name),
      alarms,
      alarmProblem,
    ),
  );

  if (notDone.length > 0) {
    const first = notDone[0] as ClaimOutcome;
    throw new OpsError(
      `${notDone.length} of ${outcomes.length} claims not done after ${command.timeoutMs / 1000} s; ${first.subscriber} (${first.lane} lane, ${first.key}): ${notDoneReason(first)}`,
    );
  }
  if (alarmProblem !== undefined) throw new OpsError(alarmProblem);
  if (firing.length > 0) {
    throw new OpsError(
      `the smoke test went through, but ${firing.length} alarm(s) are in ALARM: ${firing.map((alarm) => alarm.name).join(', ')}`,
    );
  }
}

function textLines(
  deployment: Deployment,
  messageKey: string,
  statusKey: string,
  ackMs: number,
  outcomes: readonly ClaimOutcome[],
  skipped: readonly string[],
  alarms: readonly AlarmState[] | undefined,
  alarmProblem: string | undefined,
): string[] {
  const lines = labelled([
    ['webhook', `${deployment.webhookUrl} (${deployment.description})`],
    ['keys', `${messageKey}, ${statusKey}`],
    ['ack', `200 in ${Math.round(ackMs)} ms`],
  ]);
  lines.push('done (from sending, per subscriber and lane):');
  lines.push(
    ...labelled(
      outcomes.map((outcome) => [
        `${outcome.subscriber} ${outcome.lane}`,
        outcome.status === 'done'
          ? `${Math.round(outcome.doneAfterMs ?? 0)} ms`
          : `NOT DONE: ${notDoneReason(outcome)}`,
      ]),
      { indent: '  ' },
    ),
  );
  if (skipped.length > 0) lines.push(`not receiving messages, skipped: ${skipped.join(', ')}`);
  if (alarmProblem !== undefined) lines.push(`alarms: ${alarmProblem}`);
  else if (alarms === undefined) lines.push('alarms: none (the local stack has no CloudWatch alarms)');
  else {
    const firing = alarms.filter((alarm) => alarm.state === 'ALARM');
    lines.push(`alarms: ${alarms.length}, ${firing.length} in ALARM`);
    lines.push(
      ...labelled(
        alarms.map((alarm) => [alarm.name, alarm.state]),
        { indent: '  ' },
      ),
    );
  }
  return lines;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
