import { describe, expect, it } from 'vitest';
import { LANE_WAIT_WINDOW_MS, LaneStats } from '../../../local/observe/lane-stats.ts';

const lanes = [
  { subscriber: 'bot', lane: 'message', ordered: true },
  { subscriber: 'bot', lane: 'status', ordered: false },
] as const;

describe('LaneStats', () => {
  it("gives each lane the p50 and p99 of its own waits, and the other lane's none", () => {
    const stats = new LaneStats(lanes, { clock: () => 1_000 });
    // 1..100 ms: nearest rank gives p50 = 50, p99 = 99.
    stats.addWaits(
      'bot',
      'message',
      Array.from({ length: 100 }, (_, i) => 100 - i),
    );

    const snapshot = stats.snapshot();

    expect(snapshot.bot?.message).toMatchObject({
      ordered: true,
      waitCount: 100,
      waitP50Ms: 50,
      waitP99Ms: 99,
    });
    expect(snapshot.bot?.status).toMatchObject({
      ordered: false,
      waitCount: 0,
      waitP50Ms: null,
      waitP99Ms: null,
    });
  });

  it('forgets waits older than a minute', () => {
    let now = 0;
    const stats = new LaneStats(lanes, { clock: () => now });
    stats.addWaits('bot', 'status', [5_000]);
    now = 30_000;
    stats.addWaits('bot', 'status', [20, 40]);

    now = LANE_WAIT_WINDOW_MS + 1;
    const later = stats.snapshot().bot?.status;

    expect(later).toMatchObject({ waitCount: 2, waitP50Ms: 20, waitP99Ms: 40 });
  });

  it('keeps what a lane that went quiet last did, with its age, until it is busy again', () => {
    let now = 0;
    const stats = new LaneStats(lanes, { clock: () => now });
    expect(stats.snapshot().bot?.status?.lastActive).toBeUndefined();
    stats.addWaits('bot', 'status', [10, 30]);
    now = 5_000;
    stats.addWaits('bot', 'status', [20]);
    expect(stats.snapshot().bot?.status?.lastActive).toBeUndefined();

    now = 5_000 + LANE_WAIT_WINDOW_MS + 1_000;
    expect(stats.snapshot().bot?.status).toMatchObject({
      waitCount: 0,
      waitP50Ms: null,
      lastActive: { waitCount: 3, waitP50Ms: 20, waitP99Ms: 30, ageMs: LANE_WAIT_WINDOW_MS + 1_000 },
    });
    now += 120_000;
    expect(stats.snapshot().bot?.status?.lastActive?.ageMs).toBe(LANE_WAIT_WINDOW_MS + 121_000);

    stats.addWaits('bot', 'status', [7]);
    expect(stats.snapshot().bot?.status).toMatchObject({ waitCount: 1, waitP50Ms: 7, lastActive: undefined });
  });

  it('keeps the latest queue sample of each lane and ignores unknown subscribers and lanes', () => {
    const stats = new LaneStats(lanes);
    stats.addQueueSample('bot', 'message', { backlog: 3, inFlight: 1, dlq: 0, oldestMessageAgeMs: 1_200 });
    stats.addQueueSample('bot', 'message', { backlog: 0, inFlight: 0, dlq: 1, oldestMessageAgeMs: null });
    stats.addWaits('crm', 'message', [1]);
    stats.addWaits('bot', 'burst', [1]);

    const snapshot = stats.snapshot();

    expect(snapshot.bot?.message?.queue).toEqual({
      backlog: 0,
      inFlight: 0,
      dlq: 1,
      oldestMessageAgeMs: null,
    });
    expect(snapshot.bot?.status?.queue).toBeUndefined();
    expect(Object.keys(snapshot)).toEqual(['bot']);
    expect(snapshot.bot?.message?.waitCount).toBe(0);
  });
});
