/**
 * The figures of README.md, docs/benchmarks.md and docs/cost.md are generated from bench/results.json and
 * bench/cost/prices.ts; regenerating them must reproduce the pages, and no benchmark figure may sit outside a
 * generated region.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  FAN_OUT_SUBSCRIBER_COUNTS,
  fanOutCost,
  subscriberCostPerMillion,
} from '../../../bench/cost/fan-out-cost.ts';
import { PRICES } from '../../../bench/cost/prices.ts';
import { costPerMillionEvents, referenceShape } from '../../../bench/cost/stack-cost.ts';
import { fanOutTable } from '../../../bench/markdown/fan-out-table.ts';
import { readRegion, replaceRegion } from '../../../bench/markdown/regions.ts';
import { dollars, times } from '../../../bench/markdown/table.ts';
import { generatedRegions, readResults, staleRegions } from '../../../bench/results-markdown.ts';

const page = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

/** The page with every generated region emptied: what was typed by hand. */
function handWritten(path: string, regions: readonly string[]): string {
  return regions.reduce((text, name) => replaceRegion(text, name, ''), page(path));
}

describe('generated figures', () => {
  it('README, benchmarks and cost pages match what bench/results.json and prices.ts generate', async () => {
    const results = await readResults();
    expect(await staleRegions(results)).toEqual([]);
  });

  it('the README paragraph gives cost per million events against Powertools, drain rate and receiver ratio', async () => {
    const results = await readResults();
    const summary = readRegion(page('README.md'), 'bench-summary');
    expect(summary).toContain(`${dollars(results.botMix.ours.dollarsPerMillionEvents)} per million events`);
    expect(summary).toContain(dollars(results.botMix.powertools.dollarsPerMillionEvents));
    expect(summary).toContain(dollars(results.botMix.powertoolsPerMessage.dollarsPerMillionEvents));
    expect(summary).toContain(times(results.consumer.speedup));
    const thousand = results.receiver.bodies.find((body) => body.updates === 1000);
    expect(summary).toContain(times(thousand?.ratio ?? Number.NaN));
    expect(summary).toContain('docs/benchmarks.md');
  });

  it('leaves no measured ratio or dollar figure outside the generated regions', async () => {
    const results = await readResults();
    const regions = generatedRegions(results);
    // decisions.md and design.md have no region: their cost and speed arguments point at the generated pages.
    for (const path of [
      'README.md',
      'docs/benchmarks.md',
      'docs/cost.md',
      'docs/decisions.md',
      'docs/design.md',
    ]) {
      const text = handWritten(path, Object.keys(regions[path] ?? {}));
      expect(text.match(/×\s?\d[\d.,]*/g) ?? [], path).toEqual([]);
      expect(text.match(/\$\d[\d.,]*/g) ?? [], path).toEqual([]);
    }
  });

  it('prices the reference shapes from the one price module', () => {
    const busy = costPerMillionEvents(referenceShape('busy'));
    expect(busy.dynamoDb).toBeCloseTo(2 * PRICES.dynamoDb.perWriteRequestUnit * 1e6, 9);
    expect(busy.apiGateway).toBeCloseTo(PRICES.apiGateway.perRequest * 1e6, 9);
    const quiet = costPerMillionEvents(referenceShape('quiet'));
    // Batches of one: ten times the consumer invocations, and a receive and a delete for each.
    expect(quiet.sqs - busy.sqs).toBeCloseTo(2 * (1e6 - 1e5) * PRICES.sqs.perRequest, 9);
    expect(quiet.total).toBeGreaterThan(busy.total);
  });

  it('prices the fan-out of both mechanisms from the same shapes and prices', () => {
    const busy = referenceShape('busy');
    // One subscriber through the receiver is the busy shape itself, split into its parts.
    expect(fanOutCost('receiverSends', 1, busy).total).toBeCloseTo(costPerMillionEvents(busy).total, 9);
    const own = subscriberCostPerMillion(busy);
    expect(own.dynamoDb).toBeCloseTo(2 * PRICES.dynamoDb.perWriteRequestUnit * 1e6, 9);
    // A receive and a delete per batch of its own event source.
    expect(own.sqsReceiveAndDelete).toBeCloseTo(
      2 * busy.consumerInvocationsPerEvent * 1e6 * PRICES.sqs.perRequest,
      9,
    );
    for (const subscribers of FAN_OUT_SUBSCRIBER_COUNTS) {
      const ours = fanOutCost('receiverSends', subscribers, busy);
      const sns = fanOutCost('snsTopic', subscribers, busy);
      // The receiver sends once per queue; SNS is billed one publish, whatever the number of subscriptions.
      expect(ours.fanOut).toBeCloseTo(subscribers * PRICES.sqs.perRequest * 1e6, 9);
      expect(sns.fanOut).toBeCloseTo(PRICES.sns.perPublishRequest * 1e6, 9);
      expect(sns.shared).toBeCloseTo(ours.shared, 9);
      expect(ours.subscribersOwn).toBeCloseTo(subscribers * own.total, 9);
      expect(sns.total - ours.total).toBeCloseTo(sns.fanOut - ours.fanOut, 9);
    }
  });

  it('shows one fan-out table in the README and in docs/cost.md, priced from prices.ts', () => {
    const table = fanOutTable();
    expect(readRegion(page('README.md'), 'fan-out-cost')).toContain(table);
    expect(readRegion(page('docs/cost.md'), 'fan-out')).toContain(table);
    for (const subscribers of FAN_OUT_SUBSCRIBER_COUNTS) {
      expect(table).toContain(dollars(fanOutCost('receiverSends', subscribers).total));
      expect(table).toContain(dollars(fanOutCost('snsTopic', subscribers).total));
    }
    expect(readRegion(page('docs/cost.md'), 'prices')).toContain(dollars(PRICES.sns.perPublishRequest * 1e6));
  });
});
