/**
 * The ops CLI's AWS calls, against aws-sdk-client-mock: stack outputs and consumer environments (--stack),
 * event source mapping updates (pause, resume), SQS message move tasks (dlq redrive), and what `meta` and
 * `smoke` read (the webhook URL and secret from the outputs and Secrets Manager, smoke's claims and the stack's
 * alarms), each call's whole input pinned; and the AWS permissions table of docs/operations.md, generated from the calls every command
 * makes here (`WRITE_DOCS=1 npx vitest run cli/test/unit/ops/aws-calls.test.ts` rewrites it).
 */
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import {
  CloudFormationClient,
  DescribeStacksCommand,
  ListStackResourcesCommand,
} from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  GetEventSourceMappingCommand,
  GetFunctionConfigurationCommand,
  LambdaClient,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import {
  GetBucketLifecycleConfigurationCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type QueueAttributeName,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { BatchGetCommand, DeleteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ARCHIVE_RECORD_VERSION,
  archiveObjectKey,
  encodeArchiveLines,
  hourPrefix,
} from '../../../../contract/archive.ts';
import { consumerEnvironment } from '../../../../contract/environment.ts';
import { META_ENV } from '../../../../contract/meta-graph-api.ts';
import { STACK_OUTPUT, subscriberOutputKeys } from '../../../../contract/stack-outputs.ts';
import { keyedDigest } from '../../../../functions/commons/log-digest.ts';
import { proofHolds, proofOf } from '../../../../functions/commons/provenance.ts';
import { checkSignature } from '../../../../functions/receiver/signature.ts';
import { answerVerificationHandshake } from '../../../../functions/receiver/verification-handshake.ts';
import { readRegion, replaceRegion } from '../../../../lab/docs/markdown/regions.ts';
import {
  inboundMessages,
  inboundMessagesWithIds,
  messagesBody,
  statusesBody,
} from '../../../meta-traffic/webhook-bodies.ts';
import { OpsError } from '../../../ops/errors.ts';
import { runOps } from '../../../ops/run-ops.ts';
import { resolveStackTarget, type StackClients } from '../../../ops/target/stack-target.ts';
import { FakeGraphApi } from './fake-graph-api.ts';

const cloudFormation = mockClient(CloudFormationClient);
const lambda = mockClient(LambdaClient);
const sqs = mockClient(SQSClient);
const documents = mockClient(DynamoDBDocumentClient);
const s3 = mockClient(S3Client);
// meta and smoke make their clients themselves (cli/ops/target/deployment.ts): mocked for every instance.
const secretsManager = mockClient(SecretsManagerClient);
const cloudWatch = mockClient(CloudWatchClient);

const REGION = 'eu-west-1';
const QUEUES = `https://sqs.${REGION}.amazonaws.com/123456789012`;
const queueUrl = (name: string) => `${QUEUES}/${name}`;
const queueArn = (url: string) => `arn:aws:sqs:${REGION}:123456789012:${url.split('/').pop()}`;

/** The stack's webhook secret (its `WebhookSecretName` output) and what it holds. */
const WEBHOOK_SECRET = 'prod/whatsapp-webhook';
const PROVENANCE_SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod-ProvenanceKey-abc';
const PROVENANCE_KEY = 'p'.repeat(64);
const LOG_DIGEST_SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod-LogDigestKey-abc';
const APP_SECRET = 'the-app-secret';
const VERIFY_TOKEN = 'stack-verify-token';
/** A Meta access token stored by the operator (`meta --token-secret`). */
const TOKEN_SECRET = 'prod/meta-token';
const META_TOKEN = '1234567890|meta-app-secret';
const APP_ID = '1234567890';

/**
 * The stack's webhook, at its `WebhookUrl` output: the receiver's own handshake for Meta's verification GET,
 * and 200 for a POST signed with the stack's app secret (401 otherwise).
 */
let webhook: Server;
let webhookUrl: string;
const webhookPosts: boolean[] = [];
beforeAll(async () => {
  webhook = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'GET') {
        const query = Object.fromEntries(new URL(request.url ?? '/', 'http://x').searchParams);
        const answer = answerVerificationHandshake(query, VERIFY_TOKEN);
        response.writeHead(answer.statusCode, { 'content-type': 'text/plain' }).end(answer.body);
        return;
      }
      const signature = request.headers['x-hub-signature-256'] as string | undefined;
      const { valid } = checkSignature(Buffer.concat(chunks), signature, [APP_SECRET]);
      webhookPosts.push(valid);
      response.writeHead(valid ? 200 : 401).end();
    });
  });
  webhook.listen(0, '127.0.0.1');
  await once(webhook, 'listening');
  webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/webhook`;
});
afterAll(async () => {
  webhook.close();
  await once(webhook, 'close');
});

function clients(): StackClients {
  const config = { region: REGION, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };
  return {
    cloudFormation: new CloudFormationClient(config),
    lambda: new LambdaClient(config),
    sqs: new SQSClient(config),
    dynamodb: new DynamoDBClient(config),
    s3: new S3Client(config),
    secretsManager: new SecretsManagerClient(config),
  };
}

/** The outputs the stack writes for `bot` and `crm`, and each consumer's environment as the construct sets it. */
function deployedStack(
  options: { readonly archive?: boolean; readonly logDigestSecretArn?: string } = {},
): void {
  const outputs: Record<string, string> = {
    [STACK_OUTPUT.subscriberNames]: 'bot,crm',
    [STACK_OUTPUT.claimTableName]: 'prod-claims',
    [STACK_OUTPUT.quarantineQueueUrl]: queueUrl('quarantine'),
    [STACK_OUTPUT.webhookUrl]: webhookUrl,
    [STACK_OUTPUT.webhookSecretName]: WEBHOOK_SECRET,
    [STACK_OUTPUT.provenanceSecretArn]: PROVENANCE_SECRET,
    [STACK_OUTPUT.logDigestSecretArn]: options.logDigestSecretArn ?? LOG_DIGEST_SECRET,
  };
  if (options.archive !== false) outputs[STACK_OUTPUT.archiveBucketName] = 'prod-archive';
  for (const name of ['bot', 'crm']) {
    const keys = subscriberOutputKeys(name);
    outputs[keys.deliveryQueueUrl] = queueUrl(`${name}-deliveries`);
    outputs[keys.deadLetterQueueUrl] = queueUrl(`${name}-dlq`);
    outputs[keys.consumerFunctionName] = `prod-${name}-consumer`;
    outputs[keys.eventSourceMappingId] = `esm-${name}`;
  }
  // Both want messages, so both have a message lane: bot's ordered (FIFO), crm's not (`ordered: false`).
  for (const [name, suffix] of [
    ['bot', '.fifo'],
    ['crm', ''],
  ] as const) {
    const keys = subscriberOutputKeys(name);
    outputs[keys.messageQueueUrl] = queueUrl(`${name}-messages${suffix}`);
    outputs[keys.messageDeadLetterQueueUrl] = queueUrl(`${name}-messages-dlq${suffix}`);
    outputs[keys.messageConsumerFunctionName] = `prod-${name}-message-consumer`;
    outputs[keys.messageEventSourceMappingId] = `esm-${name}-messages`;
  }
  secretsManager
    .on(GetSecretValueCommand, { SecretId: PROVENANCE_SECRET })
    .resolves({ SecretString: PROVENANCE_KEY })
    .on(GetSecretValueCommand, { SecretId: LOG_DIGEST_SECRET })
    .resolves({ SecretString: 'l'.repeat(64) });
  cloudFormation.on(DescribeStacksCommand, { StackName: 'prod' }).resolves({
    Stacks: [
      {
        StackName: 'prod',
        CreationTime: new Date(0),
        StackStatus: 'UPDATE_COMPLETE',
        Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
      },
    ],
  });
  const environment = (name: string, extra: { keyNamespace?: string; fields?: string[] }) =>
    consumerEnvironment({
      tableName: 'prod-claims',
      subscriberName: name,
      quarantineQueueUrl: queueUrl('quarantine'),
      deliveryQueueUrl: queueUrl(`${name}-deliveries`),
      retentionDays: 8,
      leaseMarginMs: 10_000,
      maximumMessageSizeBytes: 1_048_576,
      ...extra,
    });
  lambda
    .on(GetFunctionConfigurationCommand, { FunctionName: 'prod-bot-consumer' })
    .resolves({
      Environment: { Variables: environment('bot', { keyNamespace: 'bot', fields: ['messages'] }) },
    })
    .on(GetFunctionConfigurationCommand, { FunctionName: 'prod-crm-consumer' })
    .resolves({ Environment: { Variables: environment('crm', { keyNamespace: 'crm-v2' }) } });
  for (const [name, [visible, inFlight, delayed]] of Object.entries(QUEUE_COUNTS)) {
    sqs
      .on(GetQueueAttributesCommand, { QueueUrl: queueUrl(name), AttributeNames: ['QueueArn'] }, true)
      .resolves({ Attributes: { QueueArn: queueArn(queueUrl(name)) } })
      .on(GetQueueAttributesCommand, { QueueUrl: queueUrl(name), AttributeNames: COUNT_ATTRIBUTES }, true)
      .resolves({
        Attributes: {
          ApproximateNumberOfMessages: String(visible),
          ApproximateNumberOfMessagesNotVisible: String(inFlight),
          ApproximateNumberOfMessagesDelayed: String(delayed),
        },
      });
  }
}

const COUNT_ATTRIBUTES: QueueAttributeName[] = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
];
/** Visible, in flight, delayed: different for every queue, so that reading the wrong one shows. */
const QUEUE_COUNTS: Record<string, [number, number, number]> = {
  'bot-deliveries': [7, 2, 0],
  'crm-deliveries': [5, 1, 3],
  'bot-dlq': [4, 0, 0],
  'crm-dlq': [6, 3, 0],
  'bot-messages.fifo': [3, 0, 0],
  'bot-messages-dlq.fifo': [2, 1, 0],
  'crm-messages': [8, 4, 0],
  'crm-messages-dlq': [0, 0, 0],
  quarantine: [1, 0, 0],
};
const countsCall = (name: string) =>
  ['sqs:GetQueueAttributes', { QueueUrl: queueUrl(name), AttributeNames: COUNT_ATTRIBUTES }] as const;
const arnCall = (name: string) =>
  ['sqs:GetQueueAttributes', { QueueUrl: queueUrl(name), AttributeNames: ['QueueArn'] }] as const;

interface RecordingMock {
  calls(): readonly { readonly args: readonly unknown[] }[];
  reset(): unknown;
}
const MOCKS: readonly (readonly [service: string, mock: RecordingMock])[] = [
  ['cloudformation', cloudFormation],
  ['lambda', lambda],
  ['sqs', sqs],
  ['dynamodb', documents],
  ['s3', s3],
  ['secretsmanager', secretsManager],
  ['cloudwatch', cloudWatch],
];

type SentCall = readonly [operation: string, input: Record<string, unknown>];

/** Every call sent to any mocked client, in the order sent: `service:Operation` and its whole input. */
function sentCalls(): SentCall[] {
  return MOCKS.flatMap(([service, mock]) =>
    mock.calls().map((call) => {
      const command = call.args[0] as unknown as {
        constructor: { name: string };
        input: Record<string, unknown>;
      };
      const order = (call as unknown as { callId: number }).callId;
      return {
        order,
        call: [`${service}:${command.constructor.name.replace(/Command$/, '')}`, command.input] as const,
      };
    }),
  )
    .sort((a, b) => a.order - b.order)
    .map(({ call }) => call);
}

/** What `--stack prod` reads before any command runs. */
const RESOLVE_CALLS: SentCall[] = [
  ['cloudformation:DescribeStacks', { StackName: 'prod' }],
  ['lambda:GetFunctionConfiguration', { FunctionName: 'prod-bot-consumer' }],
  ['lambda:GetFunctionConfiguration', { FunctionName: 'prod-crm-consumer' }],
];

/** The archive bucket holding one object with one delivery of `body`, archived `agoMs` before now. */
function archivedDelivery(
  body: string,
  agoMs = 3_600_000,
  options: { readonly proven?: boolean } = {},
): { key: string; arrivedAt: string } {
  const arrival = Date.now() - agoMs;
  const key = archiveObjectKey(arrival, arrival, 'b1');
  const arrivedAt = new Date(arrival).toISOString();
  const lines = encodeArchiveLines([
    {
      v: ARCHIVE_RECORD_VERSION,
      deliveryId: 'api-1',
      arrivedAt,
      verdict: 'accepted',
      subscribers: ['crm'],
      encoding: 'utf8',
      body,
      ...(options.proven === false ? {} : { proof: proofOf(PROVENANCE_KEY, body) }),
    },
  ]);
  s3.on(ListObjectsV2Command)
    .callsFake((input: { Prefix: string }) => ({
      Contents: input.Prefix === hourPrefix(arrival) ? [{ Key: key }] : [],
    }))
    .on(GetObjectCommand, { Bucket: 'prod-archive', Key: key })
    .resolves({ Body: { transformToByteArray: async () => gzipSync(lines) } } as never)
    .on(GetBucketLifecycleConfigurationCommand)
    .resolves({
      Rules: [
        { ID: 'expire', Status: 'Enabled', Filter: { Prefix: 'deliveries/' }, Expiration: { Days: 30 } },
      ],
    });
  return { key, arrivedAt };
}

async function ops(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runOps(
    ['--stack', 'prod', ...args],
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    },
    { resolveTarget: () => resolveStackTarget('prod', clients()), sleep: async () => undefined },
  );
  return { code, stdout, stderr };
}

beforeEach(deployedStack);
afterEach(() => {
  for (const [, mock] of MOCKS) mock.reset();
});

describe('--stack NAME: the target from CloudFormation outputs and the consumers’ environment', () => {
  it('finds each subscriber’s queues, key namespace and fields, the table and the quarantine queue', async () => {
    const target = await resolveStackTarget('prod', clients());

    expect(target).toMatchObject({
      description: `stack prod (${REGION})`,
      tableName: 'prod-claims',
      quarantineQueueUrl: queueUrl('quarantine'),
      maximumMessageSizeBytes: 1_048_576,
      subscribers: [
        {
          name: 'bot',
          fields: ['messages'],
          keyNamespace: 'bot',
          lanes: [
            {
              lane: 'status',
              ordered: false,
              queueUrl: queueUrl('bot-deliveries'),
              deadLetterQueueUrl: queueUrl('bot-dlq'),
              functionName: 'prod-bot-consumer',
              eventSourceMappingId: 'esm-bot',
            },
            {
              lane: 'message',
              ordered: true,
              queueUrl: queueUrl('bot-messages.fifo'),
              deadLetterQueueUrl: queueUrl('bot-messages-dlq.fifo'),
              functionName: 'prod-bot-message-consumer',
              eventSourceMappingId: 'esm-bot-messages',
            },
          ],
        },
        {
          name: 'crm',
          fields: undefined,
          keyNamespace: 'crm-v2',
          lanes: [
            {
              lane: 'status',
              ordered: false,
              queueUrl: queueUrl('crm-deliveries'),
              deadLetterQueueUrl: queueUrl('crm-dlq'),
              functionName: 'prod-crm-consumer',
              eventSourceMappingId: 'esm-crm',
            },
            {
              lane: 'message',
              ordered: false,
              queueUrl: queueUrl('crm-messages'),
              deadLetterQueueUrl: queueUrl('crm-messages-dlq'),
              functionName: 'prod-crm-message-consumer',
              eventSourceMappingId: 'esm-crm-messages',
            },
          ],
        },
      ],
    });
    expect(target.messageMoveTasks).toBeDefined();
    expect(sentCalls()).toEqual(RESOLVE_CALLS);
    target.close();
  });

  it('reads a subscriber’s numbers and wabas as its consumer reads them (absent: no limit)', async () => {
    lambda.on(GetFunctionConfigurationCommand, { FunctionName: 'prod-bot-consumer' }).resolves({
      Environment: {
        Variables: consumerEnvironment({
          tableName: 'prod-claims',
          subscriberName: 'bot',
          quarantineQueueUrl: queueUrl('quarantine'),
          deliveryQueueUrl: queueUrl('bot-deliveries'),
          retentionDays: 8,
          leaseMarginMs: 10_000,
          maximumMessageSizeBytes: 1_048_576,
          keyNamespace: 'bot',
          numbers: ['106540352242922', '106540352242923'],
          wabas: ['102290129340398'],
        }),
      },
    });
    const target = await resolveStackTarget('prod', clients());

    expect(target.subscribers.map(({ name, numbers, wabas }) => ({ name, numbers, wabas }))).toEqual([
      { name: 'bot', numbers: ['106540352242922', '106540352242923'], wabas: ['102290129340398'] },
      { name: 'crm', numbers: undefined, wabas: undefined },
    ]);
    target.close();
  });

  it('says which output is missing (a stack deployed before the outputs existed)', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [{ StackName: 'prod', CreationTime: new Date(0), StackStatus: 'CREATE_COMPLETE', Outputs: [] }],
    });

    await expect(resolveStackTarget('prod', clients())).rejects.toThrow(
      new OpsError(
        'stack prod has no output SubscriberNames: deploy this version of the construct (it writes the outputs ops reads)',
      ),
    );
  });

  it('says so in one line, exit 1, when the stack does not exist', async () => {
    cloudFormation
      .on(DescribeStacksCommand)
      .rejects(Object.assign(new Error('Stack with id prod does not exist'), { name: 'ValidationError' }));

    expect(await ops('dlq', 'stats', '--subscriber', 'bot')).toEqual({
      code: 1,
      stdout: '',
      stderr: `ops: no stack prod in region ${REGION}\n`,
    });
    expect(sentCalls()).toEqual([['cloudformation:DescribeStacks', { StackName: 'prod' }]]);
  });

  it('asks for --subscriber when the stack has several, naming them', async () => {
    expect(await ops('pause')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ops: several subscribers (bot, crm): choose one with --subscriber NAME\n',
    });
    expect(sentCalls()).toEqual(RESOLVE_CALLS);
  });
});

describe('key: one GetItem on the claim table', () => {
  const key = 'msg:wamid.HBgLMTY1MDU1NTEwMDAVAgARGBI2QUNENEI4NjlGNTcxQjdBOUYA';

  it('answers a key with no claim on stdout with exit 3, not as a usage error', async () => {
    documents.on(GetCommand).resolves({});

    const json = await ops('--json', 'key', key, '--subscriber', 'bot');
    expect(json.code).toBe(3);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toEqual({
      found: false,
      key,
      loggedAs: keyedDigest('l'.repeat(64), key),
      subscriber: 'bot',
      tableName: 'prod-claims',
      pk: `bot#${key}`,
      field: 'messages',
      meaning: 'never seen, or expired after the retention',
    });
    const text = await ops('key', key, '--subscriber', 'bot');
    expect(text).toMatchObject({ code: 3, stderr: '' });
    expect(text.stdout).toMatch(/^claim {7}none: never seen, or expired after the retention\n$/m);
    expect(sentCalls().filter(([operation]) => operation.startsWith('dynamodb:'))).toEqual([
      ['dynamodb:Get', { TableName: 'prod-claims', Key: { pk: `bot#${key}` }, ConsistentRead: true }],
      ['dynamodb:Get', { TableName: 'prod-claims', Key: { pk: `bot#${key}` }, ConsistentRead: true }],
    ]);
  });

  it('answers a done claim with exit 0 and found: true', async () => {
    documents.on(GetCommand).resolves({
      Item: { pk: `bot#${key}`, state: 'done', owner: 'o', attempt: 1, expiresAt: 4_000_000_000 },
    });

    const result = await ops('--json', 'key', key, '--subscriber', 'bot');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ found: true, claim: { status: 'done' } });
  });
});

