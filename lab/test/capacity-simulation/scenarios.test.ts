/**
 * Four scenarios' short versions on the defaults (the campaign beside nine numbers has a file of its own),
 * their verdicts checked, and a control that must fail:
 * the steady scenario behind the 1,000 rps route throttle of before the construct sized it for a peak
 * (docs/decisions.md, "The defaults carry one number at Meta's top tier, sized by the planner") gets 429s.
 */
import { describe, expect, it } from 'vitest';
import type { LatencySeries } from '../../capacity-simulation/measures.ts';
import { scaleReport } from '../../capacity-simulation/scale-report.ts';
import { oldThrottleControl, scenario } from '../../capacity-simulation/scenarios.ts';
import { runScenario } from '../../capacity-simulation/simulation.ts';
import { verdicts } from '../../capacity-simulation/verdicts.ts';

const SEED = 1;
const LONG = 180_000;

function holding(report: ReturnType<typeof scaleReport>, name: string): boolean | undefined {
  return report.verdicts.find((verdict) => verdict.name.includes(name))?.holds;
}

describe('scale scenarios, short versions, on the defaults', () => {
  it(
    'steady: no 429, no DynamoDB throttling, the message lane p99 under 1 s, every event effected exactly once, no DLQ arrival',
    async () => {
      const config = scenario('steady', true);
      const report = scaleReport('steady', config, true, await runScenario(config, SEED));
      expect(report.posts).toBeGreaterThan(3_000);
      expect(holding(report, 'no 429')).toBe(true);
      expect(holding(report, 'no DynamoDB throttling')).toBe(true);
      expect(holding(report, 'message lane p99 wait under 1 s')).toBe(true);
      expect(holding(report, 'exactly once')).toBe(true);
      expect(holding(report, 'no DLQ')).toBe(true);
      expect(report.effects.effected).toBe(report.effects.events);
      // Every difference over 20 % from the planner carries its reason.
      for (const comparison of report.comparisons) {
        if (comparison.difference > 0.2) expect(comparison.reason).toEqual(expect.any(String));
      }
    },
    LONG,
  );

  it(
    "ten numbers, one running a campaign: the other nine numbers' chats keep their p99 wait under 1 s",
    async () => {
      const config = scenario('ten-numbers', true);
      const report = scaleReport('ten-numbers', config, true, await runScenario(config, SEED));
      expect(report.holds).toBe(true);
    },
    LONG,
  );

  it(
    'campaign: live chats under 1 s at p99, the status backlog drained, exactly once, no DLQ arrival',
    async () => {
      const config = scenario('campaign', true);
      const report = scaleReport('campaign', config, true, await runScenario(config, SEED));
      expect(report.verdicts.filter((verdict) => !verdict.holds)).toEqual([]);
    },
    LONG,
  );

  it(
    "outage: Meta's retries after the endpoint comes back are all accepted and effected exactly once",
    async () => {
      const config = scenario('outage', true);
      const measures = await runScenario(config, SEED);
      expect(measures.sender.serverErrors).toBeGreaterThan(0);
      expect(measures.sender.retries).toBeGreaterThan(0);
      expect(verdicts('outage', measures).filter((verdict) => !verdict.holds)).toEqual([]);
    },
    LONG,
  );

  it(
    'control: behind a 1,000 rps route throttle the steady scenario gets 429s and its verdict fails',
    async () => {
      const measures = await runScenario(oldThrottleControl(), SEED);
      expect(measures.sender.throttled429).toBeGreaterThan(0);
      expect(verdicts('steady', measures).find((verdict) => verdict.name === 'no 429')?.holds).toBe(false);
    },
    LONG,
  );
});

describe('capacity simulation', () => {
  it(
    'same seed, same report; another seed, other draws',
    async () => {
      const small = {
        name: 'small',
        trafficMs: 1_000,
        numbers: [{ index: 0, outboundPerSecond: 20, inboundPerSecond: 20, conversations: 100 }],
        drainLimitMs: 120_000,
        resendRate: 0.05,
      };
      // A series by its count and every percentile: its histogram's buckets hold nothing else.
      const shape = (series: LatencySeries) => [
        series.count,
        ...Array.from({ length: 101 }, (_, p) => series.percentile(p)),
      ];
      const figures = async (seed: number) => {
        const m = await runScenario(small, seed);
        return {
          ...m,
          wallMs: 0,
          ackLatencies: shape(m.ackLatencies),
          waits: [shape(m.waits.message), shape(m.waits.status)],
          waitsByNumber: [...m.waitsByNumber].map(([number, series]) => [number, shape(series)]),
          statusesByNumber: [...m.statusesByNumber].map(([number, statuses]) => [
            number,
            { ...statuses, waits: shape(statuses.waits) },
          ]),
        };
      };
      const first = await figures(7);
      expect(await figures(7)).toEqual(first);
      expect((await figures(8)).ackLatencies).not.toEqual(first.ackLatencies);
    },
    LONG,
  );
});
