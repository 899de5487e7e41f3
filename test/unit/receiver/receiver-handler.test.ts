/**
 * The Lambda handler end to end, with SQS and Secrets Manager mocked by aws-sdk-client-mock: every answer of
 * docs/design.md §4, what reaches the queues, and what reaches the logs.
 */
import { readFileSync } from 'node:fs';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageBatchCommand, type SendMessageBatchCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DISPLAY_PHONE_NUMBER,
  PRIVATE_TEXT,
  PROFILE_NAME,
  privateMessagesBody,
  SENDER_PHONE,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import { encodeSubscriberQueues, type SubscriberQueue } from '../../../contract/subscribers.ts';
import { createReceiverHandler } from '../../../functions/receiver.ts';
import { keysOfEnvelope } from '../../support/webhooks/event-keys.ts';
import { httpApiEvent, signedPost } from '../../support/webhooks/webhook-requests.ts';

const sqsMock = mockClient(SQSClient);
const secretsMock = mockClient(SecretsManagerClient);

const SECRET = 'meta-app-secret-1';
const SECOND_SECRET = 'meta-app-secret-2';
const VERIFY_TOKEN = 'verify-me';
const DELIVERY_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';
const QUARANTINE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/quarantine';
const QUEUES = {
  SUBSCRIBER_QUEUES: encodeSubscriberQueues([{ name: 'default', queueUrl: DELIVERY_URL }]),
  QUARANTINE_QUEUE_URL: QUARANTINE_URL,
};
const LOCAL_ENV = {
  ...QUEUES,
  WHATSAPP_APP_SECRETS: `${SECRET},${SECOND_SECRET}`,
  WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
};

let output: string[];

beforeEach(() => {
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  sqsMock.on(SendMessageBatchCommand).callsFake(succeedAll);
  output = [];
  // Powertools Logger and Metrics write to process.stdout/stderr: capture everything that leaves the function.
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      output.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
  }
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  sqsMock.reset();
  secretsMock.reset();
});

function succeedAll(input: SendMessageBatchCommandInput) {
  return {
    Successful: (input.Entries ?? []).map((entry) => ({ Id: entry.Id, MessageId: `id-${entry.Id}` })),
    Failed: [],
  };
}

async function invoke(event: APIGatewayProxyEventV2, env: NodeJS.ProcessEnv = LOCAL_ENV) {
  return (await createReceiverHandler(env)(event)) as APIGatewayProxyStructuredResultV2;
}

