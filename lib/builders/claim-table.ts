import type { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { CLAIM_TABLE_SCHEMA } from '../../contract/claim-table-schema.ts';
import { CLAIM_TABLE_DEFAULTS } from '../defaults.ts';

export interface ClaimTableOptions {
  /** @default CLAIM_TABLE_DEFAULTS.removalPolicy (retain) */
  readonly removalPolicy?: RemovalPolicy;
  /** @default CLAIM_TABLE_DEFAULTS.deletionProtection (true) */
  readonly deletionProtection?: boolean;
  /**
   * Warm write units/s (billed once, when set or raised).
   * @default - none set: a new on-demand table's
   */
  readonly warmWriteUnitsPerSecond?: number;
}

/** The claim table of docs/design.md §2 (claims and the status ledger), with `CLAIM_TABLE_DEFAULTS`. */
export function buildClaimTable(scope: Construct, options: ClaimTableOptions = {}): TableV2 {
  return new TableV2(scope, 'ClaimTable', {
    ...CLAIM_TABLE_DEFAULTS,
    partitionKey: { name: CLAIM_TABLE_SCHEMA.partitionKey, type: AttributeType.STRING },
    timeToLiveAttribute: CLAIM_TABLE_SCHEMA.timeToLiveAttribute,
    deletionProtection: options.deletionProtection ?? CLAIM_TABLE_DEFAULTS.deletionProtection,
    removalPolicy: options.removalPolicy ?? CLAIM_TABLE_DEFAULTS.removalPolicy,
    warmThroughput:
      options.warmWriteUnitsPerSecond === undefined
        ? undefined
        : { writeUnitsPerSecond: options.warmWriteUnitsPerSecond },
  });
}
