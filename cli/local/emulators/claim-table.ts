/**
 * The claim table on the emulators (DynamoDB Local), for the local stack, the tests and the benchmarks: built
 * from the shared {@link CLAIM_TABLE_SCHEMA}, which the CDK construct builds its table from too, so both have
 * partition key `pk` (S), on-demand capacity and TTL on `expiresAt`. Development only: no Lambda bundle
 * includes it.
 */
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
  type UpdateTimeToLiveCommandInput,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { CLAIM_TABLE_SCHEMA } from 'whatsapp-webhook-dedup/contract/claim-table-schema';

export function claimTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    AttributeDefinitions: [{ AttributeName: CLAIM_TABLE_SCHEMA.partitionKey, AttributeType: 'S' }],
    KeySchema: [{ AttributeName: CLAIM_TABLE_SCHEMA.partitionKey, KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  };
}

export function claimTableTimeToLive(tableName: string): UpdateTimeToLiveCommandInput {
  return {
    TableName: tableName,
    TimeToLiveSpecification: { AttributeName: CLAIM_TABLE_SCHEMA.timeToLiveAttribute, Enabled: true },
  };
}

/** Creates the table, waits until it is ACTIVE, then turns TTL on. Fails if the table already exists. */
export async function createClaimTable(
  client: DynamoDBClient,
  tableName: string,
  options: { maxWaitSeconds?: number } = {},
): Promise<void> {
  const created = await client.send(new CreateTableCommand(claimTableDefinition(tableName)));
  if (created.TableDescription?.TableStatus !== 'ACTIVE') {
    await waitUntilTableExists(
      { client, minDelay: 1, maxDelay: 5, maxWaitTime: options.maxWaitSeconds ?? 300 },
      { TableName: tableName },
    );
  }
  await client.send(new UpdateTimeToLiveCommand(claimTableTimeToLive(tableName)));
}
