/** `npm run docs:runs`: rewrites the regions of local/run-regions.ts from the committed records. */
import { readFileSync, writeFileSync } from 'node:fs';
import { replaceRegion } from '../bench/markdown/regions.ts';
import { runRegions } from './run-regions.ts';

const ROOT = new URL('../', import.meta.url);

for (const [page, regions] of Object.entries(runRegions(ROOT))) {
  const path = new URL(page, ROOT);
  let text = readFileSync(path, 'utf8');
  for (const [name, content] of Object.entries(regions)) text = replaceRegion(text, name, content);
  writeFileSync(path, text);
  console.log(`${page}: ${Object.keys(regions).join(', ')} written`);
}
