/**
 * The bench parts on the product's own work, from made-up measurements: the consumer overhead's summary and
 * the storm isolation's lane waits, their shape as lab/bench/results.json stores them, and their sections of
 * docs/benchmarks.md.
 */
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../cli/local/seeded-random.ts';
import { summarizeConsumerOverhead } from '../../bench/consumer/overhead-results.ts';
import {
  consumerOverheadSection,
  productWorkClause,
  stormIsolationSection,
} from '../../bench/markdown/product-work-page.ts';
import type { ResultsFile } from '../../bench/results.ts';
import { laneWaits, type StormIsolationResults, withoutCampaign } from '../../bench/storm/storm-isolation.ts';
import { LatencySeries } from '../../capacity-simulation/measures.ts';
import { scenario } from '../../capacity-simulation/scenarios.ts';
import { TrafficGenerator } from '../../capacity-simulation/traffic.ts';

const series = (values: readonly number[]) => {
  const s = new LatencySeries();
  for (const value of values) s.add(value);
  return s;
};

describe('consumer overhead', () => {
  const output = {
    toHandlerMs: [2.1, 2.4, 2.6, 2.9, 8.0],
    invocationMs: [5, 6, 7, 8, 20],
    barePutMs: [1.5, 1.6, 1.8, 2.2, 6.1],
    warmupPairs: 300,
    lane: 'message',
    ordered: true,
  };

  it('stores each series as its median and quartiles, and the median added beyond the bare PutItem', () => {
    const summary = summarizeConsumerOverhead(output);
    expect(summary).toEqual({
      invocations: 5,
      warmupPairs: 300,
      lane: 'message',
      ordered: true,
      toHandler: { medianMs: 2.6, p25Ms: 2.4, p75Ms: 2.9 },
      barePut: { medianMs: 1.8, p25Ms: 1.6, p75Ms: 2.2 },
      invocation: { medianMs: 7, p25Ms: 6, p75Ms: 8 },
      addedMs: 0.8,
    });
  });

  it('refuses a run that measured nothing', () => {
    expect(() => summarizeConsumerOverhead({ ...output, toHandlerMs: [] })).toThrow(/no invocation/);
  });

  it('prints the medians and the verdict, or how to measure it', () => {
    const consumerOverhead = summarizeConsumerOverhead(output);
    const section = consumerOverheadSection({ consumerOverhead } as unknown as ResultsFile).join('\n');
    expect(section).toContain('**2.60 ms**');
    expect(section).toContain('**1.80 ms**');
    expect(section.replace(/\s+/g, ' ')).toContain(
      "adds 0.80 ms to the claim's round trip; goal at most 1 ms: met.",
    );
    expect(consumerOverheadSection({} as ResultsFile).join('\n')).toContain('--only overhead --merge');
  });
});

describe('storm isolation', () => {
  it('takes the campaign out of the scenario but keeps the customers, who write in at the same moments', () => {
    const config = scenario('campaign', true);
    const quiet = withoutCampaign(config);
    expect(quiet.trafficMs).toBe(config.trafficMs);
    const inbound = (numbers: typeof config.numbers) => {
      const generator = new TrafficGenerator(numbers, new SeededRandom(1).fork('traffic'));
      return [0, 1000].flatMap((start) => generator.second(start));
    };
    const withIt = inbound(config.numbers);
    const without = inbound(quiet.numbers);
    expect(without.filter((event) => event.lane === 'status')).toEqual([]);
    expect(withIt.filter((event) => event.lane === 'status').length).toBeGreaterThan(0);
    const messages = (events: typeof withIt) =>
      events.filter((event) => event.lane === 'message').map((event) => `${event.key}@${event.at}`);
    expect(messages(without)).toEqual(messages(withIt));
    expect(messages(without).length).toBeGreaterThan(100);
  });

  it("stores each run's lane waits as counts and percentiles", () => {
    const waits = laneWaits({ message: series([10, 20, 30, 400]), status: series([5, 1039]) });
    expect(waits).toEqual({
      messages: 4,
      messageP50Ms: 20,
      messageP99Ms: 400,
      statuses: 2,
      statusP99Ms: 1039,
    });
  });

  it('prints both runs and the ratio of their p99s with its verdict', () => {
    const stormIsolation: StormIsolationResults = {
      scenario: 'campaign',
      short: true,
      seed: 1,
      campaignMessages: 1000,
      inboundPerSecond: 100,
      withCampaign: { messages: 199, messageP50Ms: 16, messageP99Ms: 150, statuses: 3000, statusP99Ms: 1039 },
      withoutCampaign: { messages: 199, messageP50Ms: 15, messageP99Ms: 60, statuses: 0, statusP99Ms: 0 },
      wallSeconds: 20,
    };
    const results = { stormIsolation } as unknown as ResultsFile;
    const section = stormIsolationSection(results).join('\n').replace(/\s+/g, ' ');
    expect(section).toContain('**150 ms**');
    expect(section).toContain('×2.50 its p99 without it; goal at most ×2: **not met**.');
    expect(productWorkClause(results).replace(/\s+/g, ' ')).toContain('150 ms, ×2.50 its 60 ms without it');
    expect(stormIsolationSection({} as ResultsFile).join('\n')).toContain('--only storm --merge');
  });
});
