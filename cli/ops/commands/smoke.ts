/**
 * `smoke`: checks a deployment end to end. Signs a synthetic body (one message, one status, marked as a test:
 * contract/smoke-test.ts) with the stack's app secret, POSTs it to the webhook, waits until every subscriber
 * that receives `messages` has done both events (each in its lane), then reads the alarms. Prints the ack
 * time, each subscriber's time to done per lane and the alarms' states; any failed step exits 1 with its
 * reason, after printing what was seen.
 *
 * Subscribers limited to `numbers` or `wabas` get the body through the receiver's own routing: it is addressed
 * to one of their numbers (or WABAs), one body per address `smokeAddresses` picks, and each subscriber is
 * awaited for every body routed to it (one without a limit gets them all).
 */
import { randomBytes } from 'node:crypto';
import { ENV } from 'whatsapp-webhook-dedup/contract/environment';
import { wantsField, wantsOrigin } from 'whatsapp-webhook-dedup/contract/event-origin';
import { OpsError } from '../errors.ts';
import { labelled } from '../output.ts';
import {
  type AwaitedClaim,
  awaitClaimsDone,
  type ClaimOutcome,
  notDoneReason,
} from '../smoke/await-claims.ts';
import { postSignedBody, type WebhookAck } from '../smoke/post-webhook.ts';
import {
  DEFAULT_SMOKE_ADDRESS,
  type SmokeAddress,
  type SmokeBody,
  smokeAddresses,
  smokeBody,
} from '../smoke/smoke-body.ts';
import {
  type AlarmState,
  type Deployment,
  type DeploymentChoice,
  resolveDeployment,
} from '../target/deployment.ts';
import { messageLane, type SubscriberTarget } from '../target/ops-target.ts';
import type { CommandContext } from './command-context.ts';

export interface SmokeCommand {
  readonly target: DeploymentChoice;
  readonly timeoutMs: number;
}

export interface SmokeDependencies {
  readonly resolveDeployment?: (choice: DeploymentChoice, env: NodeJS.ProcessEnv) => Promise<Deployment>;
  /** @default 12 random hex digits */
  readonly runId?: () => string;
}

