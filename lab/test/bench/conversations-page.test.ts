/** docs/benchmarks.md's Conversations region and the README clause, from made-up results. */
import { describe, expect, it } from 'vitest';
import { summarizeLatencies } from '../../bench/conversations/conversations-results.ts';
import { conversationsRegion, readmeConversationsClause } from '../../bench/markdown/conversations-page.ts';
import type { ResultsFile } from '../../bench/results.ts';

const conversations = (oursMs: number[], floorMs: number[], liveMs: number[], inversions = 0) => ({
  replyLatency: {
    runs: oursMs.length,
    ours: summarizeLatencies(oursMs),
    floor: summarizeLatencies(floorMs),
    ratio: 0,
    oursAfterAnswer: summarizeLatencies(oursMs.map((x) => x - 10)),
    floorAfterAnswer: summarizeLatencies(floorMs.map((x) => x - 10)),
  },
  storm: {
    statuses: 3000,
    statusesPerSec: 198.7,
    targetPerSec: 200,
    statusHandlerMs: 100,
    non200: 0,
    statusAckP50Ms: 12,
    statusAckMaxMs: 80,
    statusesHandledByLastLive: 2500,
    live: { ...summarizeLatencies(liveMs), p99Ms: Math.max(...liveMs), count: liveMs.length },
    liveMissing: 0,
    ratioToLoneMedian: 0,
    liveAfterAnswer: summarizeLatencies(liveMs),
  },
  order: {
    pairs: 200,
    gapMs: 30,
    medianGapSentMs: 31.2,
    maxHandlerMs: 200,
    seed: 18,
    inversions,
    judged: 200,
    missing: 0,
    repeated: 0,
  },
  lanes: {
    subscribers: [
      {
        messageLaneOrdered: true,
        messageLaneSettings: { batchSize: 10, maxBatchingWindowSeconds: 0, maxConcurrency: 5 },
        settings: { batchSize: 10, maxBatchingWindowSeconds: 1, maxConcurrency: 5 },
      },
    ],
  },
  machine: { cpus: 2, loadAverageAtStart: [1, 2, 3], loadAverageAtEnd: [2, 2, 3] },
  durationSeconds: 150,
  finishedAt: '2026-12-01T23:00:00.000Z',
});

const results = (c?: ReturnType<typeof conversations>) => ({ conversations: c }) as unknown as ResultsFile;

describe('conversations region', () => {
  it('gives the medians with their spread, the ratios as measurements, and the order verdict', () => {
    const page = conversationsRegion(results(conversations([60, 64, 70], [50, 52, 55], [80, 150, 90], 2)));
    const region = page.replace(/\n(?!\|)/g, ' ');
    expect(region).toContain(
      '| local stack, defaults         | **64.0 ms** | 60.0 ms–70.0 ms | 60.0 ms–70.0 ms',
    );
    expect(region).toContain('**52.0 ms**');
    // 64 / 52 = 1.23: a measurement of the local stack, no longer a goal.
    expect(region).toContain('×1.23 the floor.');
    expect(region).not.toContain('goal at most ×1.5');
    // 150 / 64 = 2.34
    expect(region).toContain('**×2.34**');
    expect(region).not.toContain('Goal at most ×2');
    expect(region).toContain('Goal 0 inversions: **not met**.');
    expect(region).toContain(
      'the message lane FIFO, ordered by conversation (batches of up to 10, a 0 s window',
    );
    expect(region).toContain('3,000 status deliveries');
  });

  it('says how to measure it when the results have none, and the README says nothing', () => {
    expect(conversationsRegion(results())).toContain('Not measured yet');
    expect(conversationsRegion(results())).toContain('a new pair every 60 ms');
    expect(readmeConversationsClause(results())).toBe('');
  });

  it('gives the README the three figures', () => {
    const clause = readmeConversationsClause(
      results(conversations([60, 64, 70], [50, 52, 55], [80, 150, 90])),
    );
    expect(clause).toContain('64.0 ms, ×1.23 the pass-through floor');
    expect(clause).toContain("the live messages' p99 wait is 150 ms, ×2.34 the lone median");
    expect(clause).toContain('0 of 200 same-customer pairs ran out of order');
  });
});
