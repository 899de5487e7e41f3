import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import {
  type ConsumerEnvironmentInput,
  consumerEnvironment,
  ENV,
  type ReceiverEnvironmentInput,
  receiverEnvironment,
} from '../../../contract/environment.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../../contract/metric-names.ts';
import { resolveSettings } from '../../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../../contract/subscribers.ts';
import { consumerConfigFromEnv } from '../../../functions/consumer/create-consumer.ts';
import { webhookSecretsSource } from '../../../functions/receiver/webhook-secrets.ts';
import { receiverConfigFromEnv } from '../../../functions/receiver.ts';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012';
const POWERTOOLS = ['POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_METRICS_NAMESPACE'];
const APP_VARIABLES = new Set<string>(Object.values(ENV));

// Values away from the defaults, so that a reader falling back to a default cannot pass the round trip.
const defaults = resolveSettings();
const RETENTION_DAYS = defaults.retentionDays + 2;
const LEASE_MARGIN_MS = defaults.leaseMarginMs + 1_000;
const MAXIMUM_MESSAGE_SIZE_BYTES = 1_048_576;

const secretsProvider = () =>
  new SecretsProvider({ awsSdkV3Client: new SecretsManagerClient({ region: 'eu-west-1' }) });

/** The environment, and the names a reader looked up in it. */
function watched(env: Record<string, string>): { env: NodeJS.ProcessEnv; read: Set<string> } {
  const read = new Set<string>();
  const proxy = new Proxy(env, {
    get(target, name, receiver) {
      if (typeof name === 'string') read.add(name);
      return Reflect.get(target, name, receiver);
    },
  });
  return { env: proxy, read };
}

/** Our own variables (ENV) among the written ones. */
function appVariables(env: Record<string, string>): string[] {
  return Object.keys(env).filter((name) => APP_VARIABLES.has(name));
}

function expectNoUndefined(env: Record<string, string>): void {
  for (const [name, value] of Object.entries(env)) {
    expect(typeof value, name).toBe('string');
    expect(value, name).not.toBe('undefined');
  }
}

const receiverInput = {
  subscriberQueues: [
    { name: 'bot', queueUrl: `${QUEUE}/bot-deliveries`, fields: ['messages'] },
    { name: 'crm', queueUrl: `${QUEUE}/crm-deliveries` },
  ],
  quarantineQueueUrl: `${QUEUE}/quarantine`,
  maximumMessageSizeBytes: MAXIMUM_MESSAGE_SIZE_BYTES,
} satisfies Omit<ReceiverEnvironmentInput, 'webhookSecrets'>;

const consumerInput = {
  tableName: 'claims',
  subscriberName: 'crm',
  quarantineQueueUrl: `${QUEUE}/quarantine`,
  deliveryQueueUrl: `${QUEUE}/crm-deliveries`,
  retentionDays: RETENTION_DAYS,
  leaseMarginMs: LEASE_MARGIN_MS,
  maximumMessageSizeBytes: MAXIMUM_MESSAGE_SIZE_BYTES,
} satisfies ConsumerEnvironmentInput;

