/**
 * `GET /local/key` and `GET /local/dead-letters` of the local server, over the real operator views with the
 * claim table mocked (aws-sdk-client-mock): what each answers for a key, a malformed key, an unknown
 * subscriber, and a stack still starting.
 */
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../../contract/settings.ts';
import type { LocalInfo } from '../../../local/local-stack-api.ts';
import { FaultSwitch } from '../../../local/stack/fault-switch.ts';
import {
  createLocalServer,
  type LocalPipeline,
  type LocalServer,
} from '../../../local/stack/local-server.ts';
import {
  createOperatorViews,
  inProcessTarget,
  type LocalDeadLetters,
} from '../../../local/stack/operator-views.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const KEY = 'msg:wamid.endpoint.1';
const dynamodb = mockClient(DynamoDBDocumentClient);

const info: LocalInfo = {
  dynamodbEndpoint: 'http://127.0.0.1:1',
  sqsEndpoint: 'http://127.0.0.1:1',
  tableName: 'claims',
  queueUrl: 'http://queue/default',
  dlqUrl: 'http://queue/default-dlq',
  quarantineQueueUrl: 'http://queue/quarantine',
  logDigestKey: 'log-digest-key',
  provenanceKey: 'provenance-key',
  subscribersSource: 'test',
  subscribers: ['default', 'crm'].map((name) => ({
    name,
    entry: 'functions/handlers.ts',
    fields: null,
    numbers: null,
    wabas: null,
    keyNamespace: name === 'default' ? null : name,
    handlers: ['onMessage'],
    queueUrl: `http://queue/${name}`,
    dlqUrl: `http://queue/${name}-dlq`,
    settings: DEFAULT_SETTINGS,
  })),
};

const DEAD_LETTERS: LocalDeadLetters = {
  subscribers: [],
  quarantine: { counts: { visible: 1, inFlight: 0, delayed: 0 }, bodies: 1, newest: [] },
};

let pipeline: LocalPipeline | undefined;
let local: LocalServer;
let url: string;
const sdkClients = {
  sqs: new SQSClient({ region: 'us-east-1' }),
  dynamodb: new DynamoDBClient({ region: 'us-east-1' }),
};

beforeAll(async () => {
  const views = createOperatorViews({
    target: inProcessTarget({
      info,
      maximumMessageSizeBytes: DEFAULT_SETTINGS.maximumMessageSizeBytes,
      sqs: sdkClients.sqs,
      documentClient: DynamoDBDocumentClient.from(sdkClients.dynamodb),
      consumer: () => undefined,
    }),
    clock: () => NOW,
  });
  const operator = { keyLookup: views.keyLookup, deadLetters: async () => DEAD_LETTERS };
  pipeline = { info, operator } as unknown as LocalPipeline;
  local = createLocalServer({
    pipeline: () => pipeline,
    faults: new FaultSwitch(),
    chartJsPath: '/dev/null',
    log: () => undefined,
  });
  await new Promise<void>((resolve) => local.server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(local.server.address() as AddressInfo).port}`;
});

afterEach(() => dynamodb.reset());

afterAll(async () => {
  await local?.close();
  sdkClients.sqs.destroy();
  sdkClients.dynamodb.destroy();
});

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('GET /local/key', () => {
  it("answers each subscriber's claim under its namespace", async () => {
    dynamodb.on(GetCommand, { Key: { pk: KEY } }).resolves({
      Item: { pk: KEY, state: 'done', owner: 'o', field: 'messages', attempt: 1, doneAt: NOW - 1_000 },
    });
    dynamodb.on(GetCommand, { Key: { pk: `crm#${KEY}` } }).resolves({});

    const { status, body } = await get(`/local/key?key=${encodeURIComponent(KEY)}`);

    expect(status).toBe(200);
    expect(body).toMatchObject({
      key: KEY,
      subscribers: [
        { subscriber: 'default', tableName: 'claims', pk: KEY, claim: { status: 'done', state: 'done' } },
        { subscriber: 'crm', pk: `crm#${KEY}`, receivesField: true },
      ],
    });
    expect((body.subscribers as { claim?: unknown }[])[1]?.claim).toBeUndefined();
  });

  it('answers one subscriber when asked', async () => {
    dynamodb.on(GetCommand).resolves({});
    const { status, body } = await get(`/local/key?key=${encodeURIComponent(KEY)}&subscriber=crm`);
    expect(status).toBe(200);
    expect((body.subscribers as { subscriber: string }[]).map((view) => view.subscriber)).toEqual(['crm']);
    expect(dynamodb.commandCalls(GetCommand).map((call) => call.args[0].input.Key)).toEqual([
      { pk: `crm#${KEY}` },
    ]);
  });

  it.each([
    ['', /^Usage: \/local\/key\?key=<event key>/],
    ['?key=', /^Usage: /],
    ['?key=hello', /^unknown event key "hello": keys look like msg:<wamid>/],
    ['?key=st:wamid.x', /must look like st:<wamid>:<status>/],
  ])('answers 400 for %j, reading nothing', async (query, message) => {
    const { status, body } = await get(`/local/key${query}`);
    expect(status).toBe(400);
    expect(body.message).toMatch(message);
    expect(dynamodb.calls()).toHaveLength(0);
  });

  it('answers 404 for a subscriber the stack does not run', async () => {
    const { status, body } = await get(`/local/key?key=${encodeURIComponent(KEY)}&subscriber=billing`);
    expect({ status, body }).toEqual({ status: 404, body: { message: 'No subscriber billing.' } });
    expect(dynamodb.calls()).toHaveLength(0);
  });

  it('answers 500 when the claim table fails', async () => {
    dynamodb.on(GetCommand).rejects(new Error('table gone'));
    const { status } = await get(`/local/key?key=${encodeURIComponent(KEY)}`);
    expect(status).toBe(500);
  });
});

describe('GET /local/dead-letters', () => {
  it("answers the operator views' counts and records", async () => {
    expect(await get('/local/dead-letters')).toEqual({ status: 200, body: DEAD_LETTERS });
  });

  it('answers 503 while the stack is starting', async () => {
    const running = pipeline;
    pipeline = undefined;
    try {
      expect((await get('/local/dead-letters')).status).toBe(503);
      expect((await get(`/local/key?key=${KEY}`)).status).toBe(503);
    } finally {
      pipeline = running;
    }
  });
});