describe('key: the digest the logs hold for it', () => {
  const key = 'msg:wamid.HBgLMTY1MDU1NTEwMDAVAgARGBI2QUNENEI4NjlGNTcxQjdBOUYA';
  const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:LogDigestKey-abc';

  it('prints the keyed digest under the stack’s log digest key, read from its secret', async () => {
    deployedStack({ logDigestSecretArn: secretArn });
    secretsManager
      .on(GetSecretValueCommand, { SecretId: secretArn })
      .resolves({ SecretString: 'k'.repeat(64) });
    documents.on(GetCommand).resolves({});

    const json = await ops('--json', 'key', key, '--subscriber', 'bot');
    expect(JSON.parse(json.stdout)).toMatchObject({
      found: false,
      key,
      loggedAs: keyedDigest('k'.repeat(64), key),
    });
    const text = await ops('key', key, '--subscriber', 'bot');
    expect(text.stdout).toContain(`logged as   ${keyedDigest('k'.repeat(64), key)}`);
    expect(sentCalls().filter(([operation]) => operation.startsWith('secretsmanager:'))).toEqual([
      ['secretsmanager:GetSecretValue', { SecretId: secretArn }],
      ['secretsmanager:GetSecretValue', { SecretId: secretArn }],
    ]);
  });
});