describe('receiverEnvironment', () => {
  it('with a secret id: writes exactly what the receiver reads, and the receiver reads back the same values', () => {
    const env = receiverEnvironment({
      ...receiverInput,
      webhookSecrets: { secretId: 'whatsapp/webhook' },
      logLevel: 'DEBUG',
    });
    expect(Object.keys(env).sort()).toEqual(
      [
        ...POWERTOOLS,
        'POWERTOOLS_LOG_LEVEL',
        ENV.subscriberQueues,
        ENV.quarantineQueueUrl,
        ENV.maximumMessageSizeBytes,
        ENV.webhookSecretId,
      ].sort(),
    );
    expect(env).toMatchObject({
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
    });

    const { env: reader, read } = watched(env);
    expect(receiverConfigFromEnv(reader)).toEqual(receiverInput);
    expect(webhookSecretsSource(reader, secretsProvider).origin).toBe('secrets-manager:whatsapp/webhook');
    expect(appVariables(env).filter((name) => !read.has(name))).toEqual([]);
  });

  it('with inline secrets: writes the app secrets and verify token that the environment source loads back', async () => {
    const env = receiverEnvironment({
      ...receiverInput,
      webhookSecrets: { appSecrets: ['current-secret', 'rotated-secret'], verifyToken: 'verify-me' },
    });
    expect(appVariables(env).sort()).toEqual(
      [
        ENV.subscriberQueues,
        ENV.quarantineQueueUrl,
        ENV.maximumMessageSizeBytes,
        ENV.appSecrets,
        ENV.verifyToken,
      ].sort(),
    );

    const { env: reader, read } = watched(env);
    expect(receiverConfigFromEnv(reader)).toEqual(receiverInput);
    const source = webhookSecretsSource(reader, () => {
      throw new Error('no Secrets Manager without a secret id');
    });
    await expect(source.load()).resolves.toEqual({
      appSecrets: ['current-secret', 'rotated-secret'],
      verifyToken: 'verify-me',
    });
    expect(appVariables(env).filter((name) => !read.has(name))).toEqual([]);
  });

  it('omits an absent verify token and log level instead of writing "undefined"', async () => {
    const env = receiverEnvironment({ ...receiverInput, webhookSecrets: { appSecrets: ['only-secret'] } });
    expect(env).not.toHaveProperty(ENV.verifyToken);
    expect(env).not.toHaveProperty('POWERTOOLS_LOG_LEVEL');
    expect(env).not.toHaveProperty(ENV.webhookSecretId);
    expectNoUndefined(env);
    await expect(webhookSecretsSource(env, secretsProvider).load()).resolves.toEqual({
      appSecrets: ['only-secret'],
      verifyToken: undefined,
    });
  });

  it('refuses a malformed subscriber list at the receiver instead of enqueueing nowhere', () => {
    const env = receiverEnvironment({ ...receiverInput, webhookSecrets: { appSecrets: ['secret'] } });
    expect(() => receiverConfigFromEnv({ ...env, [ENV.subscriberQueues]: '[]' })).toThrow(
      ENV.subscriberQueues,
    );
    const { [ENV.subscriberQueues]: _queues, ...withoutQueues } = env;
    expect(() => receiverConfigFromEnv(withoutQueues)).toThrow(ENV.subscriberQueues);
  });

  it('gives the receiver no consumer-only variables', () => {
    const env = receiverEnvironment({ ...receiverInput, webhookSecrets: { secretId: 'whatsapp/webhook' } });
    for (const name of [ENV.deliveryQueueUrl, ENV.subscriberName, ENV.subscriberFields, ENV.claimTableName]) {
      expect(env).not.toHaveProperty(name);
    }
  });

  it('refuses an app secret with a comma, which the comma-separated variable would split in two', () => {
    expect(() =>
      receiverEnvironment({ ...receiverInput, webhookSecrets: { appSecrets: ['good', 'bad,secret'] } }),
    ).toThrow(ENV.appSecrets);
  });
});

