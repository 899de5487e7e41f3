/**
 * Imports a module of the user's project (the subscribers module, a subscriber's entry, `LOCAL_CONSUMER`) the
 * way the deployed code gets it: compiled by esbuild, the bundler NodejsFunction runs for the Lambda bundle,
 * so the local consumer runs the same JavaScript from the same TypeScript, with no TypeScript loader (tsx)
 * needed at run time. The project's own sources are bundled into one file. What it imports of this package
 * (by name from node_modules, or through tsconfig paths into the package's directory) and its other
 * dependencies stay imports: the handler API its handlers see (`RetryLater`, checked with `instanceof`) is
 * then the one the local consumer checks, as in the one Lambda bundle. The file is written under
 * `node_modules/.cache/whatsapp-webhook-dedup/` (where those imports resolve), imported, and removed.
 *
 * A module inside this package's own directory (this repository's examples and tests, when the project is
 * the repository) is imported as it is: it is the package's code, run by the loader that runs the rest.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';
import { packageRoot, sourceCheckoutRoot } from '../package-root.ts';

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
  /** Imports the module at `path` (absolute, or from the project root), compiled unless it is the package's. */
  import(path: string): Promise<Record<string, unknown>>;
}

export function projectModules(projectRoot: string): ProjectModules {
  // From the sources, the repository's own modules (bin/subscribers.ts) are the package's too.
  const ownDirectory = sourceCheckoutRoot() ?? packageRoot();
  let esbuild: Esbuild | undefined;
  return {
    projectRoot,
    async import(path) {
      const absolute = resolve(projectRoot, path);
      if (!existsSync(absolute)) throw new ProjectModuleNotFoundError(relative(projectRoot, absolute));
      if (isPackageModule(ownDirectory, absolute)) {
        return (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
      }
      esbuild ??= loadEsbuild(projectRoot);
      return importCompiled(esbuild, projectRoot, absolute, ownDirectory);
    },
  };
}

/** A file of this package itself: inside its directory, not in a node_modules below it. */
function isPackageModule(ownDirectory: string, path: string): boolean {
  const inside = relative(ownDirectory, path);
  return (
    inside !== '' &&
    !inside.startsWith('..') &&
    !isAbsolute(inside) &&
    !inside.split(sep).includes('node_modules')
  );
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

/** Imports that resolve to this package's own files stay imports of those files. */
function packageModulesStayImports(ownDirectory: string): Plugin {
  const resolving = Symbol('resolving');
  return {
    name: 'package-modules-stay-imports',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point' || args.pluginData === resolving) return undefined;
        const result = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: resolving,
        });
        if (result.errors.length > 0 || result.external || !isPackageModule(ownDirectory, result.path)) {
          return undefined;
        }
        return { path: pathToFileURL(result.path).href, external: true };
      });
    },
  };
}

async function importCompiled(
  esbuild: Esbuild,
  projectRoot: string,
  path: string,
  ownDirectory: string,
): Promise<Record<string, unknown>> {
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
        plugins: [packageModulesStayImports(ownDirectory)],
        platform: 'node',
        format: 'esm',
        target: `node${process.versions.node.split('.')[0]}`,
        outfile,
        sourcemap: 'inline',
        // The construct's banner (lib/defaults.ts BUNDLING): CommonJS code in the bundle gets a working require.
        banner: {
          js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
        },
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
