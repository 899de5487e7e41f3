/**
 * The claim table's key schema and TTL attribute (docs/design.md §2): the CDK construct creates the table
 * from it, the claim store and the status ledger write items with it, the local stack creates its table
 * with it.
 */
export const CLAIM_TABLE_SCHEMA = {
  partitionKey: 'pk',
  timeToLiveAttribute: 'expiresAt',
} as const;
