import { Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';

/** A key Secrets Manager generates at deploy time (64 random characters), never in the template. */
function generatedKey(scope: Construct, id: string, description: string, noRotation: string): Secret {
  const secret = new Secret(scope, id, {
    description,
    generateSecretString: { passwordLength: 64, excludePunctuation: true },
  });
  Validations.of(secret).acknowledge({ id: 'AwsSolutions-SMG4', reason: noRotation });
  return secret;
}

/**
 * The log digest key (functions/commons/log-digest.ts): the consumers read it once per container to put a
 * keyed digest of each event key in their logs; `npm run ops -- key` reads it to print the digest.
 */
export function buildLogDigestSecret(scope: Construct): Secret {
  return generatedKey(
    scope,
    'LogDigestKey',
    'Key of the digests that stand for event keys in the logs (never the keys themselves).',
    'Rotating the log digest key would only make log lines written before and after the rotation stop correlating; it guards no access, so it is generated once and kept.',
  );
}

/**
 * The provenance key (functions/commons/provenance.ts): the receiver proves every body it keeps with it, and
 * `ops quarantine requeue` and `ops replay` send back in only bodies whose proof holds. Only the receiver and
 * the operator read it: the consumers, which run subscriber code, never do.
 */
export function buildProvenanceSecret(scope: Construct): Secret {
  return generatedKey(
    scope,
    'ProvenanceKey',
    'Key of the proofs that the receiver verified the bodies kept in the quarantine and archive queues.',
    "A rotated provenance key would leave every body kept under the old one refused by requeue and replay for the queues' retention; it is generated once and kept, and read only by the receiver and the operator.",
  );
}
