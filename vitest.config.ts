// The tests and the processes they start run without the AWS SDK's Node 20 warning (docs/decisions.md); the
// end-to-end tests that check a command's output unset it for that command.
import './tools/silence-sdk-node-version-warning.ts';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One DynamoDB Local and one SQS emulator for the whole run; tests read their endpoints with inject().
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
