/**
 * SDK clients pointed at the emulators the global setup started. The emulators accept any credentials;
 * DynamoDB Local shares one database across regions and credentials (`-sharedDb`).
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import { createClaimTable } from '../../cli/local/emulators/claim-table.ts';

export const TEST_REGION = 'us-east-1';
export const TEST_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export function dynamoDbEndpoint(): string {
  return inject('dynamodbEndpoint');
}

export function sqsEndpoint(): string {
  return inject('sqsEndpoint');
}

export function createDynamoDbClient(): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: dynamoDbEndpoint(),
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
  });
}

/** A DocumentClient over `client` (which keeps its middleware, e.g. a request counter). */
export function createDocumentClient(
  client: DynamoDBClient = createDynamoDbClient(),
): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client);
}

export function createSqsClient(): SQSClient {
  return new SQSClient({ endpoint: sqsEndpoint(), region: TEST_REGION, credentials: TEST_CREDENTIALS });
}

/** A name no other test file uses, valid as a DynamoDB table and an SQS queue name. */
export function uniqueName(label: string): string {
  const safe = label.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 40);
  return `${safe}-${randomUUID().slice(0, 8)}`;
}

/** Creates a claim table (same definition as the stack, TTL on) under a unique name and returns the name. */
export async function createTestClaimTable(client: DynamoDBClient, label = 'claims'): Promise<string> {
  const tableName = uniqueName(label);
  await createClaimTable(client, tableName);
  return tableName;
}
