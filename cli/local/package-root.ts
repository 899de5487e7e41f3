/**
 * The CLI package's own directory, found from the running module: `cli/` of the repository when it runs from
 * its sources, `node_modules/whatsapp-webhook-dedup-cli` when it runs compiled from `dist/` in a user's app.
 * Files the package ships beside `dist/` (patches/) and its caches (.cache/) are found from here, never from
 * the working directory.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_NAME = 'whatsapp-webhook-dedup-cli';
/** The construct's package, which the CLI runs beside (a peer dependency). */
export const CONSTRUCT_PACKAGE_NAME = 'whatsapp-webhook-dedup';

const HERE = dirname(fileURLToPath(import.meta.url));

function findPackage(name: string, from: string): string | undefined {
  for (let directory = from; ; directory = dirname(directory)) {
    const manifest = join(directory, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === name
    ) {
      return directory;
    }
    if (dirname(directory) === directory) return undefined;
  }
}

export function packageRoot(from: string = HERE): string {
  const found = findPackage(PACKAGE_NAME, from);
  if (found === undefined) throw new Error(`No ${PACKAGE_NAME} package.json above ${from}.`);
  return found;
}

/**
 * The repository when the CLI runs from its sources (the construct's package.json stands above the CLI's),
 * else undefined: installed, the construct is a package of the user's app like any other.
 */
export function sourceCheckoutRoot(from: string = HERE): string | undefined {
  return findPackage(CONSTRUCT_PACKAGE_NAME, dirname(packageRoot(from)));
}
