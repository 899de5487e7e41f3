/**
 * The SDK client timeouts: they reach a real client's HTTP handler, a hung socket is abandoned after the
 * request timeout (not after the service's default of minutes), and the worst case of each call fits the
 * function timeout it runs under.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSettings } from '../../../contract/settings.ts';
import {
  SDK_TIMEOUTS,
  type SdkClientUse,
  sdkClientConfig,
  worstCaseCallMs,
} from '../../../functions/commons/sdk-client-config.ts';
import { QUARANTINE_BUDGET_MS } from '../../../functions/consumer/consumer-quarantine.ts';
import { RETRY_BUDGET_MS } from '../../../functions/receiver/receive-webhook.ts';
import { resolvedSdkTimeouts } from '../../support/resolved-sdk-timeouts.ts';

const CLIENT_BASE = {
  region: 'eu-west-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
};

const CLIENTS: Record<
  SdkClientUse,
  (endpoint?: string) => DynamoDBClient | SQSClient | SecretsManagerClient | S3Client
> = {
  consumerDynamoDb: (endpoint) =>
    new DynamoDBClient({ ...CLIENT_BASE, endpoint, ...sdkClientConfig('consumerDynamoDb') }),
  consumerSqs: (endpoint) => new SQSClient({ ...CLIENT_BASE, endpoint, ...sdkClientConfig('consumerSqs') }),
  receiverSqs: (endpoint) => new SQSClient({ ...CLIENT_BASE, endpoint, ...sdkClientConfig('receiverSqs') }),
  receiverSecretsManager: (endpoint) =>
    new SecretsManagerClient({ ...CLIENT_BASE, endpoint, ...sdkClientConfig('receiverSecretsManager') }),
  consumerSecretsManager: (endpoint) =>
    new SecretsManagerClient({ ...CLIENT_BASE, endpoint, ...sdkClientConfig('consumerSecretsManager') }),
  archiverS3: (endpoint) => new S3Client({ ...CLIENT_BASE, endpoint, ...sdkClientConfig('archiverS3') }),
};

describe('sdkClientConfig', () => {
  it.each(Object.keys(SDK_TIMEOUTS) as SdkClientUse[])(
    '%s: the timeouts and attempts reach the client’s HTTP handler',
    async (use) => {
      const expected = SDK_TIMEOUTS[use];
      expect(await resolvedSdkTimeouts(CLIENTS[use]())).toEqual({
        connectionTimeout: expected.connectionTimeoutMs,
        requestTimeout: expected.requestTimeoutMs,
        throwOnRequestTimeout: true,
        maxAttempts: expected.maxAttempts,
      });
    },
  );

  it('a client without it has neither timeout (the service default is minutes)', async () => {
    expect(await resolvedSdkTimeouts(new DynamoDBClient(CLIENT_BASE))).toMatchObject({
      connectionTimeout: undefined,
      requestTimeout: undefined,
    });
  });

  it('keeps every timeout well under the shortest function timeout it serves', () => {
    for (const timeouts of Object.values(SDK_TIMEOUTS)) {
      expect(timeouts.connectionTimeoutMs).toBeLessThanOrEqual(timeouts.requestTimeoutMs);
      expect(timeouts.requestTimeoutMs).toBeLessThanOrEqual(3_000);
    }
  });
});

describe('worst case of a call against the function timeout', () => {
  const settings = resolveSettings();

  it('counts each attempt’s request timeout and the throttling backoff between attempts', () => {
    expect(worstCaseCallMs('consumerDynamoDb')).toBe(3 * 3_000 + 1_000 + 2_000);
    expect(worstCaseCallMs('receiverSqs')).toBe(2_000);
    expect(worstCaseCallMs('receiverSecretsManager')).toBe(2 * 2_000 + 1_000);
  });

  it('consumer: a DynamoDB call, or a quarantine that starts its last attempt at its deadline, takes under half the timeout', () => {
    const half = (settings.consumerTimeoutSeconds * 1000) / 2;
    expect(worstCaseCallMs('consumerDynamoDb')).toBeLessThan(half);
    expect(QUARANTINE_BUDGET_MS + worstCaseCallMs('consumerSqs')).toBeLessThan(half);
  });

  it('receiver: the secret read, then a last enqueue attempt and one quarantine attempt, end before the timeout', () => {
    // Retries start no later than RETRY_BUDGET_MS after arrival, and arrival is taken before the secret read.
    const worst =
      Math.max(worstCaseCallMs('receiverSecretsManager'), RETRY_BUDGET_MS) +
      2 * worstCaseCallMs('receiverSqs');
    expect(worst).toBeLessThan(settings.receiverTimeoutSeconds * 1000);
  });
});

describe('a hung socket', () => {
  // Accepts every request and never answers: what a half-open connection looks like to the client.
  let server: Server;
  let endpoint: string;
  let requests = 0;

  beforeAll(async () => {
    server = createServer(() => {
      requests++;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('is abandoned after the request timeout, once per allowed attempt', async () => {
    const timed = async (use: SdkClientUse, send: () => Promise<unknown>) => {
      const started = performance.now();
      const error = await send().catch((e: unknown) => e);
      return { use, error: (error as Error).name, ms: performance.now() - started };
    };
    const sqs = CLIENTS.receiverSqs(endpoint) as SQSClient;
    const secrets = CLIENTS.receiverSecretsManager(endpoint) as SecretsManagerClient;
    const results = await Promise.all([
      timed('receiverSqs', () => sqs.send(new ListQueuesCommand({}))),
      timed('receiverSecretsManager', () => secrets.send(new GetSecretValueCommand({ SecretId: 's' }))),
    ]);
    for (const { use, error, ms } of results) {
      const { requestTimeoutMs, maxAttempts } = SDK_TIMEOUTS[use];
      expect(error, use).toBe('TimeoutError');
      expect(ms, use).toBeGreaterThanOrEqual(maxAttempts * requestTimeoutMs - 50);
      expect(ms, use).toBeLessThan(worstCaseCallMs(use) + 1_000);
    }
    expect(requests).toBe(
      SDK_TIMEOUTS.receiverSqs.maxAttempts + SDK_TIMEOUTS.receiverSecretsManager.maxAttempts,
    );
  }, 15_000);

  it('the DynamoDB client gives up too (one attempt here, to keep the test short)', async () => {
    const client = new DynamoDBClient({
      ...CLIENT_BASE,
      endpoint,
      ...sdkClientConfig('consumerDynamoDb'),
      maxAttempts: 1,
    });
    const started = performance.now();
    const error = await client.send(new ListTablesCommand({})).catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
    expect(performance.now() - started).toBeLessThan(SDK_TIMEOUTS.consumerDynamoDb.requestTimeoutMs + 1_000);
  }, 15_000);
});
