/**
 * The real consumer under the protocol checker, seeds 1001–2000 (the other thousand of the default 2000 run
 * in protocol-seeds-1.test.ts, in parallel). Replay a failing seed with
 * `npm run check:protocol -- --seed S --trace`.
 */
import { describe, it } from 'vitest';
import { runMany } from '../../protocol-checker/run-many.ts';
import { expectEveryScheduleToHold } from '../../protocol-checker/schedule-expectations.ts';

describe('the consumer protocol under simulated interleavings and faults', () => {
  it('keeps every invariant on schedules 1001–2000', { timeout: 300_000 }, async () => {
    const summary = await runMany({ firstSeed: 1001, schedules: 1000 });
    expectEveryScheduleToHold(summary, 1000);
  });
});
