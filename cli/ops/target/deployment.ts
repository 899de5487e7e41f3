/**
 * What `meta` and `smoke` need of a pipeline beside its tables and queues (`OpsTarget`): the webhook URL Meta
 * calls, the app secrets and verify token it is checked with, and the alarms. A deployed stack gives them in
 * its outputs (`WebhookUrl`, `WebhookSecretName`), its secret and its alarm resources; the local stack
 * (`npm start`) in its URL and the variables it reads itself, with the same development defaults, and it has
 * no alarms. Secrets are handed to the caller and never printed.
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ENV } from 'whatsapp-webhook-dedup/contract/environment';
import { STACK_OUTPUT } from 'whatsapp-webhook-dedup/contract/stack-outputs';
import { DEV_APP_SECRET, DEV_VERIFY_TOKEN } from '../../local/local-stack-api.ts';
import { SecretValues, type WebhookSecretValues } from '../adapters/secret-values.ts';
import { type AlarmState, StackAlarms } from '../adapters/stack-alarms.ts';
import { StackResources } from '../adapters/stack-resources.ts';
import { OpsError } from '../errors.ts';

export type { AlarmState, WebhookSecretValues };

export interface Deployment {
  /** For output: `stack prod`, `local stack at http://localhost:3000`. */
  readonly description: string;
  /** The URL Meta posts to and verifies (`…/webhook`). */
  readonly webhookUrl: string;
  webhookSecrets(): Promise<WebhookSecretValues>;
  /** The alarms' states; `undefined` where there are none (the local stack). */
  readonly alarmStates: (() => Promise<AlarmState[]>) | undefined;
  /** A secret's string as a Meta access token (`--token-secret`); `undefined` where there is no Secrets Manager. */
  readonly accessTokenFromSecret: ((secretName: string) => Promise<string>) | undefined;
  close(): void;
}

export type DeploymentChoice =
  | { readonly kind: 'local'; readonly url: string }
  | { readonly kind: 'stack'; readonly stackName: string };

export function resolveDeployment(
  choice: DeploymentChoice,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Deployment> {
  return choice.kind === 'local'
    ? Promise.resolve(localDeployment(choice.url, env))
    : stackDeployment(choice.stackName);
}

/** The local stack signs with `WHATSAPP_APP_SECRETS` and answers `WHATSAPP_VERIFY_TOKEN`, as `npm start` reads them. */
export function localDeployment(url: string, env: NodeJS.ProcessEnv): Deployment {
  return {
    description: `local stack at ${url}`,
    webhookUrl: `${url}/webhook`,
    webhookSecrets: async () => {
      const appSecrets = (env[ENV.appSecrets] ?? '')
        .split(',')
        .map((secret) => secret.trim())
        .filter((secret) => secret !== '');
      return {
        appSecrets: appSecrets.length > 0 ? appSecrets : [DEV_APP_SECRET],
        verifyToken: env[ENV.verifyToken] || DEV_VERIFY_TOKEN,
      };
    },
    alarmStates: undefined,
    accessTokenFromSecret: undefined,
    close() {},
  };
}

export interface DeploymentClients {
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly secretsManager: SecretsManagerClient;
  readonly cloudWatch: CloudWatchClient;
}

export async function stackDeployment(
  stackName: string,
  clients: DeploymentClients = {
    cloudFormation: new CloudFormationClient({}),
    lambda: new LambdaClient({}),
    secretsManager: new SecretsManagerClient({}),
    cloudWatch: new CloudWatchClient({}),
  },
): Promise<Deployment> {
  const close = () => {
    for (const client of Object.values(clients)) client.destroy();
  };
  try {
    const outputs = await new StackResources(clients.cloudFormation, clients.lambda).outputs(stackName);
    const output = (key: string) => {
      const value = outputs[key];
      if (value === undefined) throw new OpsError(`stack ${stackName} has no output ${key}`);
      return value;
    };
    const webhookUrl = output(STACK_OUTPUT.webhookUrl);
    const secretName = output(STACK_OUTPUT.webhookSecretName);
    const secrets = new SecretValues(clients.secretsManager);
    const alarms = new StackAlarms(clients.cloudFormation, clients.cloudWatch);
    return {
      description: `stack ${stackName}`,
      webhookUrl,
      webhookSecrets: () => secrets.webhookSecrets(secretName),
      alarmStates: () => alarms.states(stackName),
      accessTokenFromSecret: (name) => secrets.accessToken(name),
      close,
    };
  } catch (error) {
    close();
    throw error;
  }
}
