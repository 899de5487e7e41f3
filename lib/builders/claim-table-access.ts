import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';

/**
 * Claim (conditional Put), complete (conditional Update), release (conditional Delete), and the status
 * ledger's Update; a failed condition returns the old item, so no read permission is needed.
 */
export const CLAIM_TABLE_WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] as const;

/** IAM's wildcard for "any key of this namespace": every stored key of it starts with `<ns>#`. */
export function namespacePattern(keyNamespace: string): string {
  return `${keyNamespace}#*`;
}

export interface ClaimTableAccess {
  readonly tableArn: string;
  /** The consumer's own namespace; `undefined`: unprefixed keys. */
  readonly keyNamespace: string | undefined;
  /** The namespaces of the pipeline's other subscribers (an unprefixed consumer is denied them). */
  readonly otherNamespaces: readonly string[];
}

/**
 * The statements that let one consumer write its claims and ledger entries and nobody else's
 * (docs/decisions.md, "Each consumer writes only its own namespace of the claim table").
 *
 * - A namespaced consumer may write only items whose partition key matches `<ns>#*`: `dynamodb:LeadingKeys`
 *   with `ForAllValues:StringLike`, which DynamoDB evaluates on the key of every Put, Update and Delete.
 * - An unprefixed consumer's keys have no common prefix to allow (`msg:…`, `st:…`, `ledger:…`, one per
 *   webhook field), so it gets the table with an explicit Deny on the other subscribers' prefixes. Its own keys
 *   never match one: they start with a key prefix followed by `:`, and no key prefix contains `#`.
 */
export function claimTableWriteStatements(access: ClaimTableAccess): PolicyStatement[] {
  const actions = [...CLAIM_TABLE_WRITES];
  if (access.keyNamespace !== undefined) {
    return [
      new PolicyStatement({
        sid: 'ClaimAndLedgerWritesInOwnNamespace',
        effect: Effect.ALLOW,
        actions,
        resources: [access.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [namespacePattern(access.keyNamespace)] },
        },
      }),
    ];
  }
  const allow = new PolicyStatement({
    sid: 'ClaimAndLedgerWrites',
    effect: Effect.ALLOW,
    actions,
    resources: [access.tableArn],
  });
  if (access.otherNamespaces.length === 0) return [allow];
  return [
    allow,
    new PolicyStatement({
      sid: 'NoWritesInOtherSubscribersNamespaces',
      effect: Effect.DENY,
      actions,
      resources: [access.tableArn],
      conditions: {
        'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': access.otherNamespaces.map(namespacePattern) },
      },
    }),
  ];
}
