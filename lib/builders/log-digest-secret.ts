import { Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';

/**
 * The deployment's log digest key (functions/commons/log-digest.ts): 64 random characters Secrets Manager
 * generates at deploy time, never in the template. The consumers read it once per container to put a keyed
 * digest of each event key in their logs; `npm run ops -- key` reads it to print the digest an operator
 * searches the logs for.
 */
export function buildLogDigestSecret(scope: Construct): Secret {
  const secret = new Secret(scope, 'LogDigestKey', {
    description: 'Key of the digests that stand for event keys in the logs (never the keys themselves).',
    generateSecretString: { passwordLength: 64, excludePunctuation: true },
  });
  Validations.of(secret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason:
      'Rotating the log digest key would only make log lines written before and after the rotation stop correlating; it guards no access, so it is generated once and kept.',
  });
  return secret;
}
