/**
 * Secrets Manager as ops reads it: the pipeline's webhook secret (`{"appSecrets": [...], "verifyToken": "..."}`,
 * contract/environment.ts `WebhookSecretValue`) and a Meta access token stored by the operator. Errors name
 * the secret, never its value.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { OpsError } from '../errors.ts';

export interface WebhookSecretValues {
  /** Empty until the operator stores the Meta app secret. */
  readonly appSecrets: readonly string[];
  readonly verifyToken: string | undefined;
}

export class SecretValues {
  readonly #client: SecretsManagerClient;

  constructor(client: SecretsManagerClient) {
    this.#client = client;
  }

  async webhookSecrets(secretName: string): Promise<WebhookSecretValues> {
    const text = await this.#string(secretName);
    let parsed: { appSecrets?: unknown; verifyToken?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new OpsError(
        `the webhook secret ${secretName} is not JSON {"appSecrets": [...], "verifyToken": "..."}`,
      );
    }
    const appSecrets = Array.isArray(parsed.appSecrets)
      ? parsed.appSecrets.filter((secret): secret is string => typeof secret === 'string' && secret !== '')
      : [];
    const verifyToken =
      typeof parsed.verifyToken === 'string' && parsed.verifyToken !== '' ? parsed.verifyToken : undefined;
    return { appSecrets, verifyToken };
  }

  /**
   * A Meta access token: the secret's string itself, or its `accessToken` when the string is a JSON object
   * (the shape `aws secretsmanager create-secret --secret-string '{"accessToken":"…"}'` gives).
   */
  async accessToken(secretName: string): Promise<string> {
    const text = (await this.#string(secretName)).trim();
    if (text.startsWith('{')) {
      let token: unknown;
      try {
        token = (JSON.parse(text) as { accessToken?: unknown }).accessToken;
      } catch {
        token = undefined;
      }
      if (typeof token !== 'string' || token === '') {
        throw new OpsError(`the secret ${secretName} is JSON without a string "accessToken"`);
      }
      return token;
    }
    if (text === '') throw new OpsError(`the secret ${secretName} is empty`);
    return text;
  }

  /** A key the stack generated (log digest, provenance): the secret's string as it is. */
  async secretString(secretId: string): Promise<string> {
    return this.#string(secretId);
  }

  async #string(secretName: string): Promise<string> {
    try {
      const { SecretString } = await this.#client.send(new GetSecretValueCommand({ SecretId: secretName }));
      if (SecretString === undefined) throw new OpsError(`the secret ${secretName} holds no string`);
      return SecretString;
    } catch (error) {
      if (error instanceof Error && error.name === 'ResourceNotFoundException') {
        throw new OpsError(`no secret ${secretName} in region ${await this.#client.config.region()}`);
      }
      throw error;
    }
  }
}
