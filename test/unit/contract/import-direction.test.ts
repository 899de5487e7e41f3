/**
 * The linter keeps imports one way: `functions/` (the Lambda code) and `lib/` (the CDK code) share only
 * `contract/`, which imports neither. Each case lints a one-line probe file with the project's own biome.json
 * in a scratch copy of the folder layout, so the working tree is never touched.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIOME = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');

interface Diagnostic {
  readonly category: string;
  readonly location: { readonly path: string };
}

let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'import-direction-'));
  copyFileSync(join(PROJECT_ROOT, 'biome.json'), join(scratch, 'biome.json'));
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The `noRestrictedImports` diagnostics biome reports for a file at `path` that imports `specifier`. */
function restrictedImports(path: string, specifier: string): Diagnostic[] {
  const file = join(scratch, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `import * as probe from '${specifier}';\n\nexport const used = probe;\n`);
  const run = spawnSync(
    process.execPath,
    [BIOME, 'lint', '--vcs-enabled=false', '--reporter=json', '--only=style/noRestrictedImports', path],
    { cwd: scratch, encoding: 'utf8' },
  );
  rmSync(file);
  const report = JSON.parse(run.stdout) as { diagnostics: Diagnostic[] };
  return report.diagnostics.filter((d) => d.category === 'lint/style/noRestrictedImports');
}

describe('import direction (biome noRestrictedImports)', () => {
  it.each([
    ['functions/consumer/probe.ts', '../../lib/defaults.ts'],
    ['functions/receiver.ts', '../lib/whatsapp-webhook-dedup.ts'],
    ['functions/examples/subscribers/probe.ts', 'whatsapp-webhook-dedup'],
    ['lib/whatsapp-webhook-dedup.ts', '../functions/consumer/create-consumer.ts'],
    ['lib/monitoring/probe.ts', '../../functions/consumer/consumer-tally.ts'],
    ['contract/probe.ts', '../lib/defaults.ts'],
    ['contract/probe.ts', '../functions/receiver.ts'],
    ['contract/probe.ts', '../local/stack/local-config.ts'],
    ['contract/probe.ts', 'aws-cdk-lib/aws-sqs'],
    ['contract/probe.ts', '@aws-sdk/client-dynamodb'],
  ])('refuses %s importing %s', (path, specifier) => {
    expect(restrictedImports(path, specifier)).toEqual([
      expect.objectContaining({ location: expect.objectContaining({ path }) }),
    ]);
  });

  it.each([
    ['functions/consumer/probe.ts', '../../contract/settings.ts'],
    ['functions/consumer/probe.ts', '../claims/claim-store.ts'],
    ['functions/consumer/probe.ts', '@aws-sdk/client-dynamodb'],
    ['functions/examples/subscribers/probe.ts', 'whatsapp-webhook-dedup/handlers'],
    ['lib/probe.ts', '../contract/environment.ts'],
    ['lib/probe.ts', 'aws-cdk-lib/aws-sqs'],
    ['contract/probe.ts', './metric-names.ts'],
    ['local/stack/probe.ts', '../../functions/consumer/create-consumer.ts'],
    ['test/infra/probe.ts', '../../lib/defaults.ts'],
  ])('allows %s importing %s', (path, specifier) => {
    expect(restrictedImports(path, specifier)).toEqual([]);
  });
});
