/**
 * A seed replays exactly: the same seed gives the same trace, step for step (time, worker, operation,
 * outcome), the same faults and the same verdict. Different seeds give different schedules.
 */
import { describe, expect, it } from 'vitest';
import { runSchedule } from '../../protocol-checker/run-schedule.ts';

// Seeds with crashes, timeouts, lost answers, duplicate deliveries and Meta re-sends among them; seed 11 has a
// customer whose phone number comes and goes, and a group send with a username participant.
const SEEDS = [1, 2, 3, 11, 13, 561, 1032];

describe('a simulated schedule', () => {
  it.each(SEEDS)('replays seed %i step for step', async (seed) => {
    const first = await runSchedule({ seed });
    const second = await runSchedule({ seed });
    expect(first.trace.lines.length).toBeGreaterThan(20);
    expect(second.trace.lines).toEqual(first.trace.lines);
    expect(second.faults.toRecord()).toEqual(first.faults.toRecord());
    expect(second.violations).toEqual(first.violations);
    expect(second.steps).toBe(first.steps);
  });

  it('differs from one seed to the next', async () => {
    const traces = new Set<string>();
    // One after another: schedules never run concurrently (see seeded-math-random.ts).
    for (const seed of SEEDS) traces.add((await runSchedule({ seed })).trace.format());
    expect(traces.size).toBe(SEEDS.length);
  });
});
