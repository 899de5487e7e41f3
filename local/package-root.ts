/**
 * This package's own directory, found from the running module: the repository when it runs from its sources,
 * `node_modules/whatsapp-webhook-dedup` when it runs compiled from `dist/` in a user's app. Files the package
 * ships beside `dist/` (patches/) and its caches (.cache/) are found from here, never from the working
 * directory.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_NAME = 'whatsapp-webhook-dedup';

export function packageRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let directory = from; ; directory = dirname(directory)) {
    const manifest = join(directory, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME
    ) {
      return directory;
    }
    if (dirname(directory) === directory) throw new Error(`No ${PACKAGE_NAME} package.json above ${from}.`);
  }
}
