/**
 * `npm run ops -- …` against the local stack as `npm start` runs it, with two subscribers (bot: `messages`
 * only, crm: every field; test/support/local-subscribers/two-subscribers.ts): every command's exit code,
 * stdout and stderr, and what it changed in the stack. The commands run in this process; the first test runs
 * the CLI through npm as a user does.
 */

import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaimStore } from '../../../functions/claims/claim-store.ts';
import { proofOf } from '../../../functions/commons/provenance.ts';
import { SqsConversationDeadLetters } from '../../../functions/queue/sqs-conversation-dead-letters.ts';
import { SqsQuarantineQueue } from '../../../functions/queue/sqs-quarantine-queue.ts';
import { type OpsRun, opsInProcess } from '../../../test/support/ops-in-process.ts';
import { spawnTestStack } from '../../../test/support/test-local-stack.ts';
import { PAUSE_TEST_TIMEOUT_MS, waitFor } from '../../../test/support/wait-for.ts';
import { keysOfBody } from '../../../test/support/webhooks/event-keys.ts';
import type { LocalInfo } from '../../local/local-stack-api.ts';
import { readQueueCounts } from '../../local/queue-counts.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import type { SpawnedLocalStack } from '../../local/stack/spawn-local-stack.ts';
import {
  envelope,
  inboundMessagesWithIds,
  messagesChange,
  PHONE_NUMBER_ID,
  statusesBody,
  wamidFactory,
} from '../../meta-traffic/webhook-bodies.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const SECRET = 'ops-e2e-app-secret';
const SDK_WARNING_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
const ACCOUNT_UPDATE = 'test/fixtures/webhooks/account_update.json';
const wamid = wamidFactory('ops');

let stack: SpawnedLocalStack;
let client: LocalStackClient;
let info: LocalInfo;
let sqs: SQSClient;
let dynamodb: DynamoDBClient;

type Run = OpsRun;

/** `npm run ops -- --local <stack> ARGS`, in this process (npm itself is run once, below). */
function ops(...args: string[]): Promise<Run> {
  return opsInProcess(stack.url, args);
}

