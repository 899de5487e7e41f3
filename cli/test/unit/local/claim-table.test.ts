import { describe, expect, it } from 'vitest';
import { CLAIM_TABLE_SCHEMA } from '../../../../contract/claim-table-schema.ts';
import { claimTableDefinition, claimTableTimeToLive } from '../../../local/emulators/claim-table.ts';

describe('claim table definition', () => {
  it('is keyed by pk (S), on demand, from the shared schema', () => {
    expect(CLAIM_TABLE_SCHEMA.partitionKey).toBe('pk');
    expect(claimTableDefinition('claims')).toEqual({
      TableName: 'claims',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    });
  });

  it('expires records through TTL on expiresAt', () => {
    expect(claimTableTimeToLive('claims')).toEqual({
      TableName: 'claims',
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });
});