const entriesSentTo = (url: string) =>
  sqsMock
    .commandCalls(SendMessageBatchCommand)
    .filter((call) => call.args[0].input.QueueUrl === url)
    .flatMap((call) => call.args[0].input.Entries ?? []);

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/webhooks/${name}`, import.meta.url));

describe('GET verification handshake', () => {
  const get = (query: Record<string, string>) => invoke(httpApiEvent({ method: 'GET', query }));

  it('answers 200 with the challenge verbatim as text/plain, never to be sniffed as anything else', async () => {
    const response = await get({
      'hub.mode': 'subscribe',
      'hub.verify_token': VERIFY_TOKEN,
      'hub.challenge': '1158201444',
    });
    expect(response).toMatchObject({ statusCode: 200, body: '1158201444' });
    expect(response.headers?.['content-type']).toMatch(/^text\/plain/);
    expect(response.headers?.['x-content-type-options']).toBe('nosniff');
  });

  it('answers 400 to a challenge longer than Meta sends (128 characters), echoing nothing', async () => {
    const response = await get({
      'hub.mode': 'subscribe',
      'hub.verify_token': VERIFY_TOKEN,
      'hub.challenge': `<script>${'x'.repeat(121)}`,
    });
    expect(response).toMatchObject({ statusCode: 400, body: '' });
  });

  it.each([
    ['a wrong token', { 'hub.mode': 'subscribe', 'hub.verify_token': 'nope', 'hub.challenge': '1' }, 403],
    [
      'a wrong mode',
      { 'hub.mode': 'unsubscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1' },
      403,
    ],
    ['no token', { 'hub.mode': 'subscribe', 'hub.challenge': '1' }, 403],
    ['no challenge', { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN }, 400],
    ['no query at all', {}, 400],
  ])('answers %s with %i and an empty body', async (_, query, statusCode) => {
    expect(await get(query)).toMatchObject({ statusCode, body: '' });
  });

  it('answers 500 when no verify token is configured, and says so in the log', async () => {
    const event = httpApiEvent({
      method: 'GET',
      query: { 'hub.mode': 'subscribe', 'hub.verify_token': '', 'hub.challenge': '1' },
    });
    expect((await invoke(event, { ...QUEUES, WHATSAPP_APP_SECRETS: SECRET })).statusCode).toBe(500);
    expect(output.join('')).toContain('no verify token');
  });

  it('enqueues nothing', async () => {
    await get({ 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1' });
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('needs only the verify token: it succeeds before any app secret is configured', async () => {
    const event = httpApiEvent({
      method: 'GET',
      query: { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '31' },
    });
    const tokenOnly = { ...QUEUES, WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN };
    expect(await invoke(event, tokenOnly)).toMatchObject({ statusCode: 200, body: '31' });
  });
});

describe('POST signature', () => {
  const body = fixture('message-text.json');

  it('accepts a body signed with the first or the second configured secret', async () => {
    expect((await invoke(signedPost(body, SECRET))).statusCode).toBe(200);
    expect((await invoke(signedPost(body, SECOND_SECRET))).statusCode).toBe(200);
    expect(entriesSentTo(DELIVERY_URL).map((entry) => entry.MessageBody)).toEqual([
      body.toString('utf8'),
      body.toString('utf8'),
    ]);
  });

  it.each([
    ['missing', signedPost(fixture('message-text.json'), undefined)],
    ['signed with an unknown secret', signedPost(fixture('message-text.json'), 'someone-else')],
    [
      'malformed',
      {
        ...signedPost(fixture('message-text.json'), SECRET),
        headers: { 'x-hub-signature-256': 'sha256=00' },
      },
    ],
  ])('answers 401 and enqueues nothing when the signature is %s', async (_, event) => {
    expect((await invoke(event)).statusCode).toBe(401);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('answers 401 for a body altered after signing', async () => {
    const event = signedPost(body, SECRET);
    expect((await invoke({ ...event, body: event.body?.replace('"text"', '"text" ') })).statusCode).toBe(401);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('accepts a mixed-case header name', async () => {
    const event = signedPost(body, SECRET);
    const signature = event.headers['x-hub-signature-256'] ?? '';
    expect((await invoke({ ...event, headers: { 'X-Hub-Signature-256': signature } })).statusCode).toBe(200);
  });

  it('verifies a base64-encoded body over its decoded bytes and enqueues it unchanged', async () => {
    const response = await invoke(signedPost(body, SECRET, { base64: true }));
    expect(response.statusCode).toBe(200);
    expect(entriesSentTo(DELIVERY_URL).map((entry) => entry.MessageBody)).toEqual([body.toString('utf8')]);
  });

  it('verifies an escaped-unicode body over its exact bytes and enqueues those bytes, not a re-serialisation', async () => {
    const raw = fixture('escaped-unicode.json');
    expect((await invoke(signedPost(raw, SECRET))).statusCode).toBe(200);
    expect(entriesSentTo(DELIVERY_URL)[0]?.MessageBody).toBe(raw.toString('utf8'));

    sqsMock.resetHistory();
    const reserialised = JSON.stringify(JSON.parse(raw.toString('utf8')));
    const event = signedPost(raw, SECRET);
    expect((await invoke({ ...event, body: reserialised })).statusCode).toBe(401);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('answers 401, enqueues nothing and logs an error when only the verify token is configured', async () => {
    const response = await invoke(signedPost(body, SECRET), {
      ...QUEUES,
      WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
    });
    expect(response.statusCode).toBe(401);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
    const logged = output.join('');
    expect(logged).toContain('no app secret configured');
    expect(logged).toMatch(/"level":"ERROR"/);
    const emf = output.filter((line) => line.includes('"_aws"'));
    expect(JSON.parse(emf[0] ?? '{}')).toMatchObject({ SignatureRejected: 1 });
  });

  it('answers 500 and never accepts when neither an app secret nor a verify token is configured', async () => {
    const response = await invoke(signedPost(body, ''), { ...QUEUES });
    expect(response.statusCode).toBe(500);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
    expect(output.join('')).toContain('no usable webhook secret');
  });
});

describe('POST enqueue', () => {
  const body = fixture('message-text.json');

  it('retries a throttled SendMessageBatch and answers 200 once stored', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'RequestThrottled' }))
      .callsFake(succeedAll);
    expect((await invoke(signedPost(body, SECRET))).statusCode).toBe(200);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(2);
  });

  it('retries the failed entries of a partially failed batch and answers 200', async () => {
    const big = privateMessagesBody(1000, { textRepeat: 60 });
    let calls = 0;
    sqsMock.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => {
      calls++;
      if (calls > 1) return succeedAll(input);
      const [first, ...rest] = input.Entries ?? [];
      return {
        Successful: [{ Id: first?.Id, MessageId: 'x' }],
        Failed: rest.map((entry) => ({ Id: entry.Id, SenderFault: false, Code: 'InternalError' })),
      };
    });
    expect((await invoke(signedPost(big, SECRET))).statusCode).toBe(200);
    const stored = entriesSentTo(DELIVERY_URL);
    expect(new Set(stored.map((entry) => entry.MessageAttributes?.part?.StringValue)).size).toBe(
      Number(stored[0]?.MessageAttributes?.parts?.StringValue),
    );
  });

  it('answers 503 when SQS stays down, so that Meta retries', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .rejects(Object.assign(new Error('Service unavailable'), { name: 'InternalError' }));
    const response = await invoke(signedPost(body, SECRET));
    expect(response.statusCode).toBe(503);
    expect(sqsMock.commandCalls(SendMessageBatchCommand).length).toBeGreaterThan(1);
    expect(output.join('')).toContain('EnqueueFailures');
  });

  it('keeps a 1000-update body below 1 MiB in one message by default', async () => {
    const big = privateMessagesBody(1000, { textRepeat: 60 });
    expect(Buffer.byteLength(big)).toBeGreaterThan(256 * 1024);
    expect(Buffer.byteLength(big)).toBeLessThan(1024 * 1024 - 256);
    expect((await invoke(signedPost(big, SECRET))).statusCode).toBe(200);
    expect(entriesSentTo(DELIVERY_URL).map((entry) => entry.MessageBody)).toEqual([big]);
  });

  it('splits a 1000-update body larger than 256 KiB messages into several holding exactly its events', async () => {
    const big = privateMessagesBody(1000, { textRepeat: 60 });
    expect(Buffer.byteLength(big)).toBeGreaterThan(256 * 1024);
    expect(
      (
        await invoke(signedPost(big, SECRET), {
          ...LOCAL_ENV,
          MAXIMUM_MESSAGE_SIZE_BYTES: String(256 * 1024),
        })
      ).statusCode,
    ).toBe(200);
    const stored = entriesSentTo(DELIVERY_URL);
    expect(stored.length).toBeGreaterThan(1);
    for (const entry of stored)
      expect(Buffer.byteLength(entry.MessageBody ?? '')).toBeLessThanOrEqual(256 * 1024);
    const original = keysOfEnvelope(big);
    expect(original).toHaveLength(1000);
    expect(stored.flatMap((entry) => keysOfEnvelope(entry.MessageBody ?? ''))).toEqual(original);
    expect(entriesSentTo(QUARANTINE_URL)).toHaveLength(0);
  });

  it('honours MAXIMUM_MESSAGE_SIZE_BYTES', async () => {
    const response = await invoke(signedPost(privateMessagesBody(20), SECRET), {
      ...LOCAL_ENV,
      MAXIMUM_MESSAGE_SIZE_BYTES: '2048',
    });
    expect(response.statusCode).toBe(200);
    const stored = entriesSentTo(DELIVERY_URL);
    expect(stored.length).toBeGreaterThan(2);
    expect(stored.flatMap((entry) => keysOfEnvelope(entry.MessageBody ?? ''))).toEqual(
      keysOfEnvelope(privateMessagesBody(20)),
    );
  });
});

describe('POST quarantine', () => {
  it.each([
    ['a truncated body', 'invalid-json', fixture('message-text.json').subarray(0, 80)],
    ['bytes that are not UTF-8', 'invalid-json', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
    ['JSON that is not a WhatsApp envelope', 'not-whatsapp-envelope', fixture('not-whatsapp-envelope.json')],
  ])(
    'answers 200 for %s, quarantines the raw bytes with reason %s, and counts it',
    async (_, reason, raw) => {
      const response = await invoke(signedPost(raw, SECRET, { base64: true }));
      expect(response.statusCode).toBe(200);
      expect(entriesSentTo(DELIVERY_URL)).toHaveLength(0);
      const [quarantined, ...others] = entriesSentTo(QUARANTINE_URL);
      expect(others).toHaveLength(0);
      expect(Buffer.from(quarantined?.MessageBody ?? '', 'base64').equals(raw)).toBe(true);
      expect(quarantined?.MessageAttributes?.reason?.StringValue).toBe(reason);
      expect(quarantined?.MessageAttributes?.contentEncoding?.StringValue).toBe('base64');
      const emf = output.map((line) => line.trim()).filter((line) => line.includes('"_aws"'));
      expect(emf).toHaveLength(1);
      expect(JSON.parse(emf[0] ?? '{}')).toMatchObject({ DeliveriesQuarantined: 1 });
    },
  );

  it('quarantines a single event larger than a message as event-too-large and enqueues the others', async () => {
    const body = privateMessagesBody(3, { textRepeat: 0 }).replace('#1 ', `#1 ${'x'.repeat(300 * 1024)}`);
    const env = { ...LOCAL_ENV, MAXIMUM_MESSAGE_SIZE_BYTES: String(256 * 1024) };
    expect((await invoke(signedPost(body, SECRET), env)).statusCode).toBe(200);
    const stored = entriesSentTo(DELIVERY_URL).flatMap((entry) => keysOfEnvelope(entry.MessageBody ?? ''));
    const all = keysOfEnvelope(body);
    expect(stored).toEqual([all[0], all[2]]);
    const chunks = entriesSentTo(QUARANTINE_URL);
    expect(chunks.length).toBeGreaterThan(1);
    expect(new Set(chunks.map((entry) => entry.MessageAttributes?.reason?.StringValue))).toEqual(
      new Set(['event-too-large']),
    );
    const ordered = [...chunks].sort(
      (a, b) =>
        Number(a.MessageAttributes?.chunk?.StringValue) - Number(b.MessageAttributes?.chunk?.StringValue),
    );
    const piece = Buffer.from(ordered.map((entry) => entry.MessageBody).join(''), 'base64').toString('utf8');
    expect(keysOfEnvelope(piece)).toEqual([all[1]]);
  });

  it('answers 503 when the quarantine itself cannot be stored', async () => {
    sqsMock.on(SendMessageBatchCommand).rejects(Object.assign(new Error('down'), { name: 'InternalError' }));
    expect((await invoke(signedPost('not json', SECRET))).statusCode).toBe(503);
  });
});

