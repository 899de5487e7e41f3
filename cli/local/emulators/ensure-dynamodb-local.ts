/**
 * Pre-warms the DynamoDB Local cache (fetch, verify, extract) without starting it, e.g. from CI before the
 * tests: `npx tsx cli/local/emulators/ensure-dynamodb-local.ts`. Prints the jar's path.
 */
import { ensureDynamoDbLocal } from './dynamodb-local.ts';

const installation = await ensureDynamoDbLocal();
console.log(installation.jarPath);
