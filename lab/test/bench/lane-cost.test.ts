/** The lanes' cost (lab/bench/cost/lane-cost.ts) against hand arithmetic, and docs/cost.md's region kept in step. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRICES } from '../../../cli/cost/prices.ts';
import { ASSUMPTIONS } from '../../../cli/cost/stack-cost.ts';
import { DEFAULT_CONSUMER_MEMORY_MB } from '../../../lib/defaults.ts';
import { idleMessageLanePerMonth, laneCostRows, subscriberQueueSide } from '../../bench/cost/lane-cost.ts';
import { lanesRegion } from '../../bench/markdown/cost-page.ts';
import { readResults } from '../../bench/results-markdown.ts';
import { readRegion } from '../../docs/markdown/regions.ts';

const mix = { messageShare: 0.25, deliveriesPerEvent: 1 };
/** Lambda dollars of `invocations` invocations of `ms` each. */
const lambda = (invocations: number, ms: number) =>
  invocations * PRICES.lambda.perRequest +
  invocations * (DEFAULT_CONSUMER_MEMORY_MB / 1024) * (ms / 1000) * PRICES.lambda.perGbSecond;

describe('lane cost', () => {
  it('costs only the FIFO premium at quiet traffic, where both layouts invoke once per record', () => {
    const single = subscriberQueueSide('singleQueue', 'quiet', mix);
    const lanes = subscriberQueueSide('lanes', 'quiet', mix);
    expect(lanes.consumerInvocations).toBeCloseTo(single.consumerInvocations, 6);
    expect(single.consumerInvocations).toBeCloseTo(1e6, 6);
    // 250,000 messages: a send, a receive and a delete each, at the FIFO price instead of the standard one.
    expect(lanes.total - single.total).toBeCloseTo(
      250_000 * 3 * (PRICES.sqs.fifoPerRequest - PRICES.sqs.perRequest),
      9,
    );
  });

  it('invokes the message lane once per message at busy traffic, the status lane once per 10 records', () => {
    const lanes = subscriberQueueSide('lanes', 'busy', mix);
    expect(lanes.consumerInvocations).toBeCloseTo(250_000 + 750_000 / 10, 6);
    expect(lanes.sqsSends).toBeCloseTo(
      250_000 * PRICES.sqs.fifoPerRequest + 750_000 * PRICES.sqs.perRequest,
      9,
    );
    expect(lanes.sqsReceiveAndDelete).toBeCloseTo(
      2 * 250_000 * PRICES.sqs.fifoPerRequest + 2 * 75_000 * PRICES.sqs.perRequest,
      9,
    );
    expect(lanes.consumer).toBeCloseTo(
      lambda(250_000, ASSUMPTIONS.quiet.consumerMs) + lambda(75_000, ASSUMPTIONS.busy.consumerMs),
      9,
    );
    const single = subscriberQueueSide('singleQueue', 'busy', mix);
    expect(single.consumerInvocations).toBeCloseTo(100_000, 6);
    expect(single.consumer).toBeCloseTo(lambda(100_000, ASSUMPTIONS.busy.consumerMs), 9);
  });

  it("multiplies every subscriber's queue side and DynamoDB, and shares the rest", () => {
    const rows = laneCostRows(mix, 0.84);
    const row = (subscribers: number, layout: 'singleQueue' | 'lanes') =>
      rows.find((r) => r.traffic === 'busy' && r.subscribers === subscribers && r.layout === layout);
    const one = row(1, 'lanes');
    const three = row(3, 'lanes');
    expect(rows).toHaveLength(8);
    expect(three?.queueSide.total).toBeCloseTo(3 * (one?.queueSide.total ?? 0), 9);
    expect((three?.unchanged ?? 0) - (one?.unchanged ?? 0)).toBeCloseTo(2 * 0.84, 9);
    expect(row(1, 'singleQueue')?.unchanged).toBeCloseTo(one?.unchanged ?? 0, 9);
    expect(idleMessageLanePerMonth(3)).toBeCloseTo(3 * 650_000 * PRICES.sqs.fifoPerRequest, 9);
  });

  it("is docs/cost.md's generated region, priced from prices.ts and the bot mix of lab/bench/results.json", async () => {
    const page = readFileSync(new URL('../../../docs/cost.md', import.meta.url), 'utf8');
    const region = lanesRegion(await readResults());
    expect(readRegion(page, 'lanes')).toBe(region.trim());
    expect(region).toContain('$0.50 per million');
  });
});