describe('POST fanned out to several subscribers', () => {
  const BOT: SubscriberQueue = {
    name: 'bot',
    queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/bot',
    fields: ['messages'],
  };
  const CRM: SubscriberQueue = {
    name: 'crm',
    queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/crm',
  };
  const TWO = { ...LOCAL_ENV, SUBSCRIBER_QUEUES: encodeSubscriberQueues([BOT, CRM]) };
  const body = fixture('message-text.json');
  const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'RequestThrottled' });

  it('stores the delivery in both queues and answers 200', async () => {
    expect((await invoke(signedPost(body, SECRET), TWO)).statusCode).toBe(200);
    expect(entriesSentTo(BOT.queueUrl).map((entry) => entry.MessageBody)).toEqual([body.toString('utf8')]);
    expect(entriesSentTo(CRM.queueUrl).map((entry) => entry.MessageBody)).toEqual([body.toString('utf8')]);
    expect(output.join('')).toMatch(/"message":"Delivery accepted",.*"subscribers":\["bot","crm"\]/);
  });

  it('sends an account update to the subscriber without fields only', async () => {
    expect((await invoke(signedPost(fixture('account_update.json'), SECRET), TWO)).statusCode).toBe(200);
    expect(entriesSentTo(BOT.queueUrl)).toHaveLength(0);
    expect(entriesSentTo(CRM.queueUrl)).toHaveLength(1);
  });

  it('answers 200 once a throttled second queue has recovered within the retries', async () => {
    sqsMock
      .on(SendMessageBatchCommand, { QueueUrl: CRM.queueUrl })
      .rejectsOnce(throttled())
      .callsFake(succeedAll);
    expect((await invoke(signedPost(body, SECRET), TWO)).statusCode).toBe(200);
    expect(entriesSentTo(BOT.queueUrl)).toHaveLength(1);
    expect(entriesSentTo(CRM.queueUrl)).toHaveLength(2);
  });

  it('answers 503 naming the subscriber when the second queue stays throttled, though the first has it', async () => {
    sqsMock.on(SendMessageBatchCommand, { QueueUrl: CRM.queueUrl }).rejects(throttled());
    expect((await invoke(signedPost(body, SECRET), TWO)).statusCode).toBe(503);
    expect(entriesSentTo(BOT.queueUrl)).toHaveLength(1);
    const logged = output.join('');
    expect(logged).toContain(
      'could not be stored in the delivery queue of subscriber crm (RequestThrottled)',
    );
    expect(logged).toContain('"subscribers":["crm"]');
    expect(logged).toContain('EnqueueFailures');
  });

  it('quarantines a body that is not JSON once, in the quarantine queue only', async () => {
    expect((await invoke(signedPost('not json', SECRET), TWO)).statusCode).toBe(200);
    expect(entriesSentTo(QUARANTINE_URL)).toHaveLength(1);
    expect(entriesSentTo(BOT.queueUrl)).toHaveLength(0);
    expect(entriesSentTo(CRM.queueUrl)).toHaveLength(0);
  });

  it('quarantines once a part that both queues refuse as the sender fault', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) =>
      input.QueueUrl === QUARANTINE_URL
        ? succeedAll(input)
        : {
            Successful: [],
            Failed: (input.Entries ?? []).map((entry) => ({
              Id: entry.Id,
              SenderFault: true,
              Code: 'InvalidMessageContents',
            })),
          },
    );
    expect((await invoke(signedPost(body, SECRET), TWO)).statusCode).toBe(200);
    const [quarantined, ...others] = entriesSentTo(QUARANTINE_URL);
    expect(others).toHaveLength(0);
    expect(quarantined?.MessageAttributes?.reason?.StringValue).toBe('rejected-by-queue');
  });
});

