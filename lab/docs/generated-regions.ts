/**
 * Every generated region of every page, as its generator writes it today: `npm run docs` writes them, `npm run
 * docs -- --check` (and lab/test/docs/generated-figures.test.ts) compares them with the pages.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolveSettings } from '../../contract/settings.ts';
import type { ResultsFile } from '../bench/results.ts';
import { generatedRegions } from '../bench/results-markdown.ts';
import {
  FULL_REPORT_FILE,
  readReport,
  reliabilityRegions,
  SHORT_REPORT_FILE,
} from '../protocol-checker/protocol-report.ts';
import { capacityRegions } from './capacity-markdown.ts';
import { readRegion, replaceRegion } from './markdown/regions.ts';
import {
  ORDERED_LANE_RETRY_BUDGET_REGION,
  orderedLaneRetryBudgetMarkdown,
  RETRY_BUDGET_REGION,
  retryBudgetMarkdown,
} from './retry-budget-markdown.ts';
import { runRegions } from './run-regions.ts';

export const REPOSITORY_ROOT = new URL('../../', import.meta.url);

/** Page path → region name → the region's text. */
export type PageRegions = Record<string, Record<string, string>>;

export function regionGenerators(results: ResultsFile): PageRegions {
  const generators: PageRegions = {};
  const add = (regions: PageRegions) => {
    for (const [path, byName] of Object.entries(regions))
      generators[path] = { ...generators[path], ...byName };
  };
  add(generatedRegions(results)); // the bench's figures (lab/bench/results.json)
  add({
    'docs/consumer.md': {
      [RETRY_BUDGET_REGION]: retryBudgetMarkdown(resolveSettings()),
      [ORDERED_LANE_RETRY_BUDGET_REGION]: orderedLaneRetryBudgetMarkdown(),
    },
  });
  add(runRegions(REPOSITORY_ROOT)); // the M/M/c example and the recorded outage-drill, kill-test and reliability runs
  add({
    'docs/reliability.md': reliabilityRegions(readReport(FULL_REPORT_FILE), readReport(SHORT_REPORT_FILE)),
  });
  add(capacityRegions()); // the limits, the defaults against three shapes, the recorded capacity simulation
  return generators;
}

/** The regions whose page text differs from what their generator writes, as `page#region`. */
export function staleRegions(regions: PageRegions): string[] {
  return Object.entries(regions).flatMap(([path, byName]) => {
    const page = readFileSync(new URL(path, REPOSITORY_ROOT), 'utf8');
    return Object.entries(byName)
      .filter(([name, text]) => readRegion(page, name) !== text.trim())
      .map(([name]) => `${path}#${name}`);
  });
}

/** Writes every region into its page; returns the pages that changed. */
export function writeRegions(regions: PageRegions): string[] {
  const changed: string[] = [];
  for (const [path, byName] of Object.entries(regions)) {
    const file = new URL(path, REPOSITORY_ROOT);
    const before = readFileSync(file, 'utf8');
    const after = Object.entries(byName).reduce(
      (page, [name, text]) => replaceRegion(page, name, text),
      before,
    );
    if (after !== before) {
      writeFileSync(file, after);
      changed.push(path);
    }
  }
  return changed;
}
