/**
 * The bench's regions of docs/benchmarks.md, docs/cost.md and docs/receiver.md, generated from
 * lab/bench/results.json and cli/cost/prices.ts, so that no figure is typed by hand. `npm run docs` writes them
 * with every other region (lab/docs/generated-regions.ts); `npm run docs -- --check` finds a stale one.
 */
import { readFile } from 'node:fs/promises';
import { machineRegion, resultsRegion, summaryRegion } from './markdown/benchmarks-page.ts';
import { conversationsRegion } from './markdown/conversations-page.ts';
import { costRegions } from './markdown/cost-page.ts';
import {
  INSTALLED_PACKAGE_PAGE,
  INSTALLED_PACKAGE_REGION,
  installedPackageRegion,
} from './markdown/installed-package-page.ts';
import { receiverArchiveRegion, receiverPerformanceRegion } from './markdown/receiver-page.ts';
import type { ResultsFile } from './results.ts';

const ROOT = new URL('../../', import.meta.url);
export const RESULTS_FILE = new URL('lab/bench/results.json', ROOT);

/** Every generated region, per page (paths from the repository root). */
export function generatedRegions(results: ResultsFile): Record<string, Record<string, string>> {
  return {
    'docs/benchmarks.md': {
      summary: summaryRegion(results),
      machine: machineRegion(results),
      results: resultsRegion(results),
      conversations: conversationsRegion(results),
    },
    'docs/cost.md': costRegions(results),
    'docs/receiver.md': {
      'receiver-performance': receiverPerformanceRegion(results),
      'archive-overhead': receiverArchiveRegion(results),
    },
    [INSTALLED_PACKAGE_PAGE]: { [INSTALLED_PACKAGE_REGION]: installedPackageRegion(results) },
  };
}

export async function readResults(file: URL | string = RESULTS_FILE): Promise<ResultsFile> {
  return JSON.parse(await readFile(file, 'utf8')) as ResultsFile;
}
