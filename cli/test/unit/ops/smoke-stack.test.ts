/**
 * What `smoke` and `meta` read of a deployed stack, against aws-sdk-client-mock: the webhook URL and secret
 * (outputs, Secrets Manager), the alarms (the stack's alarm resources, then DescribeAlarms), each call's
 * input pinned; and smoke's last step, failing when an alarm is in ALARM.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CloudFormationClient,
  DescribeStacksCommand,
  ListStackResourcesCommand,
} from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STACK_OUTPUT } from '../../../../contract/stack-outputs.ts';
import { checkSignature } from '../../../../functions/receiver/signature.ts';
import type { CommandContext } from '../../../ops/commands/command-context.ts';
import { smokeCommand } from '../../../ops/commands/smoke.ts';
import { OpsError } from '../../../ops/errors.ts';
import { checkSubscriptions, describeFinding } from '../../../ops/meta/subscription-check.ts';
import { Output } from '../../../ops/output.ts';
import { type Deployment, stackDeployment } from '../../../ops/target/deployment.ts';
import type { OpsTarget } from '../../../ops/target/ops-target.ts';

const cloudFormation = mockClient(CloudFormationClient);
const secretsManager = mockClient(SecretsManagerClient);
const cloudWatch = mockClient(CloudWatchClient);
const documents = mockClient(DynamoDBDocumentClient);

const config = { region: 'eu-west-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };
const WEBHOOK_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com/webhook';
/** The same stack behind `endpoint: 'function-url'`: the receiver's own URL, with the same path. */
const FUNCTION_URL_WEBHOOK_URL =
  'https://n4bqi7ltmgvbmzpvg6ahaplfae0lqfpo.lambda-url.eu-west-1.on.aws/webhook';

afterEach(() => {
  cloudFormation.reset();
  secretsManager.reset();
  cloudWatch.reset();
  documents.reset();
});

function deployed(webhookUrl = WEBHOOK_URL): Promise<Deployment> {
  cloudFormation.on(DescribeStacksCommand, { StackName: 'prod' }).resolves({
    Stacks: [
      {
        StackName: 'prod',
        CreationTime: new Date(0),
        StackStatus: 'CREATE_COMPLETE',
        Outputs: [
          { OutputKey: STACK_OUTPUT.webhookUrl, OutputValue: webhookUrl },
          { OutputKey: STACK_OUTPUT.webhookSecretName, OutputValue: 'prod/whatsapp-webhook' },
        ],
      },
    ],
  });
  return stackDeployment('prod', {
    cloudFormation: new CloudFormationClient(config),
    lambda: new LambdaClient(config),
    secretsManager: new SecretsManagerClient(config),
    cloudWatch: new CloudWatchClient(config),
  });
}

