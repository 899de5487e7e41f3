/**
 * Vitest global setup: ONE DynamoDB Local and ONE SQS emulator for the whole run, shared by every test file
 * through `inject('dynamodbEndpoint')` / `inject('sqsEndpoint')` (or the helpers in `aws-clients.ts`).
 * Test files isolate themselves with unique table and queue names, not with separate emulators.
 */
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../cli/local/emulators/dynamodb-local.ts';
import { startSqsEmulator } from '../../cli/local/emulators/sqs.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** DynamoDB Local (`-inMemory -sharedDb`), e.g. `http://127.0.0.1:41234`. */
    dynamodbEndpoint: string;
    /** fauxqs, e.g. `http://127.0.0.1:41235`. */
    sqsEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [dynamodb, sqs] = await Promise.allSettled([startDynamoDbLocal(), startSqsEmulator()]);
  const stopAll = async () => {
    await Promise.all(
      [dynamodb, sqs].map((started) => (started.status === 'fulfilled' ? started.value.stop() : undefined)),
    );
  };
  if (dynamodb.status === 'rejected' || sqs.status === 'rejected') {
    await stopAll();
    throw dynamodb.status === 'rejected' ? dynamodb.reason : (sqs as PromiseRejectedResult).reason;
  }
  project.provide('dynamodbEndpoint', dynamodb.value.endpoint);
  project.provide('sqsEndpoint', sqs.value.endpoint);
  return stopAll;
}