describe('secrets from Secrets Manager', () => {
  const AWS_ENV = { ...QUEUES, WHATSAPP_SECRET_ID: 'whatsapp/webhook' };

  it('reads the secret once per container and reuses it across invocations', async () => {
    secretsMock
      .on(GetSecretValueCommand)
      .resolves({ SecretString: JSON.stringify({ appSecrets: ['old', SECRET], verifyToken: VERIFY_TOKEN }) });
    const handler = createReceiverHandler(AWS_ENV);
    const body = fixture('message-text.json');
    for (let i = 0; i < 3; i++) {
      expect(await handler(signedPost(body, SECRET))).toMatchObject({ statusCode: 200 });
    }
    const get = httpApiEvent({
      method: 'GET',
      query: { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '7' },
    });
    expect(await handler(get)).toMatchObject({ statusCode: 200, body: '7' });
    expect(await handler(signedPost(body, 'someone-else'))).toMatchObject({ statusCode: 401 });
    expect(secretsMock.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('as created by the stack (a verify token, no app secret): the handshake succeeds and POSTs get 401', async () => {
    secretsMock
      .on(GetSecretValueCommand)
      .resolves({ SecretString: JSON.stringify({ appSecrets: [], verifyToken: VERIFY_TOKEN }) });
    const handler = createReceiverHandler(AWS_ENV);
    const get = httpApiEvent({
      method: 'GET',
      query: { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '8' },
    });
    expect(await handler(get)).toMatchObject({ statusCode: 200, body: '8' });
    expect(await handler(signedPost(fixture('message-text.json'), SECRET))).toMatchObject({
      statusCode: 401,
    });
    expect(await handler(signedPost(fixture('message-text.json'), ''))).toMatchObject({ statusCode: 401 });
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('answers 500 to both methods when the secret holds neither an app secret nor a verify token', async () => {
    secretsMock.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ appSecrets: [] }) });
    expect((await invoke(signedPost(fixture('message-text.json'), SECRET), AWS_ENV)).statusCode).toBe(500);
    const get = httpApiEvent({
      method: 'GET',
      query: { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '8' },
    });
    expect((await invoke(get, AWS_ENV)).statusCode).toBe(500);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('answers 503 when Secrets Manager is unavailable', async () => {
    secretsMock
      .on(GetSecretValueCommand)
      .rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    expect((await invoke(signedPost(fixture('message-text.json'), SECRET), AWS_ENV)).statusCode).toBe(503);
  });
});

/**
 * The same request as a Lambda function URL delivers it (payload 2.0 as well): route key `$default`, the URL's
 * own domain, and whatever path the caller used, since a function URL answers on every path.
 */
function viaFunctionUrl(event: APIGatewayProxyEventV2, path = '/webhook'): APIGatewayProxyEventV2 {
  const urlId = 'n4bqi7ltmgvbmzpvg6ahaplfae0lqfpo';
  return {
    ...event,
    routeKey: '$default',
    rawPath: path,
    headers: { ...event.headers, host: `${urlId}.lambda-url.eu-west-1.on.aws` },
    requestContext: {
      ...event.requestContext,
      apiId: urlId,
      domainName: `${urlId}.lambda-url.eu-west-1.on.aws`,
      domainPrefix: urlId,
      routeKey: '$default',
      http: { ...event.requestContext.http, path },
    },
  };
}

describe('behind a function URL (endpoint: function-url), the same answers', () => {
  const body = fixture('message-text.json');
  const handshake = {
    'hub.mode': 'subscribe',
    'hub.verify_token': VERIFY_TOKEN,
    'hub.challenge': '1158201444',
  };

  it('answers the GET handshake with the challenge, and a wrong token with 403', async () => {
    const get = (query: Record<string, string>) =>
      invoke(viaFunctionUrl(httpApiEvent({ method: 'GET', query })));
    expect(await get(handshake)).toMatchObject({ statusCode: 200, body: '1158201444' });
    expect(await get({ ...handshake, 'hub.verify_token': 'nope' })).toMatchObject({
      statusCode: 403,
      body: '',
    });
  });

  it('enqueues a signed POST as received and answers 200; an unsigned one gets 401 and enqueues nothing', async () => {
    expect((await invoke(viaFunctionUrl(signedPost(body, SECRET)))).statusCode).toBe(200);
    expect(entriesSentTo(DELIVERY_URL).map((entry) => entry.MessageBody)).toEqual([body.toString('utf8')]);

    sqsMock.resetHistory();
    expect((await invoke(viaFunctionUrl(signedPost(body, undefined)))).statusCode).toBe(401);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('answers the same on any path: the signature, not the route, decides', async () => {
    for (const path of ['/', '/webhook/', '/anything']) {
      expect((await invoke(viaFunctionUrl(signedPost(body, SECRET), path))).statusCode).toBe(200);
      expect((await invoke(viaFunctionUrl(signedPost(body, 'someone-else'), path))).statusCode).toBe(401);
    }
    expect((await invoke(viaFunctionUrl(httpApiEvent({ method: 'PUT', body: '{}' }), '/'))).statusCode).toBe(
      405,
    );
  });
});

describe('configuration and methods', () => {
  it('answers 500 with a clear log when a queue URL is missing', async () => {
    const response = await invoke(signedPost(fixture('message-text.json'), SECRET), {
      WHATSAPP_APP_SECRETS: SECRET,
    });
    expect(response.statusCode).toBe(500);
    expect(output.join('')).toContain('SUBSCRIBER_QUEUES');
  });

  it('answers 500 with the reason in the log when MAXIMUM_MESSAGE_SIZE_BYTES is not a usable number', async () => {
    for (const value of ['lots', '100']) {
      const response = await invoke(signedPost(fixture('message-text.json'), SECRET), {
        ...LOCAL_ENV,
        MAXIMUM_MESSAGE_SIZE_BYTES: value,
      });
      expect(response.statusCode).toBe(500);
    }
    expect(output.join('')).toContain('MAXIMUM_MESSAGE_SIZE_BYTES must be a number');
    expect(output.join('')).toContain('maximumMessageSizeBytes 100 is too small');
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('answers 405 to other methods', async () => {
    expect((await invoke(httpApiEvent({ method: 'PUT', body: '{}' }))).statusCode).toBe(405);
  });
});

describe('metrics and logs', () => {
  it('publishes one EMF document per invocation with the receiver metrics', async () => {
    const body = privateMessagesBody(5);
    expect((await invoke(signedPost(body, SECRET))).statusCode).toBe(200);
    const emf = output.map((line) => line.trim()).filter((line) => line.includes('"_aws"'));
    expect(emf).toHaveLength(1);
    const document = JSON.parse(emf[0] ?? '{}');
    expect(document._aws.CloudWatchMetrics[0].Namespace).toBe('WhatsAppWebhookDedup');
    expect(document).toMatchObject({
      DeliveriesAccepted: 1,
      EventsPerDelivery: 5,
      service: 'whatsapp-webhook-dedup',
    });
  });

  it('counts a rejected signature', async () => {
    await invoke(signedPost(privateMessagesBody(1), 'wrong'));
    const emf = output.filter((line) => line.includes('"_aws"'));
    expect(emf).toHaveLength(1);
    expect(JSON.parse(emf[0] ?? '{}')).toMatchObject({ SignatureRejected: 1 });
  });

  it('never logs message text, names or phone numbers, whatever happens to the body', async () => {
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'DEBUG');
    const body = privateMessagesBody(3);
    const tooLarge = privateMessagesBody(2).replace('#1 ', `#1 ${'x'.repeat(300 * 1024)}`);
    await invoke(signedPost(body, SECRET));
    await invoke(signedPost(body, 'wrong'));
    await invoke(signedPost(body.slice(0, -10), SECRET));
    await invoke(
      signedPost(JSON.stringify({ object: 'page', note: PRIVATE_TEXT, phone: SENDER_PHONE }), SECRET),
    );
    await invoke(signedPost(`{"object":"whatsapp_business_account","entry":[${PRIVATE_TEXT}`, SECRET));
    await invoke(signedPost(tooLarge, SECRET));
    sqsMock.on(SendMessageBatchCommand).rejects(Object.assign(new Error('down'), { name: 'InternalError' }));
    await invoke(signedPost(body, SECRET));

    const logged = output.join('');
    for (const word of ['Delivery accepted', 'bad signature', 'quarantined', 'answering 503']) {
      expect(logged).toContain(word);
    }
    for (const secret of [
      PRIVATE_TEXT,
      'private',
      SENDER_PHONE,
      DISPLAY_PHONE_NUMBER,
      PROFILE_NAME,
      SECRET,
    ]) {
      expect(logged).not.toContain(secret);
    }
  });
});
