/**
 * Imports a module of the user's project (the subscribers module, a subscriber's entry, `LOCAL_CONSUMER`) the
 * way the deployed code gets it: compiled by esbuild, the bundler NodejsFunction runs for the Lambda bundle,
 * so the local consumer runs the same JavaScript from the same TypeScript, with no TypeScript loader (tsx)
 * needed at run time. The project's own sources are bundled into one file; its dependencies stay imports,
 * resolved from the project's node_modules as Node resolves them. The file is written under
 * `node_modules/.cache/whatsapp-webhook-dedup/` (where those imports resolve), imported, and removed.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Esbuild = typeof import('esbuild');

/** Where the compiled modules are written for the moment of their import, from the project root. */
export const PROJECT_MODULE_CACHE = join('node_modules', '.cache', 'whatsapp-webhook-dedup', 'modules');

export class ProjectModuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProjectModuleError';
  }
}

export class ProjectModuleNotFoundError extends ProjectModuleError {
  constructor(path: string) {
    super(`${path} does not exist`);
    this.name = 'ProjectModuleNotFoundError';
  }
}

export interface ProjectModules {
  readonly projectRoot: string;
  /** Compiles and imports the module at `path` (absolute, or from the project root). */
  import(path: string): Promise<Record<string, unknown>>;
}

export function projectModules(projectRoot: string): ProjectModules {
  let esbuild: Esbuild | undefined;
  return {
    projectRoot,
    async import(path) {
      esbuild ??= loadEsbuild(projectRoot);
      return importCompiled(esbuild, projectRoot, resolve(projectRoot, path));
    },
  };
}

/**
 * The project's esbuild (a CDK app with NodejsFunction has it), else the one this package was installed
 * with, if any.
 */
function loadEsbuild(projectRoot: string): Esbuild {
  for (const from of [join(projectRoot, 'package.json'), import.meta.url]) {
    try {
      return createRequire(from)('esbuild') as Esbuild;
    } catch {
      // Not installed there.
    }
  }
  throw new ProjectModuleError(
    'esbuild is needed to load your TypeScript modules, as NodejsFunction needs it to bundle them: npm install --save-dev esbuild.',
  );
}

async function importCompiled(
  esbuild: Esbuild,
  projectRoot: string,
  path: string,
): Promise<Record<string, unknown>> {
  if (!existsSync(path)) throw new ProjectModuleNotFoundError(relative(projectRoot, path));
  // As the Lambda functions run with --enable-source-maps: stack traces name the project's files and lines.
  process.setSourceMapsEnabled(true);
  const directory = join(projectRoot, PROJECT_MODULE_CACHE, randomUUID());
  const outfile = join(directory, 'module.mjs');
  await mkdir(directory, { recursive: true });
  try {
    try {
      await esbuild.build({
        entryPoints: [path],
        absWorkingDir: projectRoot,
        bundle: true,
        packages: 'external',
        platform: 'node',
        format: 'esm',
        target: `node${process.versions.node.split('.')[0]}`,
        outfile,
        sourcemap: 'inline',
        logLevel: 'silent',
      });
    } catch (error) {
      throw new ProjectModuleError(buildFailure(error));
    }
    return (await import(pathToFileURL(outfile).href)) as Record<string, unknown>;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** esbuild's first error as one line: `file:line: text`. */
function buildFailure(error: unknown): string {
  const first = (error as { errors?: { text: string; location?: { file: string; line: number } | null }[] })
    .errors?.[0];
  if (first === undefined) return error instanceof Error ? error.message : String(error);
  return first.location ? `${first.location.file}:${first.location.line}: ${first.text}` : first.text;
}