export async function smokeCommand(
  context: CommandContext,
  command: SmokeCommand,
  dependencies: SmokeDependencies = {},
): Promise<void> {
  const deployment = await (dependencies.resolveDeployment ?? resolveDeployment)(command.target, context.env);
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
  const now = context.clock();
  // The first body's keys are those of a run with one body; each further body's are its own.
  const tests = smokeAddresses(receiving).map((address, index) =>
    smokeBody(`${now}-${id}${index === 0 ? '' : `-${index + 1}`}`, now, address),
  );
  const awaited: AwaitedClaim[] = receiving.flatMap((subscriber) =>
    testsReaching(subscriber, tests).flatMap((test) => [
      // Without a message lane, inbound messages travel in the status lane.
      {
        subscriber: subscriber.name,
        lane: messageLane(subscriber) ? 'message' : 'status',
        key: test.messageKey,
      },
      { subscriber: subscriber.name, lane: 'status', key: test.statusKey },
    ]),
  );
  output.record('smoke', {
    webhookUrl: deployment.webhookUrl,
    keys: tests.flatMap((test) => [test.messageKey, test.statusKey]),
  });

  const sent: { readonly test: SmokeBody; readonly sentAtMs: number; readonly ack: WebhookAck }[] = [];
  for (const test of tests) {
    const sentAtMs = context.clock();
    const ack = await postSignedBody(
      deployment.webhookUrl,
      test.body,
      appSecret,
      command.target.kind === 'local'
        ? `; locally ops signs with ${ENV.appSecrets} (else the development default): give it the value npm start has`
        : '',
    );
    sent.push({ test, sentAtMs, ack });
  }
  output.progress(
    `smoke: ${sent.length === 1 ? '' : `${sent.length} bodies `}accepted in ${sent.map(({ ack }) => Math.round(ack.ackMs)).join(', ')} ms; waiting for ${receiving.length} subscriber(s)`,
  );
  const sentAtOf = new Map(
    sent.flatMap(({ test, sentAtMs }) => [
      [test.messageKey, sentAtMs],
      [test.statusKey, sentAtMs],
    ]),
  );
  const lastSentAtMs = Math.max(...sent.map(({ sentAtMs }) => sentAtMs));
  const outcomes = await awaitClaimsDone(
    target,
    new Map(receiving.map((subscriber) => [subscriber.name, subscriber.keyNamespace])),
    awaited,
    {
      sentAtMs: (claim) => sentAtOf.get(claim.key) ?? lastSentAtMs,
      deadlineMs: lastSentAtMs + command.timeoutMs,
      clock: context.clock,
      sleep: context.sleep,
    },
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
  const [firstSent] = sent as [(typeof sent)[number]];

  output.result(
    {
      ok: notDone.length === 0 && firing.length === 0 && alarmProblem === undefined,
      webhookUrl: deployment.webhookUrl,
      // The first body's: the run's own when one body reaches every subscriber (always without numbers or wabas).
      keys: { message: firstSent.test.messageKey, status: firstSent.test.statusKey },
      ack: { status: firstSent.ack.status, ms: round(firstSent.ack.ackMs) },
      bodies: sent.map(({ test, ack }) => ({
        phoneNumberId: test.address.phoneNumberId,
        wabaId: test.address.wabaId,
        chosenFor: test.address.chosenFor,
        keys: { message: test.messageKey, status: test.statusKey },
        ack: { status: ack.status, ms: round(ack.ackMs) },
        subscribers: receiving
          .filter((subscriber) => wantsOrigin(subscriber, test.address))
          .map((subscriber) => subscriber.name),
      })),
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
      sent,
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

/** The bodies the receiver routes to the subscriber: those of its numbers or wabas, every one without them. */
function testsReaching(subscriber: SubscriberTarget, tests: readonly SmokeBody[]): SmokeBody[] {
  return tests.filter((test) => wantsOrigin(subscriber, test.address));
}

/** `phone number 1065… (for tenant)`: where a body was addressed, when not to the smoke test's own ids. */
function addressText(address: SmokeAddress): string | undefined {
  if (address.chosenFor === undefined) return undefined;
  return address.phoneNumberId === DEFAULT_SMOKE_ADDRESS.phoneNumberId
    ? `WABA ${address.wabaId} (for ${address.chosenFor})`
    : `phone number ${address.phoneNumberId} (for ${address.chosenFor})`;
}

function textLines(
  deployment: Deployment,
  sent: readonly { readonly test: SmokeBody; readonly ack: WebhookAck }[],
  outcomes: readonly ClaimOutcome[],
  skipped: readonly string[],
  alarms: readonly AlarmState[] | undefined,
  alarmProblem: string | undefined,
): string[] {
  const bodyOf = new Map(
    sent.flatMap(({ test }, index) => [
      [test.messageKey, index + 1],
      [test.statusKey, index + 1],
    ]),
  );
  const rows: [string, string | undefined][] = [
    ['webhook', `${deployment.webhookUrl} (${deployment.description})`],
  ];
  const [only, ...more] = sent;
  if (only !== undefined && more.length === 0) {
    rows.push(
      ['to', addressText(only.test.address)],
      ['keys', `${only.test.messageKey}, ${only.test.statusKey}`],
      ['ack', `200 in ${Math.round(only.ack.ackMs)} ms`],
    );
  } else {
    sent.forEach(({ test, ack }, index) => {
      rows.push([
        `body ${index + 1}`,
        `${addressText(test.address) ?? 'the smoke test’s own ids'}: ${test.messageKey}, ${test.statusKey}; ack 200 in ${Math.round(ack.ackMs)} ms`,
      ]);
    });
  }
  const lines = labelled(rows);
  lines.push('done (from sending, per subscriber and lane):');
  lines.push(
    ...labelled(
      outcomes.map((outcome) => [
        `${outcome.subscriber} ${outcome.lane}${sent.length === 1 ? '' : ` (body ${bodyOf.get(outcome.key)})`}`,
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
