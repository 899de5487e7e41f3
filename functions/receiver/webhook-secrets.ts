/**
 * Where the receiver gets Meta's app secrets and the verify token.
 * - In AWS: env `WHATSAPP_SECRET_ID` names a Secrets Manager secret holding `WebhookSecretValue` JSON, read
 *   through Powertools Parameters, which caches it per container for `SECRETS_MAX_AGE_SECONDS`.
 * - Locally: env `WHATSAPP_APP_SECRETS` (comma-separated) and `WHATSAPP_VERIFY_TOKEN`.
 * The two are independent: Meta's "Verify and save" (the GET handshake) needs only the verify token, and an
 * operator may store it before the app secret. No app secret yet means every POST is refused (401), never
 * accepted unsigned. Neither of the two is a misconfiguration.
 */
import { GetParameterError, TransformParameterError } from '@aws-lambda-powertools/parameters';
import type { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { ENV, type WebhookSecretValue } from '../../contract/environment.ts';
import { WebhookSecretsMisconfiguredError, WebhookSecretsUnavailableError } from './errors.ts';

export { WebhookSecretsMisconfiguredError, WebhookSecretsUnavailableError };

export interface WebhookSecrets {
  /** Every app secret a valid signature may use (none empty); empty until one is stored: POSTs get 401. */
  readonly appSecrets: readonly string[];
  /** `undefined` when not configured: the GET handshake then cannot succeed. */
  readonly verifyToken: string | undefined;
}

export interface WebhookSecretsSource {
  /** Where the secrets come from, for logs (`secrets-manager:<id>` or `environment`); never a secret. */
  readonly origin: string;
  /** @throws WebhookSecretsMisconfiguredError, WebhookSecretsUnavailableError */
  load(): Promise<WebhookSecrets>;
}

/**
 * Rotation: add the new app secret next to the old one, wait this long for warm containers to pick it up,
 * then switch the app at Meta, then remove the old one.
 */
export const SECRETS_MAX_AGE_SECONDS = 300;

/** Picks the source from the environment: the Secrets Manager secret when `WHATSAPP_SECRET_ID` is set. */
export function webhookSecretsSource(
  env: NodeJS.ProcessEnv,
  createProvider: () => SecretsProvider,
): WebhookSecretsSource {
  const secretId = env[ENV.webhookSecretId];
  if (secretId !== undefined && secretId !== '') {
    return secretsFromSecretsManager(secretId, createProvider());
  }
  return secretsFromEnvironment(env);
}

/** Reads the variables at each call (a string split), so a local stack may set them after start-up. */
export function secretsFromEnvironment(env: NodeJS.ProcessEnv): WebhookSecretsSource {
  return {
    origin: 'environment',
    load: async () => {
      const appSecrets = (env[ENV.appSecrets] ?? '')
        .split(',')
        .map((secret) => secret.trim())
        .filter((secret) => secret !== '');
      const verifyToken = env[ENV.verifyToken] || undefined;
      if (appSecrets.length === 0 && verifyToken === undefined) {
        throw new WebhookSecretsMisconfiguredError(
          `No webhook secret configured: set ${ENV.webhookSecretId} (Secrets Manager), or ${ENV.appSecrets} (comma-separated) and ${ENV.verifyToken}.`,
        );
      }
      return { appSecrets, verifyToken };
    },
  };
}

// Secrets Manager answers that no retry will fix.
const CONFIGURATION_ERRORS = new Set([
  'ResourceNotFoundException',
  'AccessDeniedException',
  'DecryptionFailure',
  'InvalidParameterException',
  'InvalidRequestException',
]);

export function secretsFromSecretsManager(
  secretId: string,
  provider: SecretsProvider,
  maxAgeSeconds: number = SECRETS_MAX_AGE_SECONDS,
): WebhookSecretsSource {
  return {
    origin: `secrets-manager:${secretId}`,
    load: async () => {
      let value: unknown;
      try {
        value = await provider.get(secretId, { transform: 'json', maxAge: maxAgeSeconds });
      } catch (error) {
        // The transform error quotes the offending text, which is the secret: keep none of it.
        if (error instanceof TransformParameterError) {
          throw new WebhookSecretsMisconfiguredError(`Secret ${secretId} is not JSON.`);
        }
        const cause = error instanceof GetParameterError ? error.cause : error;
        const name = cause instanceof Error ? cause.name : 'UnknownError';
        const ErrorClass = CONFIGURATION_ERRORS.has(name)
          ? WebhookSecretsMisconfiguredError
          : WebhookSecretsUnavailableError;
        throw new ErrorClass(`Secret ${secretId} could not be read (${name}).`, { cause });
      }
      return readSecretValue(secretId, value);
    },
  };
}

function readSecretValue(secretId: string, value: unknown): WebhookSecrets {
  const candidate = (typeof value === 'object' && value !== null ? value : {}) as Partial<
    Record<keyof WebhookSecretValue, unknown>
  >;
  const { appSecrets = [], verifyToken } = candidate;
  const token = typeof verifyToken === 'string' && verifyToken !== '' ? verifyToken : undefined;
  // A missing or empty list is the state before the operator stored an app secret; anything else that is not
  // a list of non-empty strings is a typo that must not pass for "no secret yet".
  if (
    !Array.isArray(appSecrets) ||
    !appSecrets.every((secret) => typeof secret === 'string' && secret.trim() !== '') ||
    (verifyToken !== undefined && typeof verifyToken !== 'string') ||
    (appSecrets.length === 0 && token === undefined)
  ) {
    throw new WebhookSecretsMisconfiguredError(
      `Secret ${secretId} must be JSON {"appSecrets": ["<app secret>", …], "verifyToken": "<token>"}: app secrets non-empty strings, and at least a verify token or one app secret.`,
    );
  }
  return { appSecrets: (appSecrets as string[]).map((secret) => secret.trim()), verifyToken: token };
}
