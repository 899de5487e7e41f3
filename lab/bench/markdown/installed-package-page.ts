/**
 * The generated region of docs/deploy.md ("Use the construct"): what `npm run test:package` measured on the
 * installed path (lab/bench/results.json `installedPackage`), the tarball and the user's Lambda bundles beside
 * this repository's own.
 */
import { n, wrap } from '../../../cli/tools/markdown-table.ts';
import type { InstalledPackageResults, ResultsFile } from '../results.ts';

export const INSTALLED_PACKAGE_PAGE = 'docs/deploy.md';
export const INSTALLED_PACKAGE_REGION = 'installed-package';

const kib = (bytes: number) => `${n(bytes / 1024, 1)} KiB`;

export function installedPackageRegion(r: Pick<ResultsFile, 'installedPackage'>): string {
  return installedPackageText(r.installedPackage);
}

export function installedPackageText(p: InstalledPackageResults | undefined): string {
  if (p === undefined) return wrap('Not measured yet: `npm run test:package` writes these figures.');
  return wrap(
    `Measured by \`npm run test:package\` on ${p.measuredAt.slice(0, 10)}: the tarball is ${kib(p.tarballBytes)} ` +
      `(${kib(p.unpackedBytes)} unpacked, ${p.files} files). The README's app, which installed it, bundles a receiver ` +
      `of ${kib(p.userBundleBytes.receiver)} and a consumer of ${kib(p.userBundleBytes.consumer)} with its own ` +
      `handler; this repository bundles its own as ${kib(p.repositoryBundleBytes.receiver)} and ` +
      `${kib(p.repositoryBundleBytes.consumer)}.`,
  );
}
