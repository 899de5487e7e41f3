/**
 * The package's two public exports (package.json `exports`): the root (the construct) and `./handlers` (the
 * handler API), beside the subpaths the operator CLI imports (`./contract/*`, `./functions/*`, `./lib/*`). What a user's Lambda bundle holds comes from `./handlers` alone, so it must reach no aws-cdk-lib and no
 * constructs; and each export must exist three times over, consistently: as a source file the build compiles
 * (tsconfig.build.json), as the compiled file the package points at, and as the repository's own alias for
 * the example app (tsconfig.json `paths`, read by tsc, tsx, esbuild and vitest).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const json = (path: string) => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));
const manifest = json('package.json') as {
  name: string;
  exports: Record<string, { types: string; default: string } | string>;
  files: string[];
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
const paths = (json('tsconfig.json') as { compilerOptions: { paths: Record<string, string[]> } })
  .compilerOptions.paths;
/** The folders the build compiles (tsconfig.build.json `include`). */
const buildFolders = (json('tsconfig.build.json') as { include: string[] }).include;

async function metafile(entry: string, packages: 'bundle' | 'external') {
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: ROOT,
    bundle: true,
    packages,
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return result.metafile;
}

/** Every bundled input of `entry`, packages included (paths relative to the repository root). */
async function bundledInputs(entry: string): Promise<string[]> {
  return Object.keys((await metafile(entry, 'bundle')).inputs);
}

/** The packages `entry` and the sources it reaches import (not bundled, so aws-cdk-lib is cheap to find). */
async function importedPackages(entry: string): Promise<Set<string>> {
  const { inputs } = await metafile(entry, 'external');
  return new Set(
    Object.values(inputs).flatMap((input) =>
      input.imports.filter((item) => item.external).map((item) => item.path),
    ),
  );
}

describe('package exports', () => {
  const codeExports = Object.entries(manifest.exports).filter(
    (entry): entry is [string, { types: string; default: string }] => typeof entry[1] !== 'string',
  );

  it('has the construct at the root, the handler API at ./handlers and the CLI subpaths, types first', () => {
    expect(codeExports.map(([subpath]) => subpath)).toEqual([
      '.',
      './handlers',
      './contract/*',
      './functions/*',
      './lib/*',
    ]);
    for (const [, conditions] of codeExports) expect(Object.keys(conditions)).toEqual(['types', 'default']);
  });

  it.each(['contract', 'functions', 'lib'])(
    './%s/*: the build compiles the folder, the export points at its compiled files, the alias at its sources',
    (folder) => {
      expect(buildFolders).toContain(folder);
      expect(manifest.exports[`./${folder}/*`]).toEqual({
        types: `./dist/${folder}/*.d.ts`,
        default: `./dist/${folder}/*.js`,
      });
      expect(paths[`${manifest.name}/*`]).toEqual(['./*.ts']);
    },
  );

  it.each(['.', './handlers'])('%s: source, compiled file and repository alias agree', (subpath) => {
    const conditions = manifest.exports[subpath] as { types: string; default: string };
    const specifier = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
    const [aliased] = paths[specifier] ?? [];
    expect(aliased, `tsconfig.json paths["${specifier}"]`).toMatch(/^\.\/.+\.ts$/);
    const source = (aliased as string).slice(2);
    expect(buildFolders).toContain(source.split('/')[0]);
    const compiled = `./dist/${source.replace(/\.ts$/, '')}`;
    expect(conditions).toEqual({ types: `${compiled}.d.ts`, default: `${compiled}.js` });
    expect(manifest.files).toContain('dist');
  });

  it('./handlers bundles the consumer and its SDK clients, and no aws-cdk-lib or constructs', async () => {
    const inputs = await bundledInputs('functions/handlers.ts');
    expect(inputs).toContain('functions/consumer/create-consumer.ts');
    expect(inputs.some((input) => input.includes('node_modules/@aws-sdk/client-dynamodb/'))).toBe(true);
    const infrastructure = inputs.filter((input) => /node_modules\/(aws-cdk-lib|constructs)\//.test(input));
    expect(infrastructure).toEqual([]);
  });

  it('the root export does reach aws-cdk-lib, which users get as their own peer dependency', async () => {
    // The control for the test above: the same check finds aws-cdk-lib where it is imported.
    const imported = [...(await importedPackages('lib/index.ts'))];
    expect(imported).toContain('aws-cdk-lib');
    expect(imported).toContain('constructs');
    const runtime = [...(await importedPackages('functions/handlers.ts'))];
    expect(runtime).toContain('@aws-sdk/client-dynamodb');
    expect(runtime.filter((path) => /^(aws-cdk-lib|constructs)(\/|$)/.test(path))).toEqual([]);
    expect(Object.keys(manifest.peerDependencies)).toEqual(
      expect.arrayContaining(['aws-cdk-lib', 'constructs', 'esbuild']),
    );
    expect(Object.keys(manifest.dependencies)).not.toContain('aws-cdk-lib');
  });
});
