/**
 * The consumer Lambda of a forward subscriber (docs/design.md, "Forwarding"): the construct deploys it for a
 * subscriber defined by `forward` instead of `entry`. Its destination and secret come from `FORWARD`; the
 * secret is read from Secrets Manager through Powertools Parameters, cached per container for
 * `SECRETS_MAX_AGE_SECONDS` so that a rotated secret is picked up.
 */

import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { decodeForwardEnvironment, ENV, type ForwardEnvironment } from '../contract/environment.ts';
import { sdkClientConfig } from './commons/sdk-client-config.ts';
import { createConsumerFromEnv } from './consumer/create-consumer.ts';
import { forwardWebhookHandlers } from './forward/forward-handlers.ts';
import { type ForwardTarget, forwardTarget } from './forward/forwarder.ts';
import { SECRETS_MAX_AGE_SECONDS } from './receiver/webhook-secrets.ts';

let provider: SecretsProvider | undefined;

/** The destination with its signing secret as of now (cached by the provider). */
export async function targetFromEnvironment(forward: ForwardEnvironment): Promise<ForwardTarget> {
  if ('value' in forward.secret) return forwardTarget(forward, forward.secret.value);
  provider ??= new SecretsProvider({
    awsSdkV3Client: new SecretsManagerClient(sdkClientConfig('consumerSecretsManager')),
  });
  const { secretId, appSecret } = forward.secret;
  const value = await provider.get(secretId, { maxAge: SECRETS_MAX_AGE_SECONDS });
  if (typeof value !== 'string' || value === '') throw new TypeError('The forward secret holds no string.');
  return forwardTarget(forward, appSecret ? firstAppSecret(value) : value);
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

export const webhookHandlers = forwardWebhookHandlers(() => targetFromEnvironment(forward));

export const handler = createConsumerFromEnv(webhookHandlers);