describe('quarantine requeue: only bodies the receiver proved', () => {
  const body = messagesBody(inboundMessages(1, 'pv'));
  const message = (id: string, proof: string | undefined) => ({
    MessageId: id,
    ReceiptHandle: `r-${id}`,
    Body: Buffer.from(body).toString('base64'),
    MessageAttributes: {
      reason: { DataType: 'String', StringValue: 'event-without-id' },
      contentEncoding: { DataType: 'String', StringValue: 'base64' },
      ...(proof === undefined ? {} : { proof: { DataType: 'String', StringValue: proof } }),
    },
  });

  it.each([
    ['without a proof', undefined, 'no proof that the receiver verified it'],
    ['with a proof made under another key', proofOf('a consumer’s guess', body), 'its proof does not hold'],
    ['with a proof of other bytes', proofOf(PROVENANCE_KEY, `${body} `), 'its proof does not hold'],
  ])(
    'refuses a body %s: it stays quarantined, nothing is sent, one line says why',
    async (_case, proof, why) => {
      sqs
        .on(ReceiveMessageCommand)
        .resolvesOnce({ Messages: [message('q1', proof)] })
        .resolves({})
        .on(ChangeMessageVisibilityBatchCommand)
        .resolves({});

      const result = await ops('quarantine', 'requeue', '--all');

      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`q1  stays quarantined: unproven, refused: ${why}`);
      expect(sentCalls().some(([operation]) => operation === 'sqs:SendMessageBatch')).toBe(false);
      expect(sentCalls().some(([operation]) => operation === 'sqs:DeleteMessageBatch')).toBe(false);
    },
  );

  it('requeues a body whose proof holds', async () => {
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message('q1', proofOf(PROVENANCE_KEY, body))] })
      .resolves({})
      .on(ChangeMessageVisibilityBatchCommand)
      .resolves({})
      .on(SendMessageBatchCommand)
      .callsFake((input: { Entries: { Id: string }[] }) => ({
        Successful: input.Entries.map(({ Id }) => ({ Id, MessageId: `s${Id}`, MD5OfMessageBody: '' })),
      }))
      .on(DeleteMessageBatchCommand)
      .resolves({});

    const result = await ops('quarantine', 'requeue', '--all');

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('requeued 1 of 1');
  });
});

describe('pause / resume: each lane’s event source mapping', () => {
  it('disables both lanes’ mappings and waits until Lambda reports each Disabled', async () => {
    lambda
      .on(UpdateEventSourceMappingCommand)
      .resolves({ State: 'Disabling' })
      .on(GetEventSourceMappingCommand)
      .resolvesOnce({ State: 'Disabling' })
      .resolves({ State: 'Disabled' });

    const result = await ops('pause', '--subscriber', 'crm');

    expect(result.code).toBe(0);
    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      ['lambda:UpdateEventSourceMapping', { UUID: 'esm-crm', Enabled: false }],
      ['lambda:UpdateEventSourceMapping', { UUID: 'esm-crm-messages', Enabled: false }],
      ['lambda:GetEventSourceMapping', { UUID: 'esm-crm' }],
      ['lambda:GetEventSourceMapping', { UUID: 'esm-crm' }],
      countsCall('crm-deliveries'),
      ['lambda:GetEventSourceMapping', { UUID: 'esm-crm-messages' }],
      countsCall('crm-messages'),
    ]);
    expect(result.stdout).toBe(
      [
        'status lane of crm paused (Disabled): deliveries wait in its queue (5 waiting, 1 in flight)',
        'message lane of crm paused (Disabled): deliveries wait in its queue (8 waiting, 4 in flight)',
        'undo with the resume command',
        '',
      ].join('\n'),
    );
    expect(result.stderr).toMatch(
      /^crm status lane: Disabling…\ncrm status lane: Disabling…\ncrm message lane: Disabling…\n\{"level":"INFO","message":"ops pause"/,
    );
    expect(JSON.parse(result.stderr.split('\n')[3] ?? '')).toMatchObject({
      subscriber: 'crm',
      lanes: [
        { lane: 'status', state: 'Disabled' },
        { lane: 'message', state: 'Disabled' },
      ],
    });
  });

  it('--lane message switches the message lane’s mapping only', async () => {
    lambda.on(UpdateEventSourceMappingCommand).resolves({ State: 'Enabled' });

    const result = await ops('--json', 'resume', '--lane', 'message', '--subscriber', 'bot');

    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      ['lambda:UpdateEventSourceMapping', { UUID: 'esm-bot-messages', Enabled: true }],
      countsCall('bot-messages.fifo'),
    ]);
    expect(JSON.parse(result.stdout)).toEqual({
      subscriber: 'bot',
      lanes: [{ lane: 'message', state: 'Enabled', queue: { visible: 3, inFlight: 0, delayed: 0 } }],
    });
  });

  it('enables the status lane’s mapping again with --lane status', async () => {
    lambda.on(UpdateEventSourceMappingCommand).resolves({ State: 'Enabled' });

    const result = await ops('resume', '--lane', 'status', '--subscriber', 'bot');

    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      ['lambda:UpdateEventSourceMapping', { UUID: 'esm-bot', Enabled: true }],
      countsCall('bot-deliveries'),
    ]);
    expect(result.stdout).toBe('status lane of bot resumed (Enabled): 9 deliveries in its queue\n');
  });
});