describe('a deployed stack for meta and smoke', () => {
  it.each([
    ['an HTTP API', WEBHOOK_URL],
    ['a function URL', FUNCTION_URL_WEBHOOK_URL],
  ])(
    'the webhook URL from the outputs (%s), the app secrets and verify token from its secret',
    async (_door, url) => {
      secretsManager.on(GetSecretValueCommand, { SecretId: 'prod/whatsapp-webhook' }).resolves({
        SecretString: JSON.stringify({ appSecrets: ['s1', '', 's2'], verifyToken: 'vt' }),
      });
      const deployment = await deployed(url);

      expect(deployment.webhookUrl).toBe(url);
      expect(await deployment.webhookSecrets()).toEqual({ appSecrets: ['s1', 's2'], verifyToken: 'vt' });
      expect(secretsManager.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input)).toEqual([
        { SecretId: 'prod/whatsapp-webhook' },
      ]);
      deployment.close();
    },
  );

  it('an access token secret: the string itself, or its accessToken; a missing one named', async () => {
    secretsManager
      .on(GetSecretValueCommand, { SecretId: 'plain' })
      .resolves({ SecretString: ' 123|abc \n' })
      .on(GetSecretValueCommand, { SecretId: 'json' })
      .resolves({ SecretString: '{"accessToken":"EAAG-token"}' })
      .on(GetSecretValueCommand, { SecretId: 'gone' })
      .rejects(new ResourceNotFoundException({ message: 'not found', $metadata: {} }));
    const deployment = await deployed();
    const read = deployment.accessTokenFromSecret as (name: string) => Promise<string>;

    expect(await read('plain')).toBe('123|abc');
    expect(await read('json')).toBe('EAAG-token');
    await expect(read('gone')).rejects.toThrow(new OpsError('no secret gone in region eu-west-1'));
  });

  it('the alarms: the stack’s alarm resources only, their states by DescribeAlarms', async () => {
    cloudFormation
      .on(ListStackResourcesCommand, { StackName: 'prod', NextToken: undefined })
      .resolves({
        StackResourceSummaries: [
          alarmResource('prod-BotDlqAlarm-1'),
          {
            LogicalResourceId: 'Queue',
            PhysicalResourceId: 'https://sqs/q',
            ResourceType: 'AWS::SQS::Queue',
            ResourceStatus: 'CREATE_COMPLETE',
            LastUpdatedTimestamp: new Date(0),
          },
        ],
        NextToken: 'page-2',
      })
      .on(ListStackResourcesCommand, { StackName: 'prod', NextToken: 'page-2' })
      .resolves({ StackResourceSummaries: [alarmResource('prod-ReceiverErrorsAlarm-2')] });
    cloudWatch.on(DescribeAlarmsCommand).resolves({
      MetricAlarms: [
        { AlarmName: 'prod-ReceiverErrorsAlarm-2', StateValue: 'OK', StateReason: 'fine' },
        {
          AlarmName: 'prod-BotDlqAlarm-1',
          StateValue: 'ALARM',
          StateReason: 'Threshold crossed',
          StateUpdatedTimestamp: new Date('2026-12-01T10:00:00Z'),
        },
      ],
    });
    const deployment = await deployed();
    const states = await (deployment.alarmStates as () => Promise<unknown>)();

    expect(states).toEqual([
      {
        name: 'prod-BotDlqAlarm-1',
        state: 'ALARM',
        reason: 'Threshold crossed',
        since: '2026-12-01T10:00:00.000Z',
      },
      { name: 'prod-ReceiverErrorsAlarm-2', state: 'OK', reason: 'fine', since: undefined },
    ]);
    expect(cloudWatch.commandCalls(DescribeAlarmsCommand).map((call) => call.args[0].input)).toEqual([
      {
        AlarmNames: ['prod-BotDlqAlarm-1', 'prod-ReceiverErrorsAlarm-2'],
        AlarmTypes: ['MetricAlarm', 'CompositeAlarm'],
        MaxRecords: 100,
      },
    ]);
  });

  it('names the output an older stack lacks', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [{ StackName: 'prod', CreationTime: new Date(0), StackStatus: 'CREATE_COMPLETE', Outputs: [] }],
    });
    await expect(
      stackDeployment('prod', {
        cloudFormation: new CloudFormationClient(config),
        lambda: new LambdaClient(config),
        secretsManager: new SecretsManagerClient(config),
        cloudWatch: new CloudWatchClient(config),
      }),
    ).rejects.toThrow(new OpsError('stack prod has no output WebhookUrl'));
  });
});

function alarmResource(name: string) {
  return {
    LogicalResourceId: name.split('-')[1],
    PhysicalResourceId: name,
    ResourceType: 'AWS::CloudWatch::Alarm',
    ResourceStatus: 'CREATE_COMPLETE' as const,
    LastUpdatedTimestamp: new Date(0),
  };
}

