/**
 * The local stack exactly as `npm start` runs it (a child process on a free port): HTTP in, `/local/*` out.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  conversationId,
  FIFO_MAX_BATCH_SIZE,
  ORDERED_LANE_REDRIVE_MARGIN,
  ORDERED_MESSAGE_LANE_RETRY,
} from '../../../contract/lanes.ts';
import type { StatusLedgerView } from '../../../functions/ledger/status-ledger.ts';
import { signBody } from '../../../functions/receiver/signature.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import type { LocalStatsSnapshot } from '../../local/observe/subscriber-stats.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import { type SpawnedLocalStack, spawnLocalStack } from '../../local/stack/spawn-local-stack.ts';
import {
  envelope,
  type InboundMessage,
  inboundMessagesWithIds,
  messagesChange,
  messagesValue,
  PHONE_NUMBER_ID,
  statusesChange,
  wamidFactory,
} from '../../meta-traffic/webhook-bodies.ts';

const SDK_WARNING_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
const SECRET_A = 'e2e-app-secret-a';
const SECRET_B = 'e2e-app-secret-b';
let stack: SpawnedLocalStack;
let client: LocalStackClient;

beforeAll(async () => {
  stack = await spawnLocalStack({
    env: {
      WHATSAPP_APP_SECRETS: `${SECRET_A},${SECRET_B}`,
      // These tests are about exactly-once, not speed: on a busy CI machine a 1000-update record can take
      // DynamoDB Local more than the default 30 s, and a timed-out record would only return after 181 s.
      LOCAL_CONSUMER_TIMEOUT_SECONDS: '90',
      // As in a user's shell (vitest.config.ts sets it for the tests): `npm start` must silence it itself.
      [SDK_WARNING_SWITCH]: '',
    },
  });
  client = new LocalStackClient(stack.url);
});

afterAll(async () => {
  await stack?.stop();
});

describe('npm start, its lanes', () => {
  let sqs: SQSClient;
  beforeAll(async () => {
    const info = await client.info();
    sqs = new SQSClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      endpoint: info.sqsEndpoint,
    });
  });
  afterAll(() => sqs?.destroy());

  async function attributes(queueUrl: string): Promise<Record<string, string>> {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }),
    );
    return Attributes ?? {};
  }

  it('lists the default subscriber with a FIFO message lane beside its status lane, which keeps its queue', async () => {
    const info = await client.info();
    const [subscriber] = info.subscribers;

    expect(info.subscribers).toHaveLength(1);
    expect(subscriber?.queueUrl).toBe(info.queueUrl);
    expect(subscriber?.queueUrl).toMatch(/\/whatsapp-webhook-deliveries$/);
    expect(subscriber?.dlqUrl).toMatch(/\/whatsapp-webhook-deliveries-dlq$/);
    expect(subscriber?.messageQueueUrl).toMatch(/\/whatsapp-webhook-messages\.fifo$/);
    expect(subscriber?.messageDlqUrl).toMatch(/\/whatsapp-webhook-messages-dlq\.fifo$/);
    expect(subscriber?.messageLaneOrdered).toBe(true);
    expect(subscriber?.messageLaneSettings).toMatchObject({
      maxBatchingWindowSeconds: 0,
      maxReceiveCount: ORDERED_MESSAGE_LANE_RETRY.maxReceiveCount,
      retryBaseDelaySeconds: ORDERED_MESSAGE_LANE_RETRY.retryBaseDelaySeconds,
      retryMaxDelaySeconds: ORDERED_MESSAGE_LANE_RETRY.retryMaxDelaySeconds,
    });
    expect(subscriber?.messageLaneSettings?.batchSize).toBeLessThanOrEqual(FIFO_MAX_BATCH_SIZE);

    const lane = await attributes(subscriber?.messageQueueUrl ?? '');
    const laneDlq = await attributes(subscriber?.messageDlqUrl ?? '');
    expect(lane).toMatchObject({
      FifoQueue: 'true',
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
      VisibilityTimeout: String(subscriber?.messageLaneSettings?.visibilityTimeoutSeconds),
    });
    // The consumer moves a record failing its last receive to the DLQ itself; redrive is the net behind it.
    expect(JSON.parse(lane.RedrivePolicy ?? '{}')).toEqual({
      deadLetterTargetArn: laneDlq.QueueArn,
      maxReceiveCount: ORDERED_MESSAGE_LANE_RETRY.maxReceiveCount + ORDERED_LANE_REDRIVE_MARGIN,
    });
    expect(laneDlq.FifoQueue).toBe('true');
    expect((await attributes(subscriber?.queueUrl ?? '')).FifoQueue).toBeUndefined();
  });

  it("runs a consumer on the message lane: a conversation's messages queued there are effected once each, and their wait is in /local/stats", async () => {
    const info = await client.info();
    const messageQueueUrl = info.subscribers[0]?.messageQueueUrl ?? '';
    const wamid = wamidFactory('message-lane');
    const conversation = conversationId(PHONE_NUMBER_ID, '16505551000');
    // As the receiver queues a conversation's part (its split is tested with the receiver): one FIFO message.
    for (const n of [1, 2]) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: messageQueueUrl,
          MessageBody: envelope([messagesChange(inboundMessagesWithIds([wamid(n)]))]),
          MessageGroupId: conversation,
          MessageDeduplicationId: `msg:${wamid(n)}`,
        }),
      );
    }

    expect(await client.effectCounts([1, 2].map((n) => `msg:${wamid(n)}`))).toEqual({
      [`msg:${wamid(1)}`]: 1,
      [`msg:${wamid(2)}`]: 1,
    });
    await waitFor(async () => {
      const stats = (await client.get<LocalStatsSnapshot>('/local/stats')).body;
      return (stats.subscribers.default?.lanes.message?.waitCount ?? 0) >= 2;
    });
    const lanes = (await client.get<LocalStatsSnapshot>('/local/stats')).body.subscribers.default?.lanes;
    expect(lanes?.message).toMatchObject({ ordered: true, waitP50Ms: expect.any(Number) });
    expect(lanes?.message?.waitP99Ms).toBeGreaterThanOrEqual(lanes?.message?.waitP50Ms ?? 0);
    expect(lanes?.status).toMatchObject({ ordered: false });
  });
});

/** `npm run send -- FILE` against this stack, as a user runs it: its exit code and output. */
function npmSend(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'send', '--', file, '--url', `${stack.url}/webhook`, '--secret', SECRET_A],
      {
        cwd: fileURLToPath(new URL('../../../', import.meta.url)),
        env: { ...process.env, [SDK_WARNING_SWITCH]: '' },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1,
          stdout,
          stderr,
        }),
    );
  });
}

