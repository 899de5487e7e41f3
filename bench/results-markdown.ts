/**
 * The figures of README.md, docs/benchmarks.md, docs/cost.md and docs/receiver.md, generated from bench/results.json and
 * tools/cost/prices.ts into the pages' `<!-- generated:NAME -->` regions, so that no figure is typed by hand:
 *
 *   npx tsx bench/results-markdown.ts            check: exits 1 and names the stale regions
 *   npx tsx bench/results-markdown.ts --write    rewrite the regions (npm run bench does it after a full run)
 *   npx tsx bench/results-markdown.ts --results FILE   from another results file
 *
 * test/unit/docs/generated-figures.test.ts runs the check.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { readRegion, replaceRegion } from '../tools/markdown/regions.ts';
import { machineRegion, readmeRegion, resultsRegion } from './markdown/benchmarks-page.ts';
import { conversationsRegion } from './markdown/conversations-page.ts';
import { costRegions } from './markdown/cost-page.ts';
import { readmeFanOutRegion } from './markdown/fan-out-table.ts';
import {
  INSTALLED_PACKAGE_PAGE,
  INSTALLED_PACKAGE_REGION,
  installedPackageRegion,
} from './markdown/installed-package-page.ts';
import { receiverArchiveRegion, receiverPerformanceRegion } from './markdown/receiver-page.ts';
import type { ResultsFile } from './results.ts';

const ROOT = new URL('../', import.meta.url);
export const RESULTS_FILE = new URL('bench/results.json', ROOT);

/** Every generated region, per page (paths from the repository root). */
export function generatedRegions(results: ResultsFile): Record<string, Record<string, string>> {
  return {
    'README.md': { 'bench-summary': readmeRegion(results), 'fan-out-cost': readmeFanOutRegion() },
    'docs/benchmarks.md': {
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

/** Regions whose text on the page differs from what the results generate, as `page#region`. */
export async function staleRegions(results: ResultsFile): Promise<string[]> {
  const stale: string[] = [];
  for (const [page, regions] of Object.entries(generatedRegions(results))) {
    const text = await readFile(new URL(page, ROOT), 'utf8');
    for (const [name, content] of Object.entries(regions)) {
      if (readRegion(text, name) !== content.trim()) stale.push(`${page}#${name}`);
    }
  }
  return stale;
}

/** Rewrites every region; returns the pages written. */
export async function writeGeneratedDocs(results: ResultsFile): Promise<string[]> {
  const written: string[] = [];
  for (const [page, regions] of Object.entries(generatedRegions(results))) {
    const url = new URL(page, ROOT);
    const before = await readFile(url, 'utf8');
    const after = Object.entries(regions).reduce(
      (text, [name, content]) => replaceRegion(text, name, content),
      before,
    );
    if (after !== before) {
      await writeFile(url, after);
      written.push(page);
    }
  }
  return written;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { write: { type: 'boolean', default: false }, results: { type: 'string' } },
  });
  const results = await readResults(values.results ?? RESULTS_FILE);
  if (values.write) {
    const written = await writeGeneratedDocs(results);
    process.stdout.write(written.length > 0 ? `Rewrote ${written.join(', ')}.\n` : 'Nothing to rewrite.\n');
    return;
  }
  const stale = await staleRegions(results);
  if (stale.length > 0) {
    process.stderr.write(`Stale: ${stale.join(', ')}. Run npx tsx bench/results-markdown.ts --write.\n`);
    process.exitCode = 1;
  } else process.stdout.write('Every generated figure matches bench/results.json.\n');
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
