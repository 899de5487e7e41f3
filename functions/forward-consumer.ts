/**
 * The consumer Lambda of a forward subscriber (docs/design.md, "Forwarding"): the construct deploys it for a
 * subscriber defined by `forward` instead of `entry`. Its destination, secret, headers and bounds come from
 * `FORWARD`; the signing secret and the headers secret are read from Secrets Manager through Powertools
 * Parameters, cached per container for `SECRETS_MAX_AGE_SECONDS` so that a rotated secret is picked up.
 */

import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { decodeForwardEnvironment, ENV, type ForwardEnvironment } from '../contract/environment.ts';
import { sdkClientConfig } from './commons/sdk-client-config.ts';
import { createConsumerFromEnv } from './consumer/create-consumer.ts';
import { forwardWebhookHandlers } from './forward/forward-handlers.ts';
import { ForwardHeadersError, type ForwardTarget, forwardTarget } from './forward/forwarder.ts';
import { SECRETS_MAX_AGE_SECONDS } from './receiver/webhook-secrets.ts';

let provider: SecretsProvider | undefined;

function secretsProvider(): SecretsProvider {
  provider ??= new SecretsProvider({
    awsSdkV3Client: new SecretsManagerClient(sdkClientConfig('consumerSecretsManager')),
  });
  return provider;
}

/** The destination with its signing secret and its headers as of now (both cached by the provider). */
export async function targetFromEnvironment(forward: ForwardEnvironment): Promise<ForwardTarget> {
  const [secret, headers] = await Promise.all([signingSecret(forward), forwardHeaders(forward)]);
  return forwardTarget(forward, secret, headers);
}

async function signingSecret(forward: ForwardEnvironment): Promise<string> {
  if ('value' in forward.secret) return forward.secret.value;
  const { secretId, appSecret } = forward.secret;
  const value = await secretsProvider().get(secretId, { maxAge: SECRETS_MAX_AGE_SECONDS });
  if (typeof value !== 'string' || value === '') throw new TypeError('The forward secret holds no string.');
  return appSecret ? firstAppSecret(value) : value;
}

/**
 * The headers of `headersSecretName`: its JSON object, checked by `forwardTarget` (no header of ours, string
 * values); `undefined` without one. A value that is no JSON fails the POST, never naming what it holds.
 */
async function forwardHeaders(forward: ForwardEnvironment): Promise<unknown> {
  if (forward.headers === undefined) return undefined;
  if ('value' in forward.headers) return forward.headers.value;
  const value = await secretsProvider().get(forward.headers.secretId, { maxAge: SECRETS_MAX_AGE_SECONDS });
  if (typeof value !== 'string') throw new ForwardHeadersError('The forward headers secret holds no string.');
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new ForwardHeadersError('The forward headers secret holds no JSON object.');
  }
}

/** The first of the webhook secret's `appSecrets`: the one Meta signs with, and a destination verifies with. */
function firstAppSecret(json: string): string {
  const first = (JSON.parse(json) as { appSecrets?: unknown }).appSecrets;
  const secret = Array.isArray(first) ? first[0] : undefined;
  if (typeof secret !== 'string' || secret === '')
    throw new TypeError('The webhook secret holds no app secret yet.');
  return secret;
}

const forward = decodeForwardEnvironment(process.env[ENV.forward]);

export const webhookHandlers = forwardWebhookHandlers(() => targetFromEnvironment(forward), {
  batch: forward.batch === true,
  maxInFlight: forward.postsInFlight,
});

export const handler = createConsumerFromEnv(webhookHandlers);