describe('smoke against a stack with an alarm in ALARM', () => {
  let receiver: Server;
  let receiverUrl: string;
  const bodies: { signature: string | undefined; valid: boolean }[] = [];

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const signature = request.headers['x-hub-signature-256'] as string | undefined;
        const check = checkSignature(Buffer.concat(chunks), signature, ['the-app-secret']);
        bodies.push({ signature, valid: check.valid });
        response.writeHead(check.valid ? 200 : 401).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhook`;
  });

  afterAll(async () => {
    receiver.close();
    await once(receiver, 'close');
  });

  it('signs with the stack’s app secret, finds every claim done, and fails naming the alarm in ALARM', async () => {
    const now = 1_780_000_000_000;
    documents.on(BatchGetCommand).callsFake((input) => {
      const keys = input.RequestItems.claims.Keys as { pk: string }[];
      return {
        Responses: {
          claims: keys.map(({ pk }) => ({
            pk,
            state: 'done',
            doneAt: now + 40,
            expiresAt: now / 1000 + 86_400 * 8,
          })),
        },
      };
    });
    const stdout: string[] = [];
    const context: CommandContext = {
      target: {
        tableName: 'claims',
        documentClient: DynamoDBDocumentClient.from(new DynamoDBClient(config)),
        subscribers: [
          {
            name: 'bot',
            fields: ['messages'],
            keyNamespace: 'bot',
            lanes: [
              { lane: 'status', ordered: false, queueUrl: 'q', deadLetterQueueUrl: 'dlq' },
              { lane: 'message', ordered: true, queueUrl: 'q.fifo', deadLetterQueueUrl: 'dlq.fifo' },
            ],
          },
        ],
      } as unknown as OpsTarget,
      output: new Output(
        { stdout: { write: (text: string) => stdout.push(text) }, stderr: { write: () => {} } },
        false,
      ),
      clock: () => now,
      sleep: async () => {},
      env: {},
      subscriber: () => {
        throw new Error('smoke works on every subscriber');
      },
    };
    const deployment: Deployment = {
      description: 'stack prod',
      webhookUrl: receiverUrl,
      webhookSecrets: async () => ({ appSecrets: ['the-app-secret'], verifyToken: 'vt' }),
      alarmStates: async () => [
        { name: 'prod-BotDlqAlarm-1', state: 'ALARM', reason: 'x', since: undefined },
        { name: 'prod-ReceiverErrorsAlarm-2', state: 'OK', reason: 'y', since: undefined },
      ],
      accessTokenFromSecret: undefined,
      close() {},
    };

    const error = await smokeCommand(
      context,
      { target: { kind: 'stack', stackName: 'prod' }, timeoutMs: 1000 },
      { resolveDeployment: async () => deployment, runId: () => 'abc' },
    ).catch((caught: unknown) => caught);

    expect(bodies).toEqual([{ signature: expect.stringMatching(/^sha256=[0-9a-f]{64}$/), valid: true }]);
    expect(error).toEqual(
      new OpsError('the smoke test went through, but 1 alarm(s) are in ALARM: prod-BotDlqAlarm-1'),
    );
    const text = stdout.join('');
    expect(text).toMatch(/^ {2}bot message +40 ms$/m);
    expect(text).toMatch(/^alarms: 2, 1 in ALARM$/m);
    expect(text).toMatch(/^ {2}prod-BotDlqAlarm-1 +ALARM$/m);
    const read = documents.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.claims?.Keys;
    expect(read).toEqual([
      { pk: `bot#msg:wamid.SMOKE_TEST.${now}-abc` },
      { pk: `bot#st:wamid.SMOKE_TEST.${now}-abc.reply:delivered` },
    ]);
  });
});