function run(command: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      // The SDK's warning switch unset, as in a user's shell: the command must silence it itself.
      { cwd: ROOT, env: { ...process.env, [SDK_WARNING_SWITCH]: '' }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function opsJson<T>(...args: string[]): Promise<T> {
  const result = await ops('--json', ...args);
  if (result.code !== 0) throw new Error(`ops ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A failure says what is wrong in one line on stderr, and nothing on stdout. */
function expectOneLineFailure(result: Run, code: number, pattern: RegExp): void {
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^ops: [^\n]+\n$/);
  expect(result.stderr).toMatch(pattern);
  expect(result.code).toBe(code);
}

/** `key` with no claim: an answer, exit 3, on stdout (text, and `{found: false}` with --json), nothing on stderr. */
async function expectNoClaim(subscriber: string, key: string): Promise<void> {
  const text = await ops('key', key, '--subscriber', subscriber);
  expect(text).toMatchObject({ code: 3, stderr: '' });
  expect(text.stdout).toMatch(/^claim {7}none: never seen, or expired after the retention$/m);
  const json = await ops('--json', 'key', key, '--subscriber', subscriber);
  expect(json).toMatchObject({ code: 3, stderr: '' });
  expect(JSON.parse(json.stdout)).toMatchObject({
    found: false,
    key,
    subscriber,
    pk: `${subscriber}#${key}`,
    meaning: 'never seen, or expired after the retention',
  });
}

async function post(body: string): Promise<void> {
  expect((await client.postWebhook(body, SECRET)).status).toBe(200);
}

function subscriberInfo(name: string) {
  const subscriber = info.subscribers.find((candidate) => candidate.name === name);
  if (subscriber === undefined) throw new Error(`no subscriber ${name}`);
  return subscriber;
}

async function effectsOf(subscriber: string, key: string): Promise<number> {
  return (await client.effectCounts([key], 60_000, subscriber))[key] ?? 0;
}

beforeAll(async () => {
  stack = await spawnTestStack({
    env: {
      WHATSAPP_APP_SECRETS: SECRET,
      LOCAL_SUBSCRIBERS: 'test/support/local-subscribers/two-subscribers.ts',
      LOCAL_CONSUMER_TIMEOUT_SECONDS: '30',
    },
  });
  client = new LocalStackClient(stack.url);
  info = await client.info();
  const common = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  sqs = new SQSClient({ ...common, endpoint: info.sqsEndpoint });
  dynamodb = new DynamoDBClient({ ...common, endpoint: info.dynamodbEndpoint });
}, 180_000);

afterAll(async () => {
  sqs?.destroy();
  dynamodb?.destroy();
  await stack?.stop();
});

describe('npm run ops, against the local stack', () => {
  it('runs through npm with no warning, and --help lists every command', async () => {
    const result = await run('npm', ['run', '--silent', 'ops', '--', '--help']);

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    for (const command of ['key', 'keys', 'forget', 'pause', 'resume', 'dlq', 'quarantine', 'replay']) {
      expect(result.stdout).toMatch(new RegExp(`^  (\\w+ \\| )?${command}\\b`, 'm'));
    }
  });

  it('refuses bad arguments and unknown keys in one line with exit 2', async () => {
    expectOneLineFailure(await ops('frobnicate'), 2, /unknown command "frobnicate"/);
    expectOneLineFailure(await ops('key', 'nonsense:1'), 2, /unknown event key "nonsense:1"/);
    expectOneLineFailure(await ops('dlq', 'peek', '-n', '0'), 2, /-n needs a whole number/);
    expectOneLineFailure(await ops('key', 'msg:x', '--yes'), 2, /key takes no --yes option/);
    expectOneLineFailure(await ops('dlq', 'stats'), 2, /several subscribers \(bot, crm\).*--subscriber/);
    expectOneLineFailure(await ops('dlq', 'stats', '--subscriber', 'erp'), 2, /no subscriber "erp"/);
  });

  it('key: the claim of an event per subscriber, in its namespace; a field a subscriber does not get', async () => {
    const body = envelope([messagesChange(inboundMessagesWithIds([wamid(1)]))]);
    const key = `msg:${wamid(1)}`;
    await post(body);
    await client.drained();

    const text = await ops('key', key, '--subscriber', 'bot');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^stored as {3}bot#${key.replaceAll('.', '\\.')}$`, 'm'));
    expect(text.stdout).toMatch(/^claim {7}done: /m);
    expect(text.stdout).toMatch(/^ {2}held by message {2}\S+$/m);
    const json = await opsJson<{
      found: boolean;
      pk: string;
      claim: { status: string; attempt: number; doneAt: string };
    }>('key', key, '--subscriber', 'crm');
    expect(json.found).toBe(true);
    expect(json.pk).toBe(`crm#${key}`);
    expect(json.claim).toMatchObject({ status: 'done', attempt: 1 });
    expect(Date.parse(json.claim.doneAt)).toBeGreaterThan(0);

    const management = readFileSync(join(ROOT, ACCOUNT_UPDATE), 'utf8');
    await post(management);
    await client.drained();
    const [managementKey] = keysOfBody(management) as [string];
    expect((await ops('key', managementKey, '--subscriber', 'crm')).code).toBe(0);
    expectOneLineFailure(
      await ops('key', managementKey, '--subscriber', 'bot'),
      2,
      /subscriber bot does not receive field account_update/,
    );
    await expectNoClaim('bot', `msg:${wamid(99)}`);
  });

  it('keys --file: every event of a body, statuses with their ledger entry', async () => {
    const id = wamid(2);
    const body = statusesBody([
      { id, status: 'sent', recipientId: '16505551000', timestamp: '1750000000' },
      { id, status: 'delivered', recipientId: '16505551000', timestamp: '1750000010' },
    ]);
    const file = join(tmpdir(), `ops-e2e-${process.pid}-statuses.json`);
    writeFileSync(file, body);
    await post(body);
    await client.drained();

    const json = await opsJson<{
      events: { key: string; claim?: { status: string }; ledger?: { current: string; times: object } }[];
    }>('keys', '--file', file, '--subscriber', 'bot');
    // The keys of docs/design.md §1, spelled out from the fixture's wamid and statuses.
    expect(json.events.map((event) => event.key)).toEqual([`st:${id}:sent`, `st:${id}:delivered`]);
    for (const event of json.events) {
      expect(event.claim?.status).toBe('done');
      expect(event.ledger?.current).toBe('delivered');
      expect(Object.keys(event.ledger?.times ?? {})).toEqual(['sent', 'delivered']);
    }
    const text = await ops('keys', '--file', file, '--subscriber', 'bot');
    expect(text.stdout).toMatch(/^2 events: 2 done$/m);
    expectOneLineFailure(
      await ops('keys', '--file', '/no/such/body.json', '--subscriber', 'bot'),
      2,
      /ENOENT/,
    );
  });

  it('forget: a done claim goes, so the next delivery effects it again for that subscriber only', async () => {
    const body = envelope([messagesChange(inboundMessagesWithIds([wamid(3)]))]);
    const key = `msg:${wamid(3)}`;
    await post(body);
    expect(await effectsOf('bot', key)).toBe(1);

    expectOneLineFailure(await ops('forget', key, '--subscriber', 'bot'), 2, /add --yes/);
    const forgot = await ops('forget', key, '--yes', '--subscriber', 'bot');
    expect(forgot.code).toBe(0);
    expect(forgot.stdout).toMatch(new RegExp(`^forgot ${key.replaceAll('.', '\\.')} .*was done since`, 'm'));
    const logged = JSON.parse(forgot.stderr.trim()) as Record<string, unknown>;
    expect(logged).toMatchObject({ message: 'ops forget', key, pk: `bot#${key}`, previousStatus: 'done' });
    await expectNoClaim('bot', key);

    // The same body again within 5 minutes: the FIFO message lane drops it as a duplicate send (its
    // deduplication id is derived from the event keys), so the forgotten claim is not run again yet.
    await post(body);
    await client.drained();
    expect(await effectsOf('bot', key)).toBe(1);
    // A delivery with a fresh deduplication id, as `dlq redrive` sends one, runs it again.
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: subscriberInfo('bot').messageQueueUrl,
        MessageBody: body,
        MessageGroupId: 'ops-e2e-forget',
        MessageDeduplicationId: `ops-e2e-forget-${wamid(3)}`.replace(/[^\w-]/g, '-'),
      }),
    );
    expect(await effectsOf('bot', key)).toBe(2);
    expect(await effectsOf('crm', key)).toBe(1);
  });

  it('forget: refuses a claim in flight unless --force', async () => {
    const key = `msg:${wamid(4)}`;
    const claims = new ClaimStore({
      documentClient: DynamoDBDocumentClient.from(dynamodb),
      tableName: info.tableName,
      keyNamespace: 'crm',
    });
    await claims.claim({ key, field: 'messages' }, { deadlineMs: Date.now() + 600_000 });

    expectOneLineFailure(
      await ops('forget', key, '--yes', '--subscriber', 'crm'),
      1,
      /is in flight \(lease until .*add --force/,
    );
    expect(
      (await opsJson<{ claim: { status: string } }>('key', key, '--subscriber', 'crm')).claim.status,
    ).toBe('in-flight');
    const forced = await ops('forget', key, '--yes', '--force', '--subscriber', 'crm');
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stderr.trim())).toMatchObject({ previousStatus: 'in-flight', forced: true });
    await expectNoClaim('crm', key);
  });

  it(
    'pause / resume: both lanes of the paused subscriber hold their deliveries, the other subscriber goes on, and each lane resumes on its own',
    async () => {
      const paused = await opsJson<{ lanes: { lane: string; state: string }[] }>(
        'pause',
        '--subscriber',
        'bot',
      );
      expect(paused.lanes).toEqual([
        expect.objectContaining({ lane: 'status', state: 'Disabled' }),
        expect.objectContaining({ lane: 'message', state: 'Disabled' }),
      ]);
      const body = envelope([messagesChange(inboundMessagesWithIds([wamid(5)]))]);
      const key = `msg:${wamid(5)}`;
      await post(body);

      await waitFor(
        async () => (await client.effects()).subscribers.crm?.effects.some((e) => e.key === key) ?? false,
      );
      // An inbound message travels in the message lane (a FIFO queue), and waits there.
      const bot = subscriberInfo('bot');
      expect(await readQueueCounts(sqs, bot.messageQueueUrl as string)).toMatchObject({
        visible: 1,
        inFlight: 0,
      });
      const stats = await ops('dlq', 'stats', '--subscriber', 'bot');
      expect(stats.stdout).toMatch(/^message lane queue +1 waiting, 0 in flight, 0 delayed \(FIFO\)$/m);
      expect(stats.stdout).toMatch(/^status lane queue +0 waiting/m);
      // Each lane switches on its own, as its event source mapping does on AWS: the status lane drains a status
      // while the message lane still holds the message.
      const statusResumed = await opsJson<{ lanes: { lane: string; state: string }[] }>(
        'resume',
        '--lane',
        'status',
        '--subscriber',
        'bot',
      );
      expect(statusResumed.lanes).toEqual([expect.objectContaining({ lane: 'status', state: 'Enabled' })]);
      await post(
        statusesBody([
          { id: wamid(5), status: 'delivered', timestamp: '1780000200', recipientId: '16505551000' },
        ]),
      );
      await waitFor(async () => {
        const counts = await readQueueCounts(sqs, bot.queueUrl);
        return counts.visible === 0 && counts.inFlight === 0 && counts.delayed === 0;
      });
      expect(await readQueueCounts(sqs, bot.messageQueueUrl as string)).toMatchObject({ visible: 1 });
      // effectsOf waits for every queue to drain, which bot's paused lane does not: read the effects as they are.
      expect((await client.effects()).subscribers.bot?.effects.some((e) => e.key === key)).toBe(false);

      const resumed = await ops('resume', '--lane', 'message', '--subscriber', 'bot');
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toMatch(/^message lane of bot resumed \(Enabled\)/m);
      expect(resumed.stdout).not.toMatch(/status lane/);
      expect(await effectsOf('bot', key)).toBe(1);
    },
    PAUSE_TEST_TIMEOUT_MS,
  );

  it('dlq stats | peek | redrive: a failed inbound message the consumer moved to the message lane DLQ, back in its conversation, effected once', async () => {
    const bot = subscriberInfo('bot');
    const body = envelope([messagesChange(inboundMessagesWithIds([wamid(6), wamid(7)]))]);
    const keys = [`msg:${wamid(6)}`, `msg:${wamid(7)}`];
    const group = `${PHONE_NUMBER_ID}:16505551000`;
    // A record the ordered lane's consumer gave up on, moved by its own code (deadLetteredBy=consumer).
    await new SqsConversationDeadLetters({
      sqs,
      deadLetterQueueUrl: bot.messageDlqUrl as string,
      maxReceives: 20,
    }).move([
      {
        messageId: `ops-e2e-lane-${wamid(6)}`,
        body,
        attributes: { MessageGroupId: group, ApproximateReceiveCount: '20' },
        messageAttributes: {
          deliveryId: { dataType: 'String', stringValue: 'ops-e2e-delivery' },
          receivedAt: { dataType: 'String', stringValue: new Date().toISOString() },
          part: { dataType: 'Number', stringValue: '1' },
          parts: { dataType: 'Number', stringValue: '1' },
        },
      },
    ]);

    const stats = await ops('dlq', 'stats', '--subscriber', 'bot');
    expect(stats.stdout).toMatch(/^message lane DLQ +1 waiting/m);
    expect(stats.stdout).toMatch(/^status lane DLQ +0 waiting/m);
    const peekArgs = ['dlq', 'peek', '-n', '5', '--subscriber', 'bot'];
    const peek = await opsJson<{
      scanned: number;
      records: {
        lane: string;
        deadLetteredBy: string;
        deliveryId: string;
        part: string;
        events: number;
        pendingKeys: string[];
        failure: string[];
      }[];
    }>(...peekArgs);
    expect(peek.scanned).toBe(1);
    expect(peek.records).toEqual([
      expect.objectContaining({
        lane: 'message',
        deadLetteredBy: 'consumer',
        deliveryId: 'ops-e2e-delivery',
        part: '1/1',
        events: 2,
        pendingKeys: keys,
        failure: ['a handler failed (its claims were released)'],
      }),
    ]);
    const text = await ops(...peekArgs);
    expect(text.stdout).toMatch(/ message lane {2}sent /);
    expect(text.stdout).toMatch(/^ {2}moved by +the consumer, on its last receive/m);
    // The conversation id holds the customer's number: never shown.
    expect(text.stdout + JSON.stringify(peek)).not.toContain('16505551000');
    // Peek hands every record back at once.
    expect(await readQueueCounts(sqs, bot.messageDlqUrl as string)).toMatchObject({
      visible: 1,
      inFlight: 0,
    });

    const redrive = await ops('dlq', 'redrive', '--lane', 'message', '--max', '5', '--subscriber', 'bot');
    expect(redrive.code).toBe(0);
    expect(redrive.stdout).toMatch(/^moved 1 record from the message lane DLQ of bot to its queue$/m);
    expect(await effectsOf('bot', keys[0] as string)).toBe(1);
    expect(await effectsOf('bot', keys[1] as string)).toBe(1);
    expect(await readQueueCounts(sqs, bot.messageDlqUrl as string)).toMatchObject({
      visible: 0,
      inFlight: 0,
    });
    const again = await ops('dlq', 'redrive', '--subscriber', 'bot');
    expect(again.stdout).toMatch(/^moved 0 records from the status lane DLQ of bot/m);
    expect(again.stdout).toMatch(/^moved 0 records from the message lane DLQ of bot/m);
  });

  it('dlq redrive: a record of the status lane DLQ back to the status lane, effected once', async () => {
    const crm = subscriberInfo('crm');
    const id = wamid(10);
    const body = statusesBody([{ id, status: 'sent', recipientId: '16505551000', timestamp: '1750000000' }]);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: crm.dlqUrl,
        MessageBody: body,
        MessageAttributes: { deliveryId: { DataType: 'String', StringValue: 'ops-e2e-status' } },
      }),
    );
    const peek = await opsJson<{ records: { lane: string; deadLetteredBy?: string }[] }>(
      'dlq',
      'peek',
      '--lane',
      'status',
      '--subscriber',
      'crm',
    );
    expect(peek.records).toEqual([expect.objectContaining({ lane: 'status' })]);
    expect(peek.records[0]?.deadLetteredBy).toBeUndefined();

    const redrive = await ops('dlq', 'redrive', '--lane', 'status', '--subscriber', 'crm');
    expect(redrive.stdout).toMatch(/^moved 1 record from the status lane DLQ of crm to its queue$/m);
    expect(await effectsOf('crm', `st:${id}:sent`)).toBe(1);
  });

  it('quarantine list | show | requeue: chunks reassembled, a fixed body re-sent to every subscriber, a broken one kept', async () => {
    const broken = '{"object":"whatsapp_business_account","entry":[';
    await post(broken);
    // A valid body in four chunks, as the quarantine writes a body too large for one message.
    const valid = envelope([messagesChange(inboundMessagesWithIds([wamid(8), wamid(9)], 600))]);
    // Stored as the receiver stores it: with its proof under the run's provenance key.
    const { messages } = await new SqsQuarantineQueue({
      sqs,
      quarantineQueueUrl: info.quarantineQueueUrl,
      maximumMessageSizeBytes: 1_024,
      proofs: async (bytes) => proofOf(info.provenanceKey, bytes),
    }).quarantine(Buffer.from(valid), 'rejected-by-queue', {
      deliveryId: 'ops-e2e-chunked',
      receivedAt: new Date().toISOString(),
      retryDeadline: Date.now() + 5_000,
    });
    expect(messages).toBeGreaterThan(1);
    // And one planted by something else that may send to the queue: no proof, never sent back in as Meta's.
    const plantedId = 'wamid.ops-e2e-planted';
    const planted = envelope([messagesChange(inboundMessagesWithIds([plantedId]))]);
    await new SqsQuarantineQueue({
      sqs,
      quarantineQueueUrl: info.quarantineQueueUrl,
      maximumMessageSizeBytes: 1_024 * 256,
    }).quarantine(Buffer.from(planted), 'event-without-id', {
      deliveryId: 'ops-e2e-planted',
      receivedAt: new Date().toISOString(),
      retryDeadline: Date.now() + 5_000,
    });

    const list = await opsJson<{
      bodies: {
        id: string;
        reason: string;
        chunks: number;
        bytes: number;
        deliveryId: string;
        reads: string;
      }[];
    }>('quarantine', 'list');
    const chunked = list.bodies.find((body) => body.deliveryId === 'ops-e2e-chunked');
    const invalid = list.bodies.find((body) => body.reason === 'invalid-json');
    const plantedBody = list.bodies.find((body) => body.deliveryId === 'ops-e2e-planted');
    expect(chunked).toMatchObject({ chunks: messages, bytes: Buffer.byteLength(valid), reads: '2 events' });
    expect(invalid).toMatchObject({ bytes: Buffer.byteLength(broken) });
    if (chunked === undefined || invalid === undefined || plantedBody === undefined) {
      throw new Error('bodies missing from the list');
    }

    const shown = await ops('quarantine', 'show', chunked.id);
    expect(shown.code).toBe(0);
    expect(shown.stdout.endsWith(`\n${valid}\n`)).toBe(true);
    expectOneLineFailure(await ops('quarantine', 'show', 'no-such-id'), 2, /no quarantined body no-such-id/);

    const keys = [`msg:${wamid(8)}`, `msg:${wamid(9)}`];
    const requeue = await ops('quarantine', 'requeue', '--all');
    expect(requeue.code).toBe(1);
    expect(requeue.stdout).toContain(`${chunked.id}  requeued, 2 events to bot, crm`);
    expect(requeue.stdout).toContain(`${invalid.id}  stays quarantined: still-invalid`);
    expect(requeue.stdout).toContain(
      `${plantedBody.id}  stays quarantined: unproven, refused: no proof that the receiver verified it`,
    );
    expect(requeue.stderr).toMatch(/^ops: 2 bodies stay quarantined$/m);
    for (const subscriber of ['bot', 'crm']) {
      for (const key of keys) expect(await effectsOf(subscriber, key)).toBe(1);
      expect(await effectsOf(subscriber, `msg:${plantedId}`)).toBe(0);
    }
    const after = await opsJson<{ bodies: { id: string }[] }>('quarantine', 'list');
    expect(after.bodies.map((body) => body.id).sort()).toEqual([invalid.id, plantedBody.id].sort());
    expect(await readQueueCounts(sqs, info.quarantineQueueUrl)).toMatchObject({ visible: 2, inFlight: 0 });
  });
});