describe('dlq stats: each lane’s DLQ and queue, with its last move task', () => {
  it('reads both lanes of the subscriber', async () => {
    sqs.on(ListMessageMoveTasksCommand).resolves({ Results: [] });

    const result = await ops('--json', 'dlq', 'stats', '--subscriber', 'bot');

    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      countsCall('bot-dlq'),
      countsCall('bot-deliveries'),
      arnCall('bot-dlq'),
      ['sqs:ListMessageMoveTasks', { SourceArn: queueArn(queueUrl('bot-dlq')), MaxResults: 10 }],
      countsCall('bot-messages-dlq.fifo'),
      countsCall('bot-messages.fifo'),
      arnCall('bot-messages-dlq.fifo'),
      [
        'sqs:ListMessageMoveTasks',
        { SourceArn: queueArn(queueUrl('bot-messages-dlq.fifo')), MaxResults: 10 },
      ],
    ]);
    expect(JSON.parse(result.stdout)).toEqual({
      subscriber: 'bot',
      lanes: [
        {
          lane: 'status',
          ordered: false,
          dlq: { visible: 4, inFlight: 0, delayed: 0 },
          queue: { visible: 7, inFlight: 2, delayed: 0 },
        },
        {
          lane: 'message',
          ordered: true,
          dlq: { visible: 2, inFlight: 1, delayed: 0 },
          queue: { visible: 3, inFlight: 0, delayed: 0 },
        },
      ],
    });
  });
});

describe('dlq redrive: an SQS message move task from a lane’s DLQ to the lane’s queue', () => {
  const source = queueArn(queueUrl('bot-dlq'));
  const destination = queueArn(queueUrl('bot-deliveries'));
  const listCall: SentCall = ['sqs:ListMessageMoveTasks', { SourceArn: source, MaxResults: 10 }];
  const startCall: SentCall = [
    'sqs:StartMessageMoveTask',
    { SourceArn: source, DestinationArn: destination },
  ];
  const receiveCall = (maxMessages: number): SentCall => [
    'sqs:ReceiveMessage',
    {
      QueueUrl: queueUrl('bot-dlq'),
      MaxNumberOfMessages: maxMessages,
      WaitTimeSeconds: 1,
      VisibilityTimeout: 60,
      MessageSystemAttributeNames: ['All'],
      // Without them a copy would lose `part`, `parts` and the delivery id.
      MessageAttributeNames: ['All'],
    },
  ];

  it('starts a task and follows it to completion', async () => {
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolvesOnce({
        Results: [{ TaskHandle: 'old', Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 3 }],
      })
      .resolvesOnce({
        Results: [
          {
            TaskHandle: 'task-1',
            Status: 'RUNNING',
            ApproximateNumberOfMessagesMoved: 40,
            ApproximateNumberOfMessagesToMove: 100,
          },
        ],
      })
      .resolves({
        Results: [
          {
            TaskHandle: 'task-1',
            Status: 'COMPLETED',
            ApproximateNumberOfMessagesMoved: 100,
            ApproximateNumberOfMessagesToMove: 100,
          },
        ],
      })
      .on(StartMessageMoveTaskCommand)
      .resolves({ TaskHandle: 'task-1' });

    const result = await ops('dlq', 'redrive', '--lane', 'status', '--subscriber', 'bot');

    expect(result.code).toBe(0);
    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      countsCall('bot-dlq'),
      arnCall('bot-dlq'),
      arnCall('bot-deliveries'),
      listCall,
      startCall,
      listCall,
      listCall,
    ]);
    expect(result.stdout).toBe('redrive of the status lane DLQ of bot: COMPLETED, 100 of 100 moved\n');
    expect(result.stderr).toContain('RUNNING, 40 of 100 moved');
  });

  it('follows a task already running instead of starting a second one', async () => {
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolvesOnce({ Results: [{ TaskHandle: 'running', Status: 'RUNNING', StartedTimestamp: 0 }] })
      .resolves({
        Results: [{ TaskHandle: 'running', Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 5 }],
      });

    const result = await ops('dlq', 'redrive', '--lane', 'status', '--subscriber', 'bot');

    expect(result.code).toBe(0);
    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      countsCall('bot-dlq'),
      arnCall('bot-dlq'),
      arnCall('bot-deliveries'),
      listCall,
      listCall,
    ]);
    expect(result.stderr).toContain(
      'a redrive of the status lane DLQ is already running (started 1970-01-01T00:00:00.000Z)',
    );
  });

  it('reports a failed task in one line, exit 1', async () => {
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolvesOnce({ Results: [] })
      .resolves({
        Results: [
          {
            TaskHandle: 'task-2',
            Status: 'FAILED',
            FailureReason: 'AWS.SimpleQueueService.NonExistentQueue',
          },
        ],
      })
      .on(StartMessageMoveTaskCommand)
      .resolves({ TaskHandle: 'task-2' });

    const result = await ops('dlq', 'redrive', '--lane', 'status', '--subscriber', 'bot');

    expect(result.code).toBe(1);
    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      countsCall('bot-dlq'),
      arnCall('bot-dlq'),
      arnCall('bot-deliveries'),
      listCall,
      startCall,
      listCall,
    ]);
    expect(result.stderr).toMatch(
      /^ops: the move task of the status lane DLQ ended FAILED: AWS\.SimpleQueueService\.NonExistentQueue\n$/m,
    );
  });

  it('with --max moves that many records itself (a move task cannot stop after N), deleting only stored copies', async () => {
    const message = (n: number) => ({
      MessageId: `m${n}`,
      ReceiptHandle: `r${n}`,
      Body: `{"n":${n}}`,
      MessageAttributes: { part: { DataType: 'Number', StringValue: '1', StringListValues: [] } },
    });
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message(1), message(2)] })
      .resolves({})
      .on(SendMessageBatchCommand)
      .resolves({
        Successful: [{ Id: '0', MessageId: 'copy-1', MD5OfMessageBody: '' }],
        Failed: [{ Id: '1', Code: 'InternalError', SenderFault: false }],
      })
      .on(DeleteMessageBatchCommand)
      .resolves({ Successful: [{ Id: '0' }] });

    const result = await ops('dlq', 'redrive', '--lane', 'status', '--max', '2', '--subscriber', 'bot');

    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      receiveCall(2),
      [
        'sqs:SendMessageBatch',
        {
          QueueUrl: queueUrl('bot-deliveries'),
          Entries: [
            {
              Id: '0',
              MessageBody: '{"n":1}',
              MessageAttributes: { part: { DataType: 'Number', StringValue: '1' } },
            },
            {
              Id: '1',
              MessageBody: '{"n":2}',
              MessageAttributes: { part: { DataType: 'Number', StringValue: '1' } },
            },
          ],
        },
      ],
      [
        'sqs:DeleteMessageBatch',
        { QueueUrl: queueUrl('bot-dlq'), Entries: [{ Id: '0', ReceiptHandle: 'r1' }] },
      ],
      receiveCall(1),
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('not moved: m2 (InternalError), left in the DLQ');
  });
  it('moves a FIFO lane’s DLQ with a move task too (SQS redrives a FIFO DLQ into a FIFO queue)', async () => {
    const fifoSource = queueArn(queueUrl('bot-messages-dlq.fifo'));
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolvesOnce({ Results: [] })
      .resolves({
        Results: [{ TaskHandle: 'task-3', Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 3 }],
      })
      .on(StartMessageMoveTaskCommand)
      .resolves({ TaskHandle: 'task-3' });

    const result = await ops('dlq', 'redrive', '--lane', 'message', '--subscriber', 'bot');

    expect(result.code).toBe(0);
    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      countsCall('bot-messages-dlq.fifo'),
      arnCall('bot-messages-dlq.fifo'),
      arnCall('bot-messages.fifo'),
      ['sqs:ListMessageMoveTasks', { SourceArn: fifoSource, MaxResults: 10 }],
      [
        'sqs:StartMessageMoveTask',
        { SourceArn: fifoSource, DestinationArn: queueArn(queueUrl('bot-messages.fifo')) },
      ],
      ['sqs:ListMessageMoveTasks', { SourceArn: fifoSource, MaxResults: 10 }],
    ]);
    expect(result.stdout).toBe('redrive of the message lane DLQ of bot: COMPLETED, 3 moved\n');
  });

  it('without --lane redrives each lane, and leaves an empty DLQ alone', async () => {
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolvesOnce({ Results: [] })
      .resolves({
        Results: [{ TaskHandle: 'task-4', Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 6 }],
      })
      .on(StartMessageMoveTaskCommand)
      .resolves({ TaskHandle: 'task-4' });

    const result = await ops('--json', 'dlq', 'redrive', '--subscriber', 'crm');

    const source = queueArn(queueUrl('crm-dlq'));
    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      countsCall('crm-dlq'),
      arnCall('crm-dlq'),
      arnCall('crm-deliveries'),
      ['sqs:ListMessageMoveTasks', { SourceArn: source, MaxResults: 10 }],
      [
        'sqs:StartMessageMoveTask',
        { SourceArn: source, DestinationArn: queueArn(queueUrl('crm-deliveries')) },
      ],
      ['sqs:ListMessageMoveTasks', { SourceArn: source, MaxResults: 10 }],
      countsCall('crm-messages-dlq'),
    ]);
    expect(JSON.parse(result.stdout)).toEqual({
      subscriber: 'crm',
      lanes: [
        {
          lane: 'status',
          method: 'message-move-task',
          task: {
            taskHandle: 'task-4',
            status: 'COMPLETED',
            moved: 6,
            toMove: undefined,
            failureReason: undefined,
            startedAt: undefined,
          },
        },
        { lane: 'message', method: 'none', moved: 0 },
      ].map((lane) => JSON.parse(JSON.stringify(lane))),
    });
  });

  it('with --max copies a FIFO lane’s records in their conversation’s group, with a fresh deduplication id and without the consumer’s mark', async () => {
    const record = (n: number, group: string) => ({
      MessageId: `dlq-m${n}`,
      ReceiptHandle: `r${n}`,
      Body: `{"n":${n}}`,
      Attributes: { MessageGroupId: group, MessageDeduplicationId: `lane-m${n}`, SentTimestamp: '1' },
      MessageAttributes: {
        deliveryId: { DataType: 'String', StringValue: 'd1', StringListValues: [] },
        deadLetteredBy: { DataType: 'String', StringValue: 'consumer' },
      },
    });
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [record(1, 'g-a'), record(2, 'g-b')] })
      .resolves({})
      .on(SendMessageBatchCommand)
      .callsFake((input: { Entries: { Id: string }[] }) => ({
        Successful: input.Entries.map(({ Id }) => ({ Id, MessageId: `c${Id}`, MD5OfMessageBody: '' })),
      }))
      .on(DeleteMessageBatchCommand)
      .resolves({ Successful: [{ Id: '0' }, { Id: '1' }] });

    const result = await ops('dlq', 'redrive', '--lane', 'message', '--max', '5', '--subscriber', 'bot');

    expect(result.code).toBe(0);
    const dlq = queueUrl('bot-messages-dlq.fifo');
    const receive = (maxMessages: number): SentCall => [
      'sqs:ReceiveMessage',
      {
        QueueUrl: dlq,
        MaxNumberOfMessages: maxMessages,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 60,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      },
    ];
    const copy = (n: number, group: string) => ({
      Id: String(n - 1),
      MessageBody: `{"n":${n}}`,
      MessageAttributes: { deliveryId: { DataType: 'String', StringValue: 'd1' } },
      MessageGroupId: group,
      // Not the lane's `lane-m…` (SQS would drop a copy within 5 minutes of the original): the DLQ message's id.
      MessageDeduplicationId: `dlq-m${n}`,
    });
    expect(sentCalls()).toEqual([
      ...RESOLVE_CALLS,
      receive(5),
      [
        'sqs:SendMessageBatch',
        { QueueUrl: queueUrl('bot-messages.fifo'), Entries: [copy(1, 'g-a'), copy(2, 'g-b')] },
      ],
      [
        'sqs:DeleteMessageBatch',
        {
          QueueUrl: dlq,
          Entries: [
            { Id: '0', ReceiptHandle: 'r1' },
            { Id: '1', ReceiptHandle: 'r2' },
          ],
        },
      ],
      receive(3),
    ]);
    expect(result.stdout).toBe('moved 2 records from the message lane DLQ of bot to its queue\n');
    expect(result.stdout + result.stderr).not.toMatch(/g-a|g-b/);
  });
});