describe('npm start, end to end', () => {
  it('prints no warnings, and `npm run send` prints its one status line and nothing else', async () => {
    const fixture = 'test/fixtures/webhooks/message-text.json';
    const send = await npmSend(fixture);

    expect(send.code).toBe(0);
    expect(send.stderr).toBe('');
    expect(send.stdout).toMatch(/^200 OK \(\d+ bytes, \d+ ms\)\n$/);
    await client.drained();
    // Node.js prints every process warning (the AWS SDK's NodeVersionSupportWarning included) as "(node:PID) …".
    expect(stack.output()).not.toMatch(/\(node:\d+\)/);
    expect(stack.output()).toContain('Local stack ready');
  });

  it('`npm run send` of a body the receiver quarantines says so and why, and exits 1', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'send-quarantined-'));
    const notJson = join(directory, 'not-json.json');
    writeFileSync(notJson, '{"object": "whatsapp_business_account", "entry": [');
    const send = await npmSend(notJson);
    rmSync(directory, { recursive: true, force: true });

    expect(send.code).toBe(1);
    expect(send.stdout).toMatch(/^200 OK \(\d+ bytes, \d+ ms\) quarantined: invalid-json\n/);
    expect(send.stdout).toContain('The receiver kept this body in the quarantine queue (invalid-json)');
  });

  it('effects a re-batched retry once: the same event in two different bodies', async () => {
    const wamid = wamidFactory('rebatch');
    const first = envelope([messagesChange(inboundMessagesWithIds([wamid(1), wamid(2)]))]);
    const retry = envelope([
      messagesChange(inboundMessagesWithIds([wamid(3)])),
      messagesChange(inboundMessagesWithIds([wamid(2), wamid(1)])),
    ]);

    expect((await client.postWebhook(first, SECRET_A)).status).toBe(200);
    expect((await client.postWebhook(retry, SECRET_A)).status).toBe(200);

    expect(await client.effectCounts([1, 2, 3].map((n) => `msg:${wamid(n)}`))).toEqual({
      [`msg:${wamid(1)}`]: 1,
      [`msg:${wamid(2)}`]: 1,
      [`msg:${wamid(3)}`]: 1,
    });
  });

  it('shows a body sent twice as one effect and one duplicate the message lane queue absorbed, on every view', async () => {
    const wamid = wamidFactory('twice');
    const body = envelope([messagesChange(inboundMessagesWithIds([wamid(1)]))]);
    const absorbedBefore = (await client.effects()).subscribers.default?.duplicatesAbsorbedByQueue ?? 0;

    expect((await client.postWebhook(body, SECRET_A)).status).toBe(200);
    expect(await client.effectCounts([`msg:${wamid(1)}`])).toEqual({ [`msg:${wamid(1)}`]: 1 });
    expect((await client.postWebhook(body, SECRET_A)).status).toBe(200);

    await waitFor(
      async () =>
        (await client.effects()).subscribers.default?.duplicatesAbsorbedByQueue === absorbedBefore + 1,
      10_000,
      () => `the repeat was not counted as absorbed by the queue:\n${stack.output()}`,
    );
    const effects = await client.effects();
    expect(effects.effects.find((entry) => entry.key === `msg:${wamid(1)}`)).toMatchObject({
      count: 1,
      bySubscriber: { default: 1 },
    });
    const stats = (await (await fetch(`${stack.url}/local/stats`)).json()) as LocalStatsSnapshot;
    expect(stats.totals.absorbedByQueue).toBeGreaterThanOrEqual(absorbedBefore + 1);
    expect(stack.output()).toContain("default: 1 duplicate absorbed by the message lane's FIFO queue");
  });

  it('effects 5 concurrent identical deliveries once', async () => {
    const wamid = wamidFactory('concurrent');
    const body = envelope([messagesChange(inboundMessagesWithIds([wamid(1)]))]);

    const statuses = await Promise.all(
      Array.from({ length: 5 }, () => client.postWebhook(body, SECRET_A).then((answer) => answer.status)),
    );

    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(await client.effectCounts([`msg:${wamid(1)}`])).toEqual({ [`msg:${wamid(1)}`]: 1 });
  });

  it('never moves the ledger backwards: read, then sent, then delivered ends at read', async () => {
    const wamid = wamidFactory('ledger')(1);
    for (const [status, at] of [
      ['read', 1_780_000_300],
      ['sent', 1_780_000_100],
      ['delivered', 1_780_000_200],
    ] as const) {
      const change = statusesChange([
        { id: wamid, status, timestamp: String(at), recipientId: '15551230000' },
      ]);
      expect((await client.postWebhook(envelope([change]), SECRET_A)).status).toBe(200);
    }

    const keys = ['read', 'sent', 'delivered'].map((s) => `st:${wamid}:${s}`);
    expect(Object.values(await client.effectCounts(keys))).toEqual([1, 1, 1]);
    const ledger = await client.get<StatusLedgerView>(`/local/ledger/${encodeURIComponent(wamid)}`);
    expect(ledger.status).toBe(200);
    expect(ledger.body).toMatchObject({
      wamid,
      current: 'read',
      times: { sent: 1_780_000_100, delivered: 1_780_000_200, read: 1_780_000_300 },
    });
  });

  it('accepts bodies signed with either configured app secret', async () => {
    const wamid = wamidFactory('secrets');

    const body = (n: number) => envelope([messagesChange(inboundMessagesWithIds([wamid(n)]))]);

    expect((await client.postWebhook(body(1), SECRET_A)).status).toBe(200);
    expect((await client.postWebhook(body(2), SECRET_B)).status).toBe(200);

    expect(await client.effectCounts([`msg:${wamid(1)}`, `msg:${wamid(2)}`])).toEqual({
      [`msg:${wamid(1)}`]: 1,
      [`msg:${wamid(2)}`]: 1,
    });
  });

  it('answers 401 to invalid signatures and effects nothing', async () => {
    const wamid = wamidFactory('unsigned');
    const body = envelope([messagesChange(inboundMessagesWithIds([wamid(1)]))]);
    const bytes = Buffer.from(body);
    const before = (await client.stats()).totals.counters.SignatureRejected ?? 0;

    const statuses = [
      (await client.postWebhook(body, 'not-a-configured-secret')).status,
      (await client.postWebhook(body, SECRET_A, { headers: { 'x-hub-signature-256': 'sha256=not-hex' } }))
        .status,
      (
        await client.postWebhook(Buffer.concat([bytes, Buffer.from(' ')]), SECRET_A, {
          // Signed over the body without the trailing space: one byte changed.
          headers: { 'x-hub-signature-256': signBody(bytes, SECRET_A) },
        })
      ).status,
      (await fetch(`${stack.url}/webhook`, { method: 'POST', body })).status,
    ];

    expect(statuses).toEqual([401, 401, 401, 401]);
    expect(await client.effectCounts([`msg:${wamid(1)}`])).toEqual({ [`msg:${wamid(1)}`]: 0 });
    await waitFor(async () => ((await client.stats()).totals.counters.SignatureRejected ?? 0) - before === 4);
    // One line each in the terminal, not the receiver's JSON entry (LOCAL_VERBOSE prints that).
    for (const problem of ['mismatch', 'malformed', 'missing']) {
      expect(stack.output()).toContain(`warn: Delivery refused: bad signature (${problem})`);
    }
    expect(stack.output()).not.toContain('"message":"Delivery refused: bad signature"');
  });

  it('quarantines a truncated signed body to the quarantine queue, not the DLQ, and effects nothing', async () => {
    const wamid = wamidFactory('truncated');
    const whole = envelope([messagesChange(inboundMessagesWithIds([wamid(1)]))]);
    const truncated = whole.slice(0, Math.floor(whole.length / 2));
    const before = (await client.stats()).queue;

    expect((await client.postWebhook(truncated, SECRET_A)).status).toBe(200);

    expect(await client.effectCounts([`msg:${wamid(1)}`])).toEqual({ [`msg:${wamid(1)}`]: 0 });
    await waitFor(
      async () => ((await client.stats()).queue?.quarantine ?? 0) === (before?.quarantine ?? 0) + 1,
    );
    expect((await client.stats()).queue?.dlq).toBe(before?.dlq ?? 0);
  });

  it('effects a body with raw UTF-8 emoji once, never quarantines it', async () => {
    const wamid = wamidFactory('emoji');
    const [message] = inboundMessagesWithIds([wamid(1)]) as [InboundMessage];
    const value = messagesValue([{ ...message, name: 'Ana 🌸', text: 'Thanks 👍 see you in 🇩🇪 😀' }]) as {
      messages: object[];
    };
    const reaction = {
      from: message.from,
      id: wamid(2),
      timestamp: '1780000009',
      type: 'reaction',
      reaction: { message_id: wamid(1), emoji: '👍' },
    };
    const body = envelope([
      { field: 'messages', value: { ...value, messages: [...value.messages, reaction] } },
    ]);
    // Raw UTF-8 on the wire (👍 is F0 9F 91 8D), no \u escapes: JSON.stringify leaves emoji as they are.
    expect(Buffer.from(body).includes(Buffer.from([0xf0, 0x9f, 0x91, 0x8d]))).toBe(true);
    expect(body).not.toContain('\\u');
    const before = await client.stats();

    expect((await client.postWebhook(body, SECRET_A)).status).toBe(200);
    expect((await client.postWebhook(body, SECRET_A)).status).toBe(200);

    expect(await client.effectCounts([`msg:${wamid(1)}`, `msg:${wamid(2)}`])).toEqual({
      [`msg:${wamid(1)}`]: 1,
      [`msg:${wamid(2)}`]: 1,
    });
    const after = await client.stats();
    const quarantined = (stats: typeof before) => stats.totals.counters.DeliveriesQuarantined ?? 0;
    expect(quarantined(after)).toBe(quarantined(before));
    expect(after.queue?.dlq ?? 0).toBe(before.queue?.dlq ?? 0);
  });

  it('acknowledges an unknown field without a side effect', async () => {
    const body = envelope([{ field: 'e2e_future_field', value: { id: 'ABC-123', state: 'ENABLED' } }]);
    const totalBefore = (await client.get<{ total: number }>('/local/effects')).body.total;

    expect((await client.postWebhook(body, SECRET_A)).status).toBe(200);

    await client.drained();
    expect((await client.get<{ total: number }>('/local/effects')).body.total).toBe(totalBefore);
    await waitFor(async () => (await client.stats()).totals.counters['UnknownField/e2e_future_field'] === 1);
  });

  it('effects a 1000-update body posted twice exactly 1000 times', async () => {
    const wamid = wamidFactory('thousand');
    const wamids = Array.from({ length: 1000 }, (_, i) => wamid(i));
    // Meta's limits: up to 1000 updates and 3 MB; this one is one SQS message of the default 1 MiB.
    const body = envelope([messagesChange(inboundMessagesWithIds(wamids, 200))]);
    expect(Buffer.byteLength(body)).toBeGreaterThan(256 * 1024);

    // A 503 (the emulated SQS slower than the receiver's 2 s request timeout on a loaded machine) is answered
    // as Meta answers it: the same body again. Whatever was enqueued before the 503 must not double an effect.
    const postAsMeta = async (secret: string) => {
      for (let attempt = 1; ; attempt += 1) {
        const { status } = await client.postWebhook(body, secret);
        if (status !== 503 || attempt === 5) return status;
      }
    };
    expect(await postAsMeta(SECRET_A)).toBe(200);
    expect(await postAsMeta(SECRET_B)).toBe(200);

    const counts = await client.effectCounts(
      wamids.map((id) => `msg:${id}`),
      120_000,
    );
    expect(Object.values(counts).filter((c) => c === 1)).toHaveLength(1000);
  }, 180_000);
});

