/**
 * `npm run docs:runs`: rewrites the regions of lab/docs/run-regions.ts from the committed records, and lays the
 * records out as the repository's formatter does (the recorders write plain JSON.stringify).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KILL_RUNS_PATH } from './kill-run-record.ts';
import { replaceRegion } from './markdown/regions.ts';
import { DRILL_RUNS } from './outage-drill-markdown.ts';
import { RELIABILITY_RUNS } from './reliability-run-record.ts';
import { runRegions } from './run-regions.ts';

const ROOT = new URL('../../', import.meta.url);

for (const [page, regions] of Object.entries(runRegions(ROOT))) {
  const path = new URL(page, ROOT);
  let text = readFileSync(path, 'utf8');
  for (const [name, content] of Object.entries(regions)) text = replaceRegion(text, name, content);
  writeFileSync(path, text);
  console.log(`${page}: ${Object.keys(regions).join(', ')} written`);
}

const records = [
  ...DRILL_RUNS.map((run) => run.path),
  KILL_RUNS_PATH,
  ...Object.values(RELIABILITY_RUNS).map((run) => run.path),
];
execFileSync(fileURLToPath(new URL('node_modules/.bin/biome', ROOT)), ['format', '--write', ...records], {
  cwd: fileURLToPath(ROOT),
  stdio: 'inherit',
});