describe('replay: the archive read from S3, the claims looked up, the deliveries sent to one subscriber', () => {
  const wamid = 'wamid.HBgLMTY1MDU1NTEwMDAVAgARGBI2QUNENEI4NjlGNTcxQjdBOUYA';
  const body = messagesBody(inboundMessagesWithIds([wamid]));

  beforeEach(() => {
    vi.stubEnv('XDG_CACHE_HOME', mkdtempSync(join(tmpdir(), 'ops-replay-cache-')));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('sends an archived message to the subscriber’s message lane only, in a replay group of its own', async () => {
    const { key } = archivedDelivery(body);
    documents.on(BatchGetCommand).resolves({});
    sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => ({
      Successful: input.Entries.map(({ Id }) => ({ Id, MessageId: `s${Id}`, MD5OfMessageBody: '' })),
    }));

    const result = await ops('--json', 'replay', '--since', '-1d', '--subscriber', 'bot');

    expect(result.code).toBe(0);
    const calls = sentCalls().slice(RESOLVE_CALLS.length);
    expect(calls[0]).toEqual(['s3:GetBucketLifecycleConfiguration', { Bucket: 'prod-archive' }]);
    expect(calls.filter(([operation]) => operation === 's3:ListObjectsV2')).toHaveLength(26);
    expect(calls.filter(([operation]) => operation !== 's3:ListObjectsV2').slice(1)).toEqual([
      ['secretsmanager:GetSecretValue', { SecretId: PROVENANCE_SECRET }],
      ['s3:GetObject', { Bucket: 'prod-archive', Key: key }],
      [
        'dynamodb:BatchGet',
        { RequestItems: { 'prod-claims': { Keys: [{ pk: `bot#msg:${wamid}` }], ConsistentRead: true } } },
      ],
      ['sqs:SendMessageBatch', expect.objectContaining({ QueueUrl: queueUrl('bot-messages.fifo') })],
    ]);
    const [, send] = calls.at(-1) as SentCall;
    const entry = (send as { Entries: Record<string, unknown>[] }).Entries[0];
    expect(entry?.MessageGroupId).toMatch(/^replay:\d+:\d+$/);
    expect(entry?.MessageBody).toContain(wamid);
    // The part sent carries its own proof, as the receiver's parts do.
    const attributes = (entry?.MessageAttributes ?? {}) as Record<string, { StringValue?: string }>;
    const proof = attributes.proof?.StringValue;
    expect(proofHolds(PROVENANCE_KEY, String(entry?.MessageBody), proof)).toBe(true);
    expect(JSON.parse(result.stdout)).toMatchObject({
      subscriber: 'bot',
      complete: true,
      archiveObjects: 1,
      deliveries: { read: 1, sent: 1, quarantined: 0, notForSubscriber: 0 },
      keys: { total: 1, done: 0, inFlight: 0, notDone: 1, forgotten: 0 },
    });
    expect(result.stderr).toMatch(/"message":"ops replay".*"complete":true/);
  });

  it('refuses an archived delivery without the receiver’s proof: counted, named, never sent', async () => {
    archivedDelivery(body, 3_600_000, { proven: false });
    documents.on(BatchGetCommand).resolves({});

    const result = await ops('--json', 'replay', '--since', '-1d', '--subscriber', 'bot');

    expect(result.code).toBe(0);
    expect(sentCalls().some(([operation]) => operation === 'sqs:SendMessageBatch')).toBe(false);
    expect(JSON.parse(result.stdout)).toMatchObject({ deliveries: { read: 1, sent: 0, refused: 1 } });
    expect(result.stderr).toContain('refused delivery api-1');
    expect(result.stderr).toContain('no proof that the receiver verified it');
  });

  it('refuses a range older than the bucket keeps its objects, before reading the archive', async () => {
    archivedDelivery(body);

    const result = await ops('replay', '--since', '-31d', '--subscriber', 'bot');

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^ops: --since \S+ is outside the archive's retention of 30 days .*\n$/);
    expect(
      sentCalls()
        .slice(RESOLVE_CALLS.length)
        .map(([operation]) => operation),
    ).toEqual(['s3:GetBucketLifecycleConfiguration']);
  });

  it('refuses a stack deployed without an archive, exit 1', async () => {
    deployedStack({ archive: false });

    const result = await ops('replay', '--since', '-1d', '--subscriber', 'bot');

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `ops: stack prod (${REGION}) has no delivery archive: replay reads the archive the receiver writes (deploy this version of the construct)\n`,
    });
  });
});

