/**
 * The local stack as `npm start` runs it, on the DynamoDB Local the global setup started (a claim table of its
 * own there) instead of a JVM of its own: each JVM costs seconds of both cores. The end-to-end tests of
 * `npm start` itself (cli/test/e2e/local-stack.test.ts, user-project.test.ts) start theirs as a user's does.
 */
import { LOCAL_ENV } from '../../cli/local/stack/local-config.ts';
import {
  type SpawnedLocalStack,
  type SpawnLocalStackOptions,
  spawnLocalStack,
} from '../../cli/local/stack/spawn-local-stack.ts';
import { dynamoDbEndpoint } from './aws-clients.ts';

export function spawnTestStack(options: SpawnLocalStackOptions = {}): Promise<SpawnedLocalStack> {
  return spawnLocalStack({
    ...options,
    env: { ...options.env, [LOCAL_ENV.dynamodbEndpoint]: dynamoDbEndpoint() },
  });
}