describe('npm start, the fault switch and the handshake', () => {
  it('answers the verification handshake through the API Gateway adapter', async () => {
    const ok = await client.get<string>(
      '/webhook?hub.mode=subscribe&hub.verify_token=local-dev-verify-token&hub.challenge=1158201444',
    );
    const wrong = await client.get('/webhook?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1');
    expect(ok).toEqual({ status: 200, body: '1158201444' });
    expect(wrong.status).toBe(403);
  });

  it('in `error` mode answers 503 and stores nothing; in `lost-ack` mode stores but never answers', async () => {
    const wamid = wamidFactory('faults');
    const body = (n: number) => envelope([messagesChange(inboundMessagesWithIds([wamid(n)]))]);
    try {
      expect((await client.setFaults({ webhook: { mode: 'error' } })).webhook.mode).toBe('error');
      expect((await client.postWebhook(body(1), SECRET_A)).status).toBe(503);

      expect((await client.setFaults({ webhook: { mode: 'lost-ack' } })).webhook.mode).toBe('lost-ack');
      const lost = await client.postWebhook(body(2), SECRET_A, { timeoutMs: 1_500 }).then(
        () => 'answered',
        () => 'no answer',
      );
      expect(lost).toBe('no answer');
    } finally {
      await client.setFaults({ webhook: { mode: 'up' } });
    }
    // Meta's retry of the lost answer: accepted again, effected once.
    expect((await client.postWebhook(body(2), SECRET_A)).status).toBe(200);

    expect(await client.effectCounts([`msg:${wamid(1)}`, `msg:${wamid(2)}`])).toEqual({
      [`msg:${wamid(1)}`]: 0,
      [`msg:${wamid(2)}`]: 1,
    });
  });

  it('refuses an invalid fault setting', async () => {
    const response = await fetch(`${stack.url}/local/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ webhook: { mode: 'sometimes' } }),
    });
    expect(response.status).toBe(400);
  });

  it('exits with one clear line when its port is taken', async () => {
    const { execFile } = await import('node:child_process');
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'cli/local/start.ts'],
        { cwd: new URL('../../../', import.meta.url), env: { ...process.env, PORT: String(stack.port) } },
        (error, _stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`npm start: Port ${stack.port} is already in use`);
  });
});

describe('npm start, stopping', () => {
  it('stops everything on SIGINT, DynamoDB Local included', async () => {
    const info = await client.get<{ dynamodbEndpoint: string }>('/local/info');
    stack.process.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => {
      if (stack.process.exitCode !== null) resolve(stack.process.exitCode);
      else stack.process.once('exit', (exitCode) => resolve(exitCode));
    });

    expect(code).toBe(0);
    await expect(fetch(info.body.dynamodbEndpoint, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
    await expect(fetch(`${stack.url}/local/info`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
  });
});
