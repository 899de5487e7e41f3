/**
 * lab/bench/results.json's `installedPackage`: what `npm run test:package` measured on the installed path
 * (docs/decisions.md, "The installed path is its own CI step"). The tarball as `npm pack --json` reports it, and
 * the Lambda bundles of the README's app, which installed it, beside this repository's own bundles of the same
 * functions (lab/bench/bundles). The test writes it, the other keys of the file left as they are, and regenerates
 * the one page region that shows it, so that the figures test of `npm test` finds the page in step with the file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { replaceRegion } from '../../docs/markdown/regions.ts';
import {
  INSTALLED_PACKAGE_PAGE,
  INSTALLED_PACKAGE_REGION,
  installedPackageText,
} from '../markdown/installed-package-page.ts';
import type { InstalledPackageResults } from '../results.ts';

export const RESULTS_FILE = new URL('../results.json', import.meta.url);
const PAGE = new URL(`../../../${INSTALLED_PACKAGE_PAGE}`, import.meta.url);

export function writeInstalledPackageResults(
  results: Omit<InstalledPackageResults, 'measuredAt'>,
  file: URL | string = RESULTS_FILE,
): void {
  const current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const installedPackage: InstalledPackageResults = { ...results, measuredAt: new Date().toISOString() };
  writeFileSync(file, `${JSON.stringify({ ...current, installedPackage }, null, 2)}\n`);
  if (file === RESULTS_FILE) {
    const page = readFileSync(PAGE, 'utf8');
    writeFileSync(
      PAGE,
      replaceRegion(page, INSTALLED_PACKAGE_REGION, installedPackageText(installedPackage)),
    );
  }
}
