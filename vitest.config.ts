// The tests and the processes they start run without the AWS SDK's Node 20 warning (docs/decisions.md); the
// end-to-end tests that check a command's output unset it for that command.
import './cli/tools/silence-sdk-node-version-warning.ts';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  // The example app imports the package by name, resolved to its sources by tsconfig.json's paths.
  resolve: { tsconfigPaths: true },
  test: {
    include: ['test/**/*.test.ts', 'cli/test/**/*.test.ts', 'lab/test/**/*.test.ts'],
    // `npm run test:package` runs it (test/package/vitest.config.ts): it installs a CDK app of its own.
    exclude: [...configDefaults.exclude, 'test/package/installed-app.test.ts'],
    // One DynamoDB Local and one SQS emulator for the whole run; tests read their endpoints with inject().
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
