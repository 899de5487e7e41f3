/**
 * The pinned fauxqs patch (patches/fauxqs+1.9.2.patch, docs/local.md "Emulator fidelity"), applied to the
 * very fauxqs this package imports, wherever the package manager put it: this repository's node_modules, the
 * user's app's node_modules where fauxqs is hoisted, or this package's own node_modules when it is not.
 *
 * `npm ci` in this repository applies it with patch-package (the `prepare` script). A package's install
 * scripts are no place for it: patch-package patches its app's node_modules only, and says it does not
 * support a library's patches (ds300/patch-package#84, #198); npm 12 no longer runs a dependency's install
 * scripts unless the app allows them. So `start` ensures it before it loads fauxqs: applied once, then found
 * applied, as DynamoDB Local is fetched on the first start. The diff is applied by patch-package's own
 * parser and applier, as `prepare` applies it, never by hand-written edits.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_NAME, packageRoot } from '../package-root.ts';

export const FAUXQS_VERSION = '1.9.2';
const PATCH_FILE_NAME = `fauxqs+${FAUXQS_VERSION}.patch`;

export class FauxqsPatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FauxqsPatchError';
  }
}

export interface FauxqsPatchOptions {
  /** The directory fauxqs is resolved from, as Node resolves `import 'fauxqs'` there. @default this module's */
  readonly from?: string;
  /** @default patches/fauxqs+1.9.2.patch of this package */
  readonly patchFile?: string;
}

export interface FauxqsPatchResult {
  /** The fauxqs package directory. */
  readonly directory: string;
  /** `applied`: patched now; `already-applied`: found patched. */
  readonly outcome: 'applied' | 'already-applied';
}

/** patch-package's own modules (8.0.1, pinned): what its CLI applies a patch file with. */
interface PatchPackage {
  parsePatchFile(text: string): unknown;
  reversePatch(patch: unknown): unknown;
  executeEffects(patch: unknown, options: { dryRun: boolean; cwd: string; bestEffort: boolean }): void;
}

export function ensureFauxqsPatched(options: FauxqsPatchOptions = {}): FauxqsPatchResult {
  const directory = locateFauxqs(options.from ?? dirname(fileURLToPath(import.meta.url)));
  const { version } = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as {
    version: string;
  };
  if (version !== FAUXQS_VERSION) {
    throw new FauxqsPatchError(
      `fauxqs ${version} is installed at ${directory}, but the local stack needs fauxqs ${FAUXQS_VERSION}, the version its patch is for: install ${PACKAGE_NAME}'s own dependencies (npm install).`,
    );
  }
  const patchFile = options.patchFile ?? join(packageRoot(), 'patches', PATCH_FILE_NAME);
  const patchPackage = loadPatchPackage();
  const patch = patchPackage.parsePatchFile(readFileSync(patchFile, 'utf8'));
  // The patch names its files from the directory holding node_modules/fauxqs.
  const cwd = dirname(dirname(directory));
  const applies = (effects: unknown) => {
    try {
      patchPackage.executeEffects(effects, { dryRun: true, cwd, bestEffort: false });
      return true;
    } catch {
      return false;
    }
  };
  if (applies(patchPackage.reversePatch(patch))) return { directory, outcome: 'already-applied' };
  if (!applies(patch)) {
    throw new FauxqsPatchError(
      `${basename(patchFile)} does not apply to fauxqs at ${directory}, and is not applied: reinstall it (npm install).`,
    );
  }
  try {
    patchPackage.executeEffects(patch, { dryRun: false, cwd, bestEffort: false });
  } catch (error) {
    throw new FauxqsPatchError(
      `Cannot patch fauxqs at ${directory} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): the local stack needs ${basename(patchFile)} applied.`,
    );
  }
  return { directory, outcome: 'applied' };
}

/** Node's lookup of a bare specifier: `node_modules/fauxqs` in `from` or the nearest directory above it. */
function locateFauxqs(from: string): string {
  for (let directory = from; ; directory = dirname(directory)) {
    const candidate = join(directory, 'node_modules', 'fauxqs');
    if (basename(directory) !== 'node_modules' && existsSync(join(candidate, 'package.json')))
      return candidate;
    if (dirname(directory) === directory) {
      throw new FauxqsPatchError(`fauxqs is not installed (looked from ${from}): npm install.`);
    }
  }
}

function loadPatchPackage(): PatchPackage {
  const require = createRequire(import.meta.url);
  try {
    return {
      ...(require('patch-package/dist/patch/parse') as Pick<PatchPackage, 'parsePatchFile'>),
      ...(require('patch-package/dist/patch/reverse') as Pick<PatchPackage, 'reversePatch'>),
      ...(require('patch-package/dist/patch/apply') as Pick<PatchPackage, 'executeEffects'>),
    };
  } catch {
    throw new FauxqsPatchError(
      'patch-package is not installed: the local stack applies the fauxqs patch with it.',
    );
  }
}