/** A Graph API answering as Meta's pages show (fake-graph-api.ts), for `meta`; META_GRAPH_URL points ops at it. */
let graph: FakeGraphApi | undefined;
async function metaGraph(): Promise<void> {
  graph = await FakeGraphApi.start({ token: META_TOKEN, appIds: [APP_ID], wabaIds: [] });
  vi.stubEnv(META_ENV.graphUrl, graph.url);
  vi.stubEnv(META_ENV.accessToken, META_TOKEN);
}
afterEach(async () => {
  await graph?.stop();
  graph = undefined;
  vi.unstubAllEnvs();
});

/** The webhook secret as the operator stores it (docs/deploy.md), and a Meta token in a secret of its own. */
function storedSecrets(): void {
  secretsManager
    .on(GetSecretValueCommand, { SecretId: WEBHOOK_SECRET })
    .resolves({ SecretString: JSON.stringify({ appSecrets: [APP_SECRET], verifyToken: VERIFY_TOKEN }) })
    .on(GetSecretValueCommand, { SecretId: TOKEN_SECRET })
    .resolves({ SecretString: JSON.stringify({ accessToken: META_TOKEN }) });
}

/** What the deployment for meta and smoke reads before its command: the outputs again, by its own client. */
const DEPLOYMENT_CALL: SentCall = ['cloudformation:DescribeStacks', { StackName: 'prod' }];
const webhookSecretCall: SentCall = ['secretsmanager:GetSecretValue', { SecretId: WEBHOOK_SECRET }];
const tokenSecretCall: SentCall = ['secretsmanager:GetSecretValue', { SecretId: TOKEN_SECRET }];

describe('meta subscribe / status: the webhook URL from the outputs, the verify token and a token secret from Secrets Manager', () => {
  beforeEach(async () => {
    storedSecrets();
    await metaGraph();
  });

  it('subscribe reads the outputs and the webhook secret; with --token-secret the token’s secret first', async () => {
    const fromEnvironment = await ops('--json', 'meta', 'subscribe', '--app-id', APP_ID);

    expect(fromEnvironment.code).toBe(0);
    expect(JSON.parse(fromEnvironment.stdout)).toMatchObject({ appId: APP_ID, callbackUrl: webhookUrl });
    expect(sentCalls()).toEqual([...RESOLVE_CALLS, DEPLOYMENT_CALL, webhookSecretCall]);

    for (const [, mock] of MOCKS) mock.reset();
    deployedStack();
    storedSecrets();
    const fromSecret = await ops('meta', 'subscribe', '--app-id', APP_ID, '--token-secret', TOKEN_SECRET);

    expect(fromSecret.code).toBe(0);
    expect(sentCalls()).toEqual([...RESOLVE_CALLS, DEPLOYMENT_CALL, tokenSecretCall, webhookSecretCall]);
    expect(graph?.requests.map(({ authorization }) => authorization)).toContain(`Bearer ${META_TOKEN}`);
  });

  it('status reads the outputs only (no verify token needed); with --token-secret the token’s secret', async () => {
    await ops('meta', 'subscribe', '--app-id', APP_ID);
    for (const [, mock] of MOCKS) mock.reset();
    deployedStack();
    storedSecrets();

    const fromEnvironment = await ops('--json', 'meta', 'status', '--app-id', APP_ID);

    expect(fromEnvironment.code).toBe(0);
    expect(JSON.parse(fromEnvironment.stdout)).toMatchObject({ ok: true, webhookUrl });
    expect(sentCalls()).toEqual([...RESOLVE_CALLS, DEPLOYMENT_CALL]);

    for (const [, mock] of MOCKS) mock.reset();
    deployedStack();
    storedSecrets();
    const fromSecret = await ops('meta', 'status', '--app-id', APP_ID, '--token-secret', TOKEN_SECRET);

    expect(fromSecret.code).toBe(0);
    expect(sentCalls()).toEqual([...RESOLVE_CALLS, DEPLOYMENT_CALL, tokenSecretCall]);
  });
});

/** The stack's alarm resources (and a queue, which is no alarm), and their states. */
const ALARM_NAMES = ['prod-BotDlqAlarm-1', 'prod-ReceiverErrorsAlarm-2'];
function stackAlarms(): void {
  cloudFormation.on(ListStackResourcesCommand, { StackName: 'prod' }).resolves({
    StackResourceSummaries: [
      ...ALARM_NAMES.map((name) => ({
        LogicalResourceId: name.split('-')[1],
        PhysicalResourceId: name,
        ResourceType: 'AWS::CloudWatch::Alarm',
        ResourceStatus: 'CREATE_COMPLETE' as const,
        LastUpdatedTimestamp: new Date(0),
      })),
      {
        LogicalResourceId: 'Quarantine',
        PhysicalResourceId: queueUrl('quarantine'),
        ResourceType: 'AWS::SQS::Queue',
        ResourceStatus: 'CREATE_COMPLETE',
        LastUpdatedTimestamp: new Date(0),
      },
    ],
  });
  cloudWatch.on(DescribeAlarmsCommand).resolves({
    MetricAlarms: ALARM_NAMES.map((AlarmName) => ({
      AlarmName,
      StateValue: 'OK' as const,
      StateReason: 'r',
    })),
  });
}

/** Every claim smoke asks for, done as soon as it asks. */
function doneClaims(): void {
  documents
    .on(BatchGetCommand)
    .callsFake((input: { RequestItems: Record<string, { Keys: { pk: string }[] }> }) => ({
      Responses: {
        'prod-claims': (input.RequestItems['prod-claims']?.Keys ?? []).map(({ pk }) => ({
          pk,
          state: 'done',
          owner: 'o',
          attempt: 1,
          doneAt: Date.now(),
          expiresAt: 4_000_000_000,
        })),
      },
    }));
}