describe('consumerEnvironment', () => {
  it('writes exactly what the consumer reads, and the consumer reads back the same configuration', () => {
    const env = consumerEnvironment({
      ...consumerInput,
      keyNamespace: 'crm-sync',
      fields: ['messages', 'message_template_status_update'],
      numbers: ['106540352242922', '106540352242923'],
      wabas: ['102290129340398'],
      effectsJournal: '/tmp/effects.journal',
      logLevel: 'WARN',
      statusLedger: 'always',
      claimUnhandledEvents: false,
      retryBaseDelaySeconds: defaults.retryBaseDelaySeconds + 5,
      retryMaxDelaySeconds: defaults.retryMaxDelaySeconds + 600,
      lane: 'message',
      laneOrdered: true,
      laneDeadLetters: { queueUrl: 'https://sqs/lane-dlq.fifo', maxReceives: 20 },
    });
    expect(Object.keys(env).sort()).toEqual(
      [
        ...POWERTOOLS,
        'POWERTOOLS_LOG_LEVEL',
        ENV.claimTableName,
        ENV.keyNamespace,
        ENV.subscriberName,
        ENV.subscriberFields,
        ENV.subscriberNumbers,
        ENV.subscriberWabas,
        ENV.quarantineQueueUrl,
        ENV.deliveryQueueUrl,
        ENV.retentionDays,
        ENV.leaseMarginMs,
        ENV.maximumMessageSizeBytes,
        ENV.effectsJournal,
        ENV.statusLedger,
        ENV.claimUnhandledEvents,
        ENV.retryBaseDelaySeconds,
        ENV.retryMaxDelaySeconds,
        ENV.lane,
        ENV.laneOrdered,
        ENV.laneDeadLetterQueueUrl,
        ENV.laneMaxReceives,
      ].sort(),
    );
    expect(env).toMatchObject({
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      POWERTOOLS_LOG_LEVEL: 'WARN',
      // Read by the shipped example handler when it runs, not by the configuration.
      [ENV.effectsJournal]: '/tmp/effects.journal',
      [ENV.subscriberFields]: 'messages,message_template_status_update',
      [ENV.subscriberNumbers]: '106540352242922,106540352242923',
      [ENV.subscriberWabas]: '102290129340398',
    });

    const { env: reader, read } = watched(env);
    expect(consumerConfigFromEnv(reader)).toEqual({
      ...consumerInput,
      keyNamespace: 'crm-sync',
      fields: ['messages', 'message_template_status_update'],
      numbers: ['106540352242922', '106540352242923'],
      wabas: ['102290129340398'],
      statusLedger: 'always',
      claimUnhandledEvents: false,
      retryBaseDelaySeconds: defaults.retryBaseDelaySeconds + 5,
      retryMaxDelaySeconds: defaults.retryMaxDelaySeconds + 600,
      lane: 'message',
      ordered: true,
      laneDeadLetters: { queueUrl: 'https://sqs/lane-dlq.fifo', maxReceives: 20 },
    });
    expect(appVariables(env).filter((name) => name !== ENV.effectsJournal && !read.has(name))).toEqual([]);
  });

  it('omits an absent namespace, fields, effects journal and log level instead of writing "undefined"', () => {
    const env = consumerEnvironment({ ...consumerInput, keyNamespace: undefined });
    expect(Object.keys(env).sort()).toEqual(
      [
        ...POWERTOOLS,
        ENV.claimTableName,
        ENV.subscriberName,
        ENV.quarantineQueueUrl,
        ENV.deliveryQueueUrl,
        ENV.retentionDays,
        ENV.leaseMarginMs,
        ENV.maximumMessageSizeBytes,
      ].sort(),
    );
    expectNoUndefined(env);
    expect(consumerConfigFromEnv(env)).toEqual({
      ...consumerInput,
      keyNamespace: undefined,
      fields: undefined,
      statusLedger: 'with-handler',
      claimUnhandledEvents: true,
      retryBaseDelaySeconds: defaults.retryBaseDelaySeconds,
      retryMaxDelaySeconds: defaults.retryMaxDelaySeconds,
      lane: 'status',
      ordered: false,
    });
  });

  it.each([
    [ENV.statusLedger, 'sometimes'],
    [ENV.claimUnhandledEvents, 'yes'],
    [ENV.subscriberFields, 'messages,,statuses'],
    [ENV.retryBaseDelaySeconds, 'soon'],
    [ENV.lane, 'express'],
    [ENV.laneOrdered, 'yes'],
  ])('refuses %s=%s instead of guessing', (name, value) => {
    const env = { ...consumerEnvironment(consumerInput), [name]: value };
    expect(() => consumerConfigFromEnv(env)).toThrow(name);
  });

  it('reads an unset subscriber name as the default subscriber', () => {
    const { [ENV.subscriberName]: _name, ...env } = consumerEnvironment(consumerInput);
    expect(consumerConfigFromEnv(env).subscriberName).toBe(DEFAULT_SUBSCRIBER_NAME);
  });

  it.each([
    ['an empty list', []],
    ['a field with a comma', ['messages,statuses']],
    ['an empty field', ['']],
  ])('refuses fields holding %s, which the comma-separated variable cannot carry', (_, fields) => {
    expect(() => consumerEnvironment({ ...consumerInput, fields })).toThrow(ENV.subscriberFields);
  });

  it('gives the consumer none of the receiver-only variables, and no DLQ (SQS redrive fills it)', () => {
    const env = consumerEnvironment(consumerInput);
    for (const name of [ENV.webhookSecretId, ENV.appSecrets, ENV.verifyToken, ENV.subscriberQueues]) {
      expect(env).not.toHaveProperty(name);
    }
    expect(env).not.toHaveProperty('DEAD_LETTER_QUEUE_URL');
  });
});
