/**
 * Both Lambdas build their SDK clients with the timeouts of `sdk-client-config.ts`: the client classes are
 * replaced by subclasses that record every instance, then the real wiring (`createConsumerFromEnv`,
 * `createReceiverHandler`) runs and the recorded clients' resolved configuration is read back.
 */
import type * as DynamoDbModule from '@aws-sdk/client-dynamodb';
import type * as SecretsManagerModule from '@aws-sdk/client-secrets-manager';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type * as SqsModule from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLambdaContext } from '../../../cli/local/lambda-context.ts';
import { SDK_TIMEOUTS, type SdkClientUse } from '../../../functions/commons/sdk-client-config.ts';
import { createConsumerFromEnv } from '../../../functions/consumer/create-consumer.ts';
import { createReceiverHandler } from '../../../functions/receiver.ts';
import { resolvedSdkTimeouts } from '../../support/resolved-sdk-timeouts.ts';
import { httpApiEvent } from '../../support/webhooks/webhook-requests.ts';

type Service = 'dynamodb' | 'sqs' | 'secretsManager';
type RecordedClient = Parameters<typeof resolvedSdkTimeouts>[0];
const created = vi.hoisted(() => [] as Array<{ service: string; client: unknown }>);

vi.mock('@aws-sdk/client-dynamodb', async (importOriginal) => {
  const actual = await importOriginal<typeof DynamoDbModule>();
  class RecordingDynamoDBClient extends actual.DynamoDBClient {
    constructor(...args: ConstructorParameters<typeof actual.DynamoDBClient>) {
      super(...args);
      created.push({ service: 'dynamodb', client: this });
    }
  }
  return { ...actual, DynamoDBClient: RecordingDynamoDBClient };
});
vi.mock('@aws-sdk/client-sqs', async (importOriginal) => {
  const actual = await importOriginal<typeof SqsModule>();
  class RecordingSQSClient extends actual.SQSClient {
    constructor(...args: ConstructorParameters<typeof actual.SQSClient>) {
      super(...args);
      created.push({ service: 'sqs', client: this });
    }
  }
  return { ...actual, SQSClient: RecordingSQSClient };
});
vi.mock('@aws-sdk/client-secrets-manager', async (importOriginal) => {
  const actual = await importOriginal<typeof SecretsManagerModule>();
  class RecordingSecretsManagerClient extends actual.SecretsManagerClient {
    constructor(...args: ConstructorParameters<typeof actual.SecretsManagerClient>) {
      super(...args);
      created.push({ service: 'secretsManager', client: this });
    }
  }
  return { ...actual, SecretsManagerClient: RecordingSecretsManagerClient };
});

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012';

function clientsOf(service: Service): RecordedClient[] {
  return created.filter((entry) => entry.service === service).map((entry) => entry.client as RecordedClient);
}

function expected(use: SdkClientUse) {
  const timeouts = SDK_TIMEOUTS[use];
  return {
    connectionTimeout: timeouts.connectionTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    throwOnRequestTimeout: true,
    maxAttempts: timeouts.maxAttempts,
  };
}

beforeEach(() => {
  created.length = 0;
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the consumer Lambda', () => {
  it('builds one DynamoDB client and one SQS client, each with its timeouts, on the first invocation', async () => {
    const handler = createConsumerFromEnv(
      {},
      {
        CLAIM_TABLE_NAME: 'claims',
        QUARANTINE_QUEUE_URL: `${QUEUE}/quarantine`,
        DELIVERY_QUEUE_URL: `${QUEUE}/deliveries`,
      },
    );
    expect(created).toEqual([]);
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'SILENT');
    const context = () =>
      createLambdaContext({ functionName: 'consumer', region: 'eu-west-1', deadlineMs: Date.now() + 30_000 });
    // Twice: the clients are built once per container, not per invocation.
    await handler({ Records: [] }, context());
    await handler({ Records: [] }, context());
    const [dynamodb, ...moreDynamoDb] = clientsOf('dynamodb');
    const [sqs, ...moreSqs] = clientsOf('sqs');
    expect([moreDynamoDb, moreSqs]).toEqual([[], []]);
    expect(await resolvedSdkTimeouts(dynamodb as RecordedClient)).toEqual(expected('consumerDynamoDb'));
    expect(await resolvedSdkTimeouts(sqs as RecordedClient)).toEqual(expected('consumerSqs'));
  });
});

describe('the receiver Lambda', () => {
  const secretsMock = mockClient(SecretsManagerClient);
  afterEach(() => secretsMock.reset());

  it('builds its SQS and Secrets Manager clients with their timeouts on the first request', async () => {
    secretsMock
      .on(GetSecretValueCommand)
      .resolves({ SecretString: JSON.stringify({ appSecrets: [], verifyToken: 'tok' }) });
    const handler = createReceiverHandler({
      SUBSCRIBER_QUEUES: JSON.stringify([{ name: 'default', queueUrl: `${QUEUE}/deliveries` }]),
      QUARANTINE_QUEUE_URL: `${QUEUE}/quarantine`,
      WHATSAPP_SECRET_ID: 'whatsapp/webhook',
    });
    const get = httpApiEvent({
      method: 'GET',
      query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'tok', 'hub.challenge': '5' },
    });
    expect(await handler(get)).toMatchObject({ statusCode: 200, body: '5' });
    // The secret was read through the recorded client, so the configured one is the one in use.
    expect(secretsMock.commandCalls(GetSecretValueCommand)).toHaveLength(1);

    const [sqs, ...moreSqs] = clientsOf('sqs');
    const [secrets, ...moreSecrets] = clientsOf('secretsManager');
    expect([moreSqs, moreSecrets]).toEqual([[], []]);
    expect(await resolvedSdkTimeouts(sqs as RecordedClient)).toEqual(expected('receiverSqs'));
    expect(await resolvedSdkTimeouts(secrets as RecordedClient)).toEqual(expected('receiverSecretsManager'));
  });
});