describe('smoke: the outputs, the webhook secret, the claims of both events, the stack’s alarms', () => {
  beforeEach(() => {
    storedSecrets();
    stackAlarms();
    doneClaims();
    webhookPosts.length = 0;
  });

  it('signs with the stack’s app secret, reads every receiving subscriber’s claims in one BatchGetItem, then the alarms', async () => {
    const result = await ops('--json', 'smoke');

    expect(result.code).toBe(0);
    expect(webhookPosts).toEqual([true]);
    const calls = sentCalls();
    const [, read] = calls[RESOLVE_CALLS.length + 2] as SentCall;
    const firstPk = (read as { RequestItems: Record<string, { Keys: { pk: string }[] }> }).RequestItems[
      'prod-claims'
    ]?.Keys[0]?.pk;
    const wamid = /^bot#msg:(wamid\.SMOKE_TEST\.\d+-[0-9a-f]{12})$/.exec(firstPk ?? '')?.[1];
    expect(wamid, firstPk).toBeDefined();
    // bot (fields: messages) and crm (every field), each in its namespace: the message, then the status.
    const keys = ['bot', 'crm-v2'].flatMap((namespace) => [
      { pk: `${namespace}#msg:${wamid}` },
      { pk: `${namespace}#st:${wamid}.reply:delivered` },
    ]);
    expect(calls).toEqual([
      ...RESOLVE_CALLS,
      DEPLOYMENT_CALL,
      webhookSecretCall,
      ['dynamodb:BatchGet', { RequestItems: { 'prod-claims': { Keys: keys, ConsistentRead: true } } }],
      ['cloudformation:ListStackResources', { StackName: 'prod' }],
      [
        'cloudwatch:DescribeAlarms',
        { AlarmNames: ALARM_NAMES, AlarmTypes: ['MetricAlarm', 'CompositeAlarm'], MaxRecords: 100 },
      ],
    ]);
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: true,
      webhookUrl,
      alarms: ALARM_NAMES.map((name) => ({ name, state: 'OK' })),
    });
  });

  it('a stack whose secret holds no app secret yet: nothing posted, no claim read, exit 1', async () => {
    secretsManager
      .on(GetSecretValueCommand, { SecretId: WEBHOOK_SECRET })
      .resolves({ SecretString: JSON.stringify({ appSecrets: [], verifyToken: VERIFY_TOKEN }) });

    const result = await ops('smoke');

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ops: stack prod has no app secret stored yet/);
    expect(webhookPosts).toEqual([]);
    expect(sentCalls()).toEqual([...RESOLVE_CALLS, DEPLOYMENT_CALL, webhookSecretCall]);
  });
});

describe('the AWS permissions table of docs/operations.md', () => {
  const PAGE = 'docs/operations.md';
  const REGION_NAME = 'ops-permissions';
  const wamid = 'wamid.HBgLMTY1MDU1NTEwMDAVAgARGBI2QUNENEI4NjlGNTcxQjdBOUYA';
  const doneClaim = (pk: string) => ({
    pk,
    state: 'done',
    owner: 'm1',
    field: 'messages',
    claimedAt: 1,
    doneAt: 2,
    attempt: 1,
    messageId: 'm1',
    expiresAt: 4_000_000_000,
  });
  const dlqMessage = {
    MessageId: 'd1',
    ReceiptHandle: 'rd1',
    Body: messagesBody(inboundMessagesWithIds([wamid])),
  };
  const quarantined = (id: string, body: string) => ({
    MessageId: id,
    ReceiptHandle: `r-${id}`,
    Body: body,
    MessageAttributes: {
      reason: { DataType: 'String', StringValue: 'invalid-json' },
      proof: { DataType: 'String', StringValue: proofOf(PROVENANCE_KEY, body) },
    },
  });
  const statusFile = join(tmpdir(), `ops-permissions-${process.pid}.json`);
  writeFileSync(
    statusFile,
    // Two events: one key is read with GetItem, several with BatchGetItem.
    statusesBody(
      (['delivered', 'read'] as const).map((status) => ({
        id: wamid,
        status,
        recipientId: '16505551000',
        timestamp: '1750000000',
      })),
    ),
  );
  const receivesOnce = (...messages: object[]) =>
    sqs.on(ReceiveMessageCommand).resolvesOnce({ Messages: messages }).resolves({});

  /** Every command, in every branch that makes other calls; the label is the row of the table. */
  const scenarios: readonly { label: string; args: string[]; arrange: () => void }[] = [
    { label: '`key`', args: ['key', `msg:${wamid}`], arrange: () => documents.on(GetCommand).resolves({}) },
    {
      label: '`key`',
      args: ['key', `st:${wamid}:read`],
      arrange: () => documents.on(GetCommand).resolves({}),
    },
    {
      label: '`keys`',
      args: ['keys', '--file', statusFile],
      arrange: () => documents.on(BatchGetCommand).resolves({}).on(GetCommand).resolves({}),
    },
    {
      label: '`forget`',
      args: ['forget', `msg:${wamid}`, '--yes'],
      arrange: () =>
        documents
          .on(GetCommand)
          .resolves({ Item: doneClaim(`bot#msg:${wamid}`) })
          .on(DeleteCommand)
          .resolves({}),
    },
    {
      label: '`forget`',
      args: ['forget', `msg:${wamid}`, '--yes'],
      arrange: () =>
        documents
          .on(GetCommand)
          .resolves({ Item: doneClaim(`bot#msg:${wamid}`) })
          .on(DeleteCommand)
          .rejects(Object.assign(new Error('changed'), { name: 'ConditionalCheckFailedException' })),
    },
    {
      label: '`pause`',
      args: ['pause'],
      arrange: () =>
        lambda
          .on(UpdateEventSourceMappingCommand)
          .resolves({ State: 'Disabling' })
          .on(GetEventSourceMappingCommand)
          .resolves({ State: 'Disabled' }),
    },
    {
      label: '`resume`',
      args: ['resume'],
      arrange: () =>
        lambda
          .on(UpdateEventSourceMappingCommand)
          .resolves({ State: 'Enabling' })
          .on(GetEventSourceMappingCommand)
          .resolves({ State: 'Enabled' }),
    },
    {
      label: '`dlq stats`',
      args: ['dlq', 'stats'],
      arrange: () => sqs.on(ListMessageMoveTasksCommand).resolves({ Results: [] }),
    },
    {
      label: '`dlq peek`',
      args: ['dlq', 'peek'],
      arrange: () => {
        receivesOnce(dlqMessage).on(ChangeMessageVisibilityBatchCommand).resolves({});
        documents.on(BatchGetCommand).resolves({});
      },
    },
    {
      label: '`dlq redrive`',
      args: ['dlq', 'redrive'],
      arrange: () =>
        sqs
          .on(ListMessageMoveTasksCommand)
          .resolvesOnce({ Results: [] })
          .resolves({ Results: [{ TaskHandle: 't', Status: 'COMPLETED' }] })
          .on(StartMessageMoveTaskCommand)
          .resolves({ TaskHandle: 't' }),
    },
    {
      label: '`dlq redrive --max N`',
      args: ['dlq', 'redrive', '--max', '2'],
      arrange: () =>
        sqs
          .on(ReceiveMessageCommand)
          .resolves({})
          .on(ReceiveMessageCommand, { QueueUrl: queueUrl('bot-dlq') })
          .resolvesOnce({ Messages: [dlqMessage] })
          .resolves({})
          .on(ReceiveMessageCommand, { QueueUrl: queueUrl('bot-messages-dlq.fifo') })
          .resolvesOnce({ Messages: [{ ...dlqMessage, Attributes: { MessageGroupId: 'g' } }] })
          .resolves({})
          .on(SendMessageBatchCommand)
          .resolves({ Successful: [{ Id: '0', MessageId: 'c', MD5OfMessageBody: '' }] })
          .on(DeleteMessageBatchCommand)
          .resolves({}),
    },
    {
      label: '`quarantine list`',
      args: ['quarantine', 'list'],
      arrange: () =>
        receivesOnce(quarantined('q1', '{')).on(ChangeMessageVisibilityBatchCommand).resolves({}),
    },
    {
      label: '`quarantine show`',
      args: ['quarantine', 'show', 'q1'],
      arrange: () =>
        receivesOnce(quarantined('q1', '{')).on(ChangeMessageVisibilityBatchCommand).resolves({}),
    },
    {
      label: '`quarantine requeue`',
      // One body the receiver takes (sent to both subscribers, deleted), one it would quarantine again (released).
      args: ['quarantine', 'requeue', '--all'],
      arrange: () =>
        receivesOnce(quarantined('q1', dlqMessage.Body), quarantined('q2', '{'))
          .on(ChangeMessageVisibilityBatchCommand)
          .resolves({})
          .on(SendMessageBatchCommand)
          .callsFake((input: { Entries: { Id: string }[] }) => ({
            Successful: input.Entries.map(({ Id }) => ({ Id, MessageId: `s${Id}`, MD5OfMessageBody: '' })),
          }))
          .on(DeleteMessageBatchCommand)
          .resolves({}),
    },
    {
      label: '`replay`',
      args: ['replay', '--since', '-1d'],
      arrange: () => {
        archivedDelivery(dlqMessage.Body);
        documents.on(BatchGetCommand).resolves({});
        sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => ({
          Successful: input.Entries.map(({ Id }) => ({ Id, MessageId: `s${Id}`, MD5OfMessageBody: '' })),
        }));
      },
    },
    {
      label: '`replay --rerun`',
      args: ['replay', '--since', '-1d', '--rerun', '--yes'],
      arrange: () => {
        archivedDelivery(dlqMessage.Body);
        documents
          .on(BatchGetCommand)
          .resolves({ Responses: { 'prod-claims': [doneClaim(`bot#msg:${wamid}`)] } })
          .on(DeleteCommand)
          .resolves({});
        sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => ({
          Successful: input.Entries.map(({ Id }) => ({ Id, MessageId: `s${Id}`, MD5OfMessageBody: '' })),
        }));
      },
    },
    // meta and smoke: the Graph API and the webhook are local servers; only their AWS calls are listed.
    { label: '`meta subscribe`', args: ['meta', 'subscribe', '--app-id', APP_ID], arrange: storedSecrets },
    {
      label: '`meta subscribe`',
      args: ['meta', 'subscribe', '--app-id', APP_ID, '--token-secret', TOKEN_SECRET],
      arrange: storedSecrets,
    },
    { label: '`meta status`', args: ['meta', 'status', '--app-id', APP_ID], arrange: storedSecrets },
    {
      label: '`meta status`',
      args: ['meta', 'status', '--app-id', APP_ID, '--token-secret', TOKEN_SECRET],
      arrange: storedSecrets,
    },
    {
      label: '`smoke`',
      args: ['smoke'],
      arrange: () => {
        storedSecrets();
        stackAlarms();
        doneClaims();
      },
    },
  ];

  it('lists exactly the calls each command makes, on the resources it makes them on', async () => {
    await metaGraph();
    vi.stubEnv('XDG_CACHE_HOME', mkdtempSync(join(tmpdir(), 'ops-permissions-cache-')));
    const rows = new Map<string, SentCall[]>();
    for (const scenario of scenarios) {
      for (const [, mock] of MOCKS) mock.reset();
      deployedStack();
      scenario.arrange();
      const result = await ops(...scenario.args, '--subscriber', 'bot');
      expect(result.stderr, scenario.args.join(' ')).not.toMatch(/TypeError|undefined/);
      if (scenario.label.startsWith('`meta') || scenario.label === '`smoke`') {
        expect(result, scenario.args.join(' ')).toMatchObject({ code: 0 });
      }
      const calls = sentCalls();
      expect(calls.slice(0, RESOLVE_CALLS.length)).toEqual(RESOLVE_CALLS);
      rows.set('every command with `--stack`', RESOLVE_CALLS);
      rows.set(scenario.label, [...(rows.get(scenario.label) ?? []), ...calls.slice(RESOLVE_CALLS.length)]);
    }
    const table = permissionsTable(rows);
    const page = readFileSync(PAGE, 'utf8');
    if (process.env.WRITE_DOCS === '1') writeFileSync(PAGE, replaceRegion(page, REGION_NAME, table));
    expect(readRegion(page, REGION_NAME)).toBe(table);
  });
});

