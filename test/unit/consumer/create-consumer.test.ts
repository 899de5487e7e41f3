/**
 * The consumer reads its settings from the environment and checks, at start, only what each value must be on
 * its own (retention, lease margin). How the settings compare with each other (the lease against the queue's
 * visibility timeout) was checked at synth or at local-stack start, the only places where all are known.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  PutCommand,
  type PutCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { inboundMessages, messagesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { consumerEnvironment, ENV } from '../../../contract/environment.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../../contract/metric-names.ts';
import { resolveSettings, UnsafeSettingsError } from '../../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../../contract/subscribers.ts';
import { ClaimStoreConfigError } from '../../../functions/claims/errors.ts';
import { keyedDigest, logDigest, useLogDigestKey } from '../../../functions/commons/log-digest.ts';
import {
  type ConsumerConfig,
  consumerConfigFromEnv,
  createConsumerFromEnv,
  createConsumerHandler,
} from '../../../functions/consumer/create-consumer.ts';
import { defineWebhookHandlers } from '../../../functions/consumer/handler-api.ts';

const NOW = Date.UTC(2026, 0, 15, 12);
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

/** The consumer's environment as the construct writes it from resolved settings. */
function environmentFor(settings: ReturnType<typeof resolveSettings>): NodeJS.ProcessEnv {
  return consumerEnvironment({
    tableName: 'claims',
    subscriberName: DEFAULT_SUBSCRIBER_NAME,
    quarantineQueueUrl: 'http://sqs.eu-west-1.localhost/000000000000/webhook-quarantine',
    deliveryQueueUrl: 'http://sqs.eu-west-1.localhost/000000000000/webhook-deliveries',
    retentionDays: settings.retentionDays,
    leaseMarginMs: settings.leaseMarginMs,
    maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
  });
}

function startConsumer(config: ConsumerConfig) {
  const documentClient = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'eu-west-1', credentials }),
  );
  const dynamodb = mockClient(documentClient);
  const consume = createConsumerHandler(config, {
    documentClient,
    sqs: new SQSClient({ region: 'eu-west-1', credentials }),
    handlers: defineWebhookHandlers({ onMessage: () => {} }),
    logger: new Logger({ serviceName: SERVICE_NAME, logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
  });
  return { dynamodb, consume };
}

function oneMessage(): SQSEvent {
  return {
    Records: [
      {
        messageId: 'record-1',
        receiptHandle: 'rh-1',
        body: messagesBody(inboundMessages(1)),
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: String(NOW),
          SenderId: '000000000000',
          ApproximateFirstReceiveTimestamp: String(NOW),
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:webhook-deliveries',
        awsRegion: 'eu-west-1',
      },
    ],
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a lease margin accepted at synth', () => {
  it('starts and leases with it, though the default timeouts would not leave room for it', async () => {
    // 150 s reaches the default 181 s visibility timeout, but a 60 s consumer gets 6 × 60 + 1 = 361 s.
    expect(() => resolveSettings({ leaseMarginMs: 150_000 })).toThrow(UnsafeSettingsError);
    const settings = resolveSettings({ consumerTimeoutSeconds: 60, leaseMarginMs: 150_000 });

    const config = consumerConfigFromEnv(environmentFor(settings));
    expect(config.leaseMarginMs).toBe(150_000);

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
    const { dynamodb, consume } = startConsumer(config);
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    expect(await consume(oneMessage(), { getRemainingTimeInMillis: () => 60_000 })).toEqual({
      batchItemFailures: [],
    });
    const claim = dynamodb.commandCalls(PutCommand)[0]?.args[0].input as PutCommandInput;
    expect(claim.Item).toMatchObject({ state: 'processing', leaseUntil: NOW + 60_000 + 150_000 });
  });
});

describe('settings the consumer refuses at start', () => {
  const defaults = resolveSettings();

  it("refuses a retention below Meta's retry window with the same rule, and message, as at synth", () => {
    const env = { ...environmentFor(defaults), [ENV.retentionDays]: '6' };
    const atStart = () => startConsumer(consumerConfigFromEnv(env));
    expect(atStart).toThrow(ClaimStoreConfigError);
    const atSynth = () => resolveSettings({ retentionDays: 6 });
    expect(atSynth).toThrow(UnsafeSettingsError);
    expect(messageOf(atStart)).toBe(messageOf(atSynth));
  });

  it('refuses a negative lease margin with the same message as at synth', () => {
    const env = { ...environmentFor(defaults), [ENV.leaseMarginMs]: '-1' };
    const atStart = () => startConsumer(consumerConfigFromEnv(env));
    expect(atStart).toThrow(ClaimStoreConfigError);
    expect(messageOf(atStart)).toBe(messageOf(() => resolveSettings({ leaseMarginMs: -1 })));
  });
});

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('createConsumerFromEnv: the log digest key', () => {
  const secrets = mockClient(SecretsManagerClient);
  afterEach(() => secrets.reset());
  const context = { getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
  const noRecords: SQSEvent = { Records: [] };
  const env = () => ({ ...environmentFor(resolveSettings()), AWS_REGION: 'eu-west-1' });

  it('digests keys under LOG_DIGEST_KEY, the local stack’s key', async () => {
    const consume = createConsumerFromEnv(defineWebhookHandlers({}), {
      ...env(),
      [ENV.logDigestKey]: 'local-key',
    });
    await consume(noRecords, context);
    expect(logDigest('msg:wamid.X')).toBe(keyedDigest('local-key', 'msg:wamid.X'));
  });

  it('reads the key once from the secret LOG_DIGEST_SECRET_ID names', async () => {
    secrets
      .on(GetSecretValueCommand, { SecretId: 'arn:log-digest' })
      .resolves({ SecretString: 'deployed-key' });
    const consume = createConsumerFromEnv(defineWebhookHandlers({}), {
      ...env(),
      [ENV.logDigestSecretId]: 'arn:log-digest',
    });
    await consume(noRecords, context);
    await consume(noRecords, context);
    expect(logDigest('msg:wamid.X')).toBe(keyedDigest('deployed-key', 'msg:wamid.X'));
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('goes on with a key of its own when the secret cannot be read: no batch waits on a log concern', async () => {
    useLogDigestKey('before');
    secrets
      .on(GetSecretValueCommand)
      .rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    const consume = createConsumerFromEnv(defineWebhookHandlers({}), {
      ...env(),
      [ENV.logDigestSecretId]: 'arn:log-digest',
    });
    await expect(consume(noRecords, context)).resolves.toEqual({ batchItemFailures: [] });
    expect(logDigest('msg:wamid.X')).toBe(keyedDigest('before', 'msg:wamid.X'));
  });
});
