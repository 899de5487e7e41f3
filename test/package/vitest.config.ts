// `npm run test:package`: the installed path (test/package/installed-app.test.ts), apart from `npm test`
// since it packs the package and installs a CDK app of its own. It needs no emulator.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The test reads the CLI's sources, which import the construct by name: tsconfig.json's paths resolve it.
  resolve: { tsconfigPaths: true },
  test: {
    root: new URL('../../', import.meta.url).pathname,
    include: ['test/package/installed-app.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    pool: 'forks',
  },
});