describe('smoke with subscribers limited to numbers or wabas', () => {
  let receiver: Server;
  let receiverUrl: string;
  const posted: { phoneNumberId: string; wabaId: string; wamids: string[] }[] = [];

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const [entry] = body.entry;
        posted.push({
          phoneNumberId: entry.changes[0].value.metadata.phone_number_id,
          wabaId: entry.id,
          wamids: entry.changes.flatMap(
            (change: { value: { messages?: { id: string }[]; statuses?: { id: string }[] } }) =>
              [...(change.value.messages ?? []), ...(change.value.statuses ?? [])].map(({ id }) => id),
          ),
        });
        response.writeHead(200).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhook`;
  });

  afterAll(async () => {
    receiver.close();
    await once(receiver, 'close');
  });

  const lanes = [
    { lane: 'status', ordered: false, queueUrl: 'q', deadLetterQueueUrl: 'dlq' },
    { lane: 'message', ordered: true, queueUrl: 'q.fifo', deadLetterQueueUrl: 'dlq.fifo' },
  ];
  const NUMBER = '106540352242922';
  const WABA = '102290129340398';

  async function smokeWith(subscribers: readonly object[], done: (pk: string) => boolean) {
    const now = 1_780_000_000_000;
    posted.length = 0;
    documents.on(BatchGetCommand).callsFake((input) => {
      const keys = input.RequestItems.claims.Keys as { pk: string }[];
      return {
        Responses: {
          claims: keys
            .filter(({ pk }) => done(pk))
            .map(({ pk }) => ({ pk, state: 'done', doneAt: now + 40, expiresAt: now / 1000 + 86_400 * 8 })),
        },
      };
    });
    const stdout: string[] = [];
    let clock = now;
    const context: CommandContext = {
      target: {
        tableName: 'claims',
        documentClient: DynamoDBDocumentClient.from(new DynamoDBClient(config)),
        subscribers,
      } as unknown as OpsTarget,
      output: new Output(
        { stdout: { write: (text: string) => stdout.push(text) }, stderr: { write: () => {} } },
        true,
      ),
      // The polls' sleeps move the clock, so that the deadline comes.
      clock: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      env: {},
      subscriber: () => {
        throw new Error('smoke works on every subscriber');
      },
    };
    const deployment: Deployment = {
      description: 'stack prod',
      webhookUrl: receiverUrl,
      webhookSecrets: async () => ({ appSecrets: ['the-app-secret'], verifyToken: 'vt' }),
      alarmStates: undefined,
      accessTokenFromSecret: undefined,
      close() {},
    };
    const error = await smokeCommand(
      context,
      { target: { kind: 'stack', stackName: 'prod' }, timeoutMs: 1000 },
      { resolveDeployment: async () => deployment, runId: () => 'abc' },
    ).catch((caught: unknown) => caught);
    return { error, result: JSON.parse(stdout.join('')), now };
  }

  it('addresses a body to a limited subscriber’s first number and one to a wabas-only subscriber’s first WABA, and awaits each subscriber’s own', async () => {
    const { error, result, now } = await smokeWith(
      [
        { name: 'crm', fields: undefined, numbers: undefined, wabas: undefined, keyNamespace: 'crm', lanes },
        {
          name: 'tenant',
          fields: ['messages'],
          numbers: [NUMBER, '106540352242923'],
          wabas: undefined,
          keyNamespace: 'tenant',
          lanes,
        },
        // Reached by tenant's body: no body of its own.
        {
          name: 'desk',
          fields: undefined,
          numbers: ['106540352242923', NUMBER],
          wabas: undefined,
          keyNamespace: 'desk',
          lanes: lanes.slice(0, 1),
        },
        { name: 'brand', fields: undefined, numbers: undefined, wabas: [WABA], keyNamespace: 'brand', lanes },
      ],
      () => true,
    );

    expect(error).toBeUndefined();
    const first = `wamid.SMOKE_TEST.${now}-abc`;
    const second = `wamid.SMOKE_TEST.${now}-abc-2`;
    expect(posted).toEqual([
      { phoneNumberId: NUMBER, wabaId: 'smoke-test-waba', wamids: [first, `${first}.reply`] },
      { phoneNumberId: 'smoke-test-phone-number', wabaId: WABA, wamids: [second, `${second}.reply`] },
    ]);
    expect(result.bodies).toMatchObject([
      { phoneNumberId: NUMBER, chosenFor: 'tenant', subscribers: ['crm', 'tenant', 'desk'] },
      { wabaId: WABA, chosenFor: 'brand', subscribers: ['crm', 'brand'] },
    ]);
    // crm, without a limit, receives both bodies; each limited subscriber the one of its number or WABA.
    expect(
      result.subscribers.map(({ subscriber, lane, key }: Record<string, string>) => [subscriber, lane, key]),
    ).toEqual([
      ['crm', 'message', `msg:${first}`],
      ['crm', 'status', `st:${first}.reply:delivered`],
      ['crm', 'message', `msg:${second}`],
      ['crm', 'status', `st:${second}.reply:delivered`],
      ['tenant', 'message', `msg:${first}`],
      ['tenant', 'status', `st:${first}.reply:delivered`],
      ['desk', 'status', `msg:${first}`],
      ['desk', 'status', `st:${first}.reply:delivered`],
      ['brand', 'message', `msg:${second}`],
      ['brand', 'status', `st:${second}.reply:delivered`],
    ]);
    expect(result.ok).toBe(true);
  });

  it('sends one body when a single address reaches every limited subscriber, and fails naming the one not done', async () => {
    const { error, result, now } = await smokeWith(
      [
        {
          name: 'tenant',
          fields: undefined,
          numbers: [NUMBER],
          wabas: undefined,
          keyNamespace: 'tenant',
          lanes,
        },
        {
          name: 'bot',
          fields: ['messages'],
          numbers: undefined,
          wabas: undefined,
          keyNamespace: 'bot',
          lanes,
        },
      ],
      (pk) => !pk.startsWith('tenant#'),
    );

    expect(posted.map(({ phoneNumberId, wabaId }) => [phoneNumberId, wabaId])).toEqual([
      [NUMBER, 'smoke-test-waba'],
    ]);
    expect(result.keys).toEqual({
      message: `msg:wamid.SMOKE_TEST.${now}-abc`,
      status: `st:wamid.SMOKE_TEST.${now}-abc.reply:delivered`,
    });
    expect(error).toEqual(
      new OpsError(
        `2 of 4 claims not done after 1 s; tenant (message lane, msg:wamid.SMOKE_TEST.${now}-abc): never claimed: not in its queue (the receiver did not route it there), its consumer is paused or failing, or it has no handler for it and claimUnhandledEvents is false`,
      ),
    );
  });
});

describe('meta status against either front door', () => {
  const subscribed = (callbackUrl: string) => ({
    appId: 'app',
    webhookUrl: FUNCTION_URL_WEBHOOK_URL,
    fields: ['messages'],
    app: { object: 'whatsapp_business_account', active: true, callbackUrl, fields: ['messages'] },
    wabas: [{ wabaId: 'waba', apps: [{ appId: 'app', name: undefined, overrideCallbackUri: undefined }] }],
  });

  it('finds nothing when Meta calls the stack’s function URL', () => {
    expect(checkSubscriptions(subscribed(FUNCTION_URL_WEBHOOK_URL))).toEqual([]);
  });

  it('names the old HTTP API URL Meta still calls after the stack moved to a function URL', () => {
    const findings = checkSubscriptions(subscribed(WEBHOOK_URL));
    expect(findings).toEqual([{ kind: 'callback-url', metaUrl: WEBHOOK_URL }]);
    const [finding] = findings;
    if (finding === undefined) throw new Error('no finding');
    expect(describeFinding(finding, FUNCTION_URL_WEBHOOK_URL)).toBe(
      `the app's callback URL is ${WEBHOOK_URL}, not the stack's ${FUNCTION_URL_WEBHOOK_URL}`,
    );
  });
});