/** Resources in the order the table names them. */
const RESOURCES = [
  'the stack',
  "the stack's alarms",
  'the webhook secret',
  'the provenance key secret',
  'the log digest key secret',
  'the `--token-secret` secret',
  "each subscriber's status lane consumer function",
  "each lane's event source mapping",
  'the claim table',
  'the archive bucket',
  "each lane's DLQ",
  "each lane's queue",
  "every subscriber's lane queues",
  'the quarantine queue',
] as const;
type Resource = (typeof RESOURCES)[number];

/** The IAM action of an operation (docs: Service Authorization Reference). */
function iamAction(operation: string): string {
  const [service, name = ''] = operation.split(':');
  if (service === 'dynamodb') {
    // The DocumentClient's commands, by the DynamoDB operation they send.
    const actions: Record<string, string> = {
      Get: 'GetItem',
      BatchGet: 'BatchGetItem',
      Delete: 'DeleteItem',
    };
    const action = actions[name];
    if (action === undefined) throw new Error(`No IAM action known for ${operation}: add it here.`);
    return `dynamodb:${action}`;
  }
  if (service === 's3') {
    // ListObjectsV2 is authorized as s3:ListBucket, the lifecycle read as s3:GetLifecycleConfiguration.
    const actions: Record<string, string> = {
      ListObjectsV2: 'ListBucket',
      GetObject: 'GetObject',
      GetBucketLifecycleConfiguration: 'GetLifecycleConfiguration',
    };
    const action = actions[name];
    if (action === undefined) throw new Error(`No IAM action known for ${operation}: add it here.`);
    return `s3:${action}`;
  }
  // SQS authorizes SendMessageBatch, DeleteMessageBatch and ChangeMessageVisibilityBatch by the single action.
  return service === 'sqs' ? operation.replace(/Batch$/, '') : operation;
}

/**
 * The queue names of deployedStack(): `<subscriber>-deliveries|dlq` (status lane), `<subscriber>-messages|
 * messages-dlq` (message lane, `.fifo` when ordered). Both lanes of a subscriber need the same actions.
 */
function queueResource(urlOrArn: string): Resource {
  const name = (urlOrArn.split(/[/:]/).pop() ?? '').replace(/\.fifo$/, '');
  if (name === 'quarantine') return 'the quarantine queue';
  if (name.endsWith('-dlq')) return "each lane's DLQ";
  if (name.endsWith('-messages') || name.endsWith('-deliveries')) return "each lane's queue";
  throw new Error(`Unknown queue ${urlOrArn}`);
}

function permissionsOf(calls: readonly SentCall[]): Map<Resource, Set<string>> {
  const found = new Map<Resource, Set<string>>();
  const laneQueueOwners = new Set<string>();
  const grant = (resource: Resource, action: string) =>
    found.set(resource, (found.get(resource) ?? new Set()).add(action));
  for (const [operation, input] of calls) {
    const queue = (input.QueueUrl ?? input.SourceArn) as string | undefined;
    let resource: Resource;
    if ('StackName' in input) resource = 'the stack';
    else if ('AlarmNames' in input) resource = "the stack's alarms";
    else if ('SecretId' in input)
      resource =
        input.SecretId === WEBHOOK_SECRET
          ? 'the webhook secret'
          : input.SecretId === PROVENANCE_SECRET
            ? 'the provenance key secret'
            : input.SecretId === LOG_DIGEST_SECRET
              ? 'the log digest key secret'
              : 'the `--token-secret` secret';
    else if ('FunctionName' in input) resource = "each subscriber's status lane consumer function";
    else if ('UUID' in input) resource = "each lane's event source mapping";
    else if ('TableName' in input || 'RequestItems' in input) resource = 'the claim table';
    else if ('Bucket' in input) resource = 'the archive bucket';
    else if (queue !== undefined) resource = queueResource(queue);
    else throw new Error(`No resource known for ${operation} ${JSON.stringify(input)}`);
    if (queue !== undefined && resource === "each lane's queue") {
      laneQueueOwners.add(queue.split(/[/:]/).pop()?.split('-')[0] ?? '');
    }
    grant(resource, iamAction(operation));
    if (operation === 'sqs:StartMessageMoveTask') {
      // The task moves the messages with the caller's permissions (SQS Developer Guide, "Configure queue
      // permissions for dead-letter queue redrive").
      for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'])
        grant(resource, action);
      for (const action of ['sqs:SendMessage', 'sqs:GetQueueAttributes'])
        grant(queueResource(input.DestinationArn as string), action);
    }
  }
  const laneQueues = found.get("each lane's queue");
  if (laneQueues !== undefined && laneQueueOwners.size > 1) {
    found.delete("each lane's queue");
    found.set("every subscriber's lane queues", laneQueues);
  }
  return found;
}

function permissionsTable(rows: ReadonlyMap<string, readonly SentCall[]>): string {
  const lines = [...rows].map(([label, calls]) => {
    const permissions = permissionsOf(calls);
    const cell = RESOURCES.flatMap((resource) => {
      const actions = permissions.get(resource);
      return actions === undefined
        ? []
        : [
            `${[...actions]
              .sort()
              .map((action) => `\`${action}\``)
              .join(', ')} on ${resource}`,
          ];
    }).join('; ');
    return [label, cell] as const;
  });
  const header = ['command', 'AWS permissions (IAM actions, on the resources they act on)'] as const;
  const width = [0, 1].map((column) =>
    Math.max(...[header, ...lines].map((line) => line[column as 0 | 1].length)),
  );
  const row = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(width[column] ?? 0)).join(' | ')} |`;
  return [row(header), row(width.map((w) => '-'.repeat(w))), ...lines.map(row)].join('\n');
}
