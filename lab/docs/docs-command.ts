/**
 * `npm run docs` regenerates every generated region of docs/ from the files the tools wrote
 * (lab/bench/results.json, the protocol reports, the recorded runs, the capacity simulation's results);
 * `npm run docs -- --check` changes nothing and exits 1 when a region is stale.
 */
import { parseArgs } from 'node:util';
import { readResults } from '../bench/results-markdown.ts';
import { regionGenerators, staleRegions, writeRegions } from './generated-regions.ts';

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
const regions = regionGenerators(await readResults());
if (values.check) {
  const stale = staleRegions(regions);
  for (const region of stale) process.stderr.write(`stale: ${region} (npm run docs rewrites it)\n`);
  process.exitCode = stale.length === 0 ? 0 : 1;
} else {
  const changed = writeRegions(regions);
  process.stdout.write(
    changed.length === 0 ? 'every region is up to date\n' : `rewrote ${changed.join(', ')}\n`,
  );
}
