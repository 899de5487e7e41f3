/**
 * The campaign beside nine numbers, short, on the defaults: the status lane is an SQS fair queue between phone
 * numbers (the receiver sends each status with its phone_number_id as MessageGroupId), so the nine numbers'
 * statuses keep their p99 wait under 1 s while the campaign's own wait past it in the lane they share. A lane
 * served first in, first out would give the nine the campaign's wait (lane-queues.ts's fairness is held to that
 * in models.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { scaleReport } from '../../capacity-simulation/scale-report.ts';
import { scenario } from '../../capacity-simulation/scenarios.ts';
import { runScenario } from '../../capacity-simulation/simulation.ts';
import { statusWaitOf } from '../../capacity-simulation/verdicts.ts';

const SEED = 1;
// Each run is a minute or two alone, several on a machine other runs share.
const LONG = 600_000;
const NINE = [1, 2, 3, 4, 5, 6, 7, 8, 9];

describe('campaign beside nine numbers, short, on the defaults', () => {
  it(
    "the nine's statuses under 1 s at p99 while the campaign's queue, the campaign's status backlog emptied after its end, exactly once, no DLQ arrival",
    async () => {
      const config = scenario('campaign-beside-nine', true);
      const measures = await runScenario(config, SEED);
      const report = scaleReport('campaign-beside-nine', config, true, measures);
      expect(report.responses429).toBe(0);
      expect(report.verdicts.filter((verdict) => !verdict.holds)).toEqual([]);
      // The campaign's statuses did outrun the lane: its own wait past what the nine's stays under.
      expect(statusWaitOf(measures, [0]).p99).toBeGreaterThan(1_000);
      expect(statusWaitOf(measures, NINE).worstP99).toBeLessThan(1_000);
    },
    LONG,
  );
});
