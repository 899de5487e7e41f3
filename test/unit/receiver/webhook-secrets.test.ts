import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import {
  secretsFromEnvironment,
  secretsFromSecretsManager,
  WebhookSecretsMisconfiguredError,
  WebhookSecretsUnavailableError,
  webhookSecretsSource,
} from '../../../functions/receiver/webhook-secrets.ts';

const secretsMock = mockClient(SecretsManagerClient);
afterEach(() => secretsMock.reset());

const SECRET_ID = 'whatsapp/webhook';
const provider = () =>
  new SecretsProvider({ awsSdkV3Client: new SecretsManagerClient({ region: 'eu-west-1' }) });

describe('secretsFromEnvironment', () => {
  it('reads comma-separated app secrets (trimmed, blanks dropped) and the verify token', async () => {
    const source = secretsFromEnvironment({
      WHATSAPP_APP_SECRETS: ' one, two ,,',
      WHATSAPP_VERIFY_TOKEN: 'tok',
    });
    await expect(source.load()).resolves.toEqual({ appSecrets: ['one', 'two'], verifyToken: 'tok' });
  });

  it('serves the verify token alone, so the GET handshake works before an app secret is set', async () => {
    await expect(secretsFromEnvironment({ WHATSAPP_VERIFY_TOKEN: 'tok' }).load()).resolves.toEqual({
      appSecrets: [],
      verifyToken: 'tok',
    });
    await expect(
      secretsFromEnvironment({ WHATSAPP_APP_SECRETS: ' , ', WHATSAPP_VERIFY_TOKEN: 'tok' }).load(),
    ).resolves.toEqual({ appSecrets: [], verifyToken: 'tok' });
  });

  it.each([
    {},
    { WHATSAPP_APP_SECRETS: '' },
    { WHATSAPP_APP_SECRETS: ' , ' },
    { WHATSAPP_APP_SECRETS: '', WHATSAPP_VERIFY_TOKEN: '' },
  ])('is a misconfiguration with neither an app secret nor a verify token (%o)', async (env) => {
    await expect(secretsFromEnvironment(env).load()).rejects.toBeInstanceOf(WebhookSecretsMisconfiguredError);
  });

  it('leaves the verify token undefined when it is not set', async () => {
    await expect(secretsFromEnvironment({ WHATSAPP_APP_SECRETS: 'a' }).load()).resolves.toEqual({
      appSecrets: ['a'],
      verifyToken: undefined,
    });
  });
});

describe('secretsFromSecretsManager', () => {
  it('reads the JSON secret once and serves it from the cache afterwards', async () => {
    secretsMock
      .on(GetSecretValueCommand)
      .resolves({ SecretString: JSON.stringify({ appSecrets: ['s1', 's2'], verifyToken: 'tok' }) });
    const source = secretsFromSecretsManager(SECRET_ID, provider());
    for (let i = 0; i < 5; i++) {
      await expect(source.load()).resolves.toEqual({ appSecrets: ['s1', 's2'], verifyToken: 'tok' });
    }
    expect(secretsMock.commandCalls(GetSecretValueCommand)).toHaveLength(1);
    expect(secretsMock.commandCalls(GetSecretValueCommand)[0]?.args[0].input.SecretId).toBe(SECRET_ID);
  });

  it.each([
    ['as the stack creates it (empty list)', { appSecrets: [], verifyToken: 'tok' }],
    ['without appSecrets', { verifyToken: 'tok' }],
  ])('serves the verify token alone when the secret holds no app secret yet: %s', async (_, value) => {
    secretsMock.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify(value) });
    await expect(secretsFromSecretsManager(SECRET_ID, provider()).load()).resolves.toEqual({
      appSecrets: [],
      verifyToken: 'tok',
    });
  });

  it.each([
    ['not JSON', 'appSecrets=s1'],
    ['with neither an app secret nor a verify token', JSON.stringify({ appSecrets: [] })],
    ['an empty object', JSON.stringify({})],
    ['with an empty secret', JSON.stringify({ appSecrets: ['s1', ' '], verifyToken: 'tok' })],
    ['with a string instead of a list', JSON.stringify({ appSecrets: 's1', verifyToken: 'tok' })],
    ['with a verify token that is not a string', JSON.stringify({ appSecrets: ['s1'], verifyToken: 7 })],
  ])(
    'is a misconfiguration when the secret is %s, and the error quotes none of it',
    async (_, secretString) => {
      secretsMock.on(GetSecretValueCommand).resolves({ SecretString: secretString });
      const error = await secretsFromSecretsManager(SECRET_ID, provider())
        .load()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WebhookSecretsMisconfiguredError);
      expect((error as Error).message).not.toContain('s1');
    },
  );

  it('is a misconfiguration when the secret does not exist', async () => {
    secretsMock
      .on(GetSecretValueCommand)
      .rejects(new ResourceNotFoundException({ message: 'nope', $metadata: {} }));
    await expect(secretsFromSecretsManager(SECRET_ID, provider()).load()).rejects.toBeInstanceOf(
      WebhookSecretsMisconfiguredError,
    );
  });

  it('is unavailable (worth a retry) when Secrets Manager throttles, and does not cache the failure', async () => {
    secretsMock
      .on(GetSecretValueCommand)
      .rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }))
      .resolves({ SecretString: JSON.stringify({ appSecrets: ['s1'], verifyToken: 'tok' }) });
    const source = secretsFromSecretsManager(SECRET_ID, provider());
    await expect(source.load()).rejects.toBeInstanceOf(WebhookSecretsUnavailableError);
    await expect(source.load()).resolves.toEqual({ appSecrets: ['s1'], verifyToken: 'tok' });
  });
});

describe('webhookSecretsSource', () => {
  it('uses Secrets Manager when WHATSAPP_SECRET_ID is set, the environment otherwise', () => {
    expect(webhookSecretsSource({ WHATSAPP_SECRET_ID: SECRET_ID }, provider).origin).toBe(
      `secrets-manager:${SECRET_ID}`,
    );
    expect(webhookSecretsSource({ WHATSAPP_APP_SECRETS: 'a' }, provider).origin).toBe('environment');
  });
});
