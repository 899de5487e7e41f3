import { Stack, Validations } from 'aws-cdk-lib';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { WEBHOOK_SECRET_DEFAULTS } from '../defaults.ts';

export interface WebhookSecret {
  readonly secret: ISecret;
  /** The value the receiver passes as `SecretId`: the created secret's ARN, or the imported secret's name. */
  readonly secretId: string;
  /** The secret's name, as users pass it to `aws secretsmanager put-secret-value --secret-id`. */
  readonly secretName: string;
}

/**
 * The Secrets Manager secret holding the Meta app secrets and the verify token: the existing one named by
 * `existingSecretName`, or a new one made from `WEBHOOK_SECRET_DEFAULTS`.
 */
export function buildWebhookSecret(scope: Construct, existingSecretName?: string): WebhookSecret {
  if (existingSecretName !== undefined) {
    // A secret imported by name has a partial ARN (no random suffix), so the receiver asks for it by name.
    return {
      secret: Secret.fromSecretNameV2(scope, 'WebhookSecret', existingSecretName),
      secretId: existingSecretName,
      secretName: existingSecretName,
    };
  }
  const secretName = defaultSecretName(scope);
  const secret = new Secret(scope, 'WebhookSecret', { ...WEBHOOK_SECRET_DEFAULTS, secretName });
  Validations.of(secret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason:
      'The secret holds Meta app secrets and a verify token, which are issued and rotated in the Meta app dashboard, not by an AWS rotation function; the receiver accepts several app secrets at once so rotation is a manual two-step update (docs/deploy.md).',
  });
  return { secret, secretId: secret.secretArn, secretName };
}

/**
 * `<stack name>/<construct path below the stack>`, e.g. `WhatsAppWebhookDedup/Webhook`: readable, stable across
 * deploys, and unique per stack and construct. Characters Secrets Manager refuses become `-`.
 */
function defaultSecretName(construct: Construct): string {
  const stack = Stack.of(construct);
  const relativePath = construct.node.path.slice(stack.node.path.length + 1);
  return `${stack.stackName}/${relativePath}`.replace(/[^A-Za-z0-9/_+=.@-]/g, '-');
}
