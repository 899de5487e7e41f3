/**
 * The benchmark's own parts that its figures rest on: the consumer workload holds what docs/benchmarks.md
 * says it holds, the bundles are built with the construct's options, and its rounds stop when their median
 * is narrow enough (the statistics themselves: cli/test/unit/tools/statistics.test.ts).
 * (No timing here: a benchmark is never a timed test.)
 */
import { describe, expect, it } from 'vitest';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import { BUNDLING } from '../../../lib/defaults.ts';
import { esbuildOptionsLikeCdk } from '../../bench/bundles/lambda-bundles.ts';
import { buildRebatchedWorkload } from '../../bench/consumer/rebatched-probe.ts';
import { narrowEnough, roundOrder } from '../../bench/consumer/rounds.ts';
import type { ConsumerBenchOutput, ConsumerRun } from '../../bench/consumer/worker.ts';
import { buildConsumerWorkload } from '../../bench/consumer/workload.ts';
import { summarizeConsumer } from '../../bench/results.ts';

function wamidsOf(body: string): string[] {
  const extraction = extractEvents(body);
  if (!extraction.ok) throw new Error('unusable body');
  return extraction.events.map((event) => {
    expect(event.kind).toBe('message');
    return event.key.replace(/^msg:/, '');
  });
}

describe('buildConsumerWorkload', () => {
  const workload = buildConsumerWorkload();
  const batchOf = (index: number) => Math.floor(index / workload.batchSize);

  it('holds 2000 single-message records, 1400 distinct, 600 duplicates in three equal kinds', () => {
    expect(workload.records).toHaveLength(2000);
    expect(workload.distinctWamids.size).toBe(1400);
    expect(workload.duplicates).toEqual({ 'in-batch': 200, 'cross-batch': 200, rebatched: 200 });
    const wamids = workload.records.map((record) => wamidsOf(record.body));
    for (const list of wamids) expect(list).toHaveLength(1);
    expect(new Set(wamids.flat())).toEqual(new Set(workload.distinctWamids));
    expect(new Set(workload.records.map((record) => record.messageId)).size).toBe(2000);
  });

  it('places each kind of duplicate where its name says', () => {
    const firstSeen = new Map<string, { index: number; body: string }>();
    const kinds = { sameBatch: 0, laterSameBytes: 0, laterOtherBytes: 0 };
    workload.records.forEach((record, index) => {
      const wamid = wamidsOf(record.body)[0] as string;
      const first = firstSeen.get(wamid);
      if (first === undefined) {
        firstSeen.set(wamid, { index, body: record.body });
        return;
      }
      if (batchOf(first.index) === batchOf(index)) {
        expect(record.body).toBe(first.body);
        kinds.sameBatch++;
      } else if (record.body === first.body) {
        kinds.laterSameBytes++;
      } else {
        kinds.laterOtherBytes++;
      }
    });
    expect(kinds).toEqual({ sameBatch: 200, laterSameBytes: 200, laterOtherBytes: 200 });
  });

  it('is the same for the same seed', () => {
    const again = buildConsumerWorkload();
    expect(again.records.map((record) => record.body)).toEqual(workload.records.map((record) => record.body));
  });
});

describe('buildRebatchedWorkload', () => {
  it('repeats messages in bodies regrouped with other messages', () => {
    const probe = buildRebatchedWorkload();
    const bodies = probe.records.map((record) => wamidsOf(record.body));
    const seen = new Set<string>();
    let mixed = 0;
    for (const wamids of bodies) {
      const repeats = wamids.filter((wamid) => seen.has(wamid)).length;
      if (repeats > 0 && repeats < wamids.length) mixed++;
      for (const wamid of wamids) seen.add(wamid);
    }
    expect(seen).toEqual(new Set(probe.distinctWamids));
    expect(bodies.some((wamids) => wamids.length > 1)).toBe(true);
    expect(mixed).toBeGreaterThan(0);
  });
});

describe('esbuildOptionsLikeCdk', () => {
  it("applies the construct's BUNDLING as aws-cdk-lib does", () => {
    const options = esbuildOptionsLikeCdk(BUNDLING, '/project/functions/receiver.ts', '/out/receiver');
    expect(options).toMatchObject({
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: '/out/receiver/index.mjs',
      target: BUNDLING.target,
      minify: BUNDLING.minify,
      sourcemap: true,
      sourcesContent: false,
      mainFields: BUNDLING.mainFields,
      banner: { js: BUNDLING.banner },
      // bundleAwsSDK: nothing stays external.
      external: [],
    });
  });

  it('refuses a bundling option it would not apply', () => {
    expect(() => esbuildOptionsLikeCdk({ ...BUNDLING, keepNames: true }, '/e.ts', '/out')).toThrow(
      /keepNames/,
    );
  });
});

describe('rounds', () => {
  it('keeps the middle contestant next to both others in every round', () => {
    for (let round = 0; round < 4; round++) {
      const order = roundOrder(['powertools', 'ours', 'contractFloor'], round);
      expect(order[1]).toBe('ours');
      expect(order[0]).toBe(round % 2 === 0 ? 'powertools' : 'contractFloor');
    }
  });

  it('stops once the interval of the median lies within the half-width', () => {
    const tight = [1.2, 1.21, 1.19, 1.2, 1.22, 1.18, 1.2, 1.21];
    expect(narrowEnough(tight, 0.05)).toBe(true);
    expect(narrowEnough([...tight.slice(0, 7), 1.6], 0.05)).toBe(false);
    expect(narrowEnough(tight.slice(0, 4), 0.05)).toBe(false);
  });
});

describe('summarizeConsumer', () => {
  const run = (contestant: ConsumerRun['contestant'], eventsPerSec: number, effects = 1400): ConsumerRun => ({
    contestant,
    wallMs: 2_000_000 / eventsPerSec,
    eventsPerSec,
    requests: 3200,
    requestsByOperation: { PutItem: 1800, UpdateItem: 1400 },
    requestsPerEvent: 1.6,
    meanRequestMsByOperation: { PutItem: 10, UpdateItem: 10 },
    wru: 3200,
    rru: 0,
    failedConditionWru: 400,
    effects,
    missingEffects: 0,
    repeatedEffects: 0,
    nodeCpuMs: 2000,
    invocations: 200,
    medianInvocationMs: 40,
    p90InvocationMs: 60,
    billedMs: 8000,
    logBytes: 100_000,
    failedInvocations: 0,
    redeliveries: 0,
    redeliveredIds: [],
  });
  const output = (runs: ConsumerRun[], roundTripRuns: ConsumerRun[] = []): ConsumerBenchOutput => ({
    rebatchedProbe: {
      records: 0,
      distinctEvents: 0,
      ours: { effects: 0, missing: 0, repeated: 0 },
      powertools: { effects: 0, missing: 0, repeated: 0 },
      powertoolsPerMessage: { effects: 0, missing: 0, repeated: 0 },
      powertoolsAllWamids: { effects: 0, missing: 0, repeated: 0 },
    },
    events: 2000,
    distinctEvents: 1400,
    duplicates: { 'in-batch': 200, 'cross-batch': 200, rebatched: 200 },
    runs,
    roundTripRuns,
  });
  const settings = { duplicateRatio: 0.3, batchSize: 10, concurrency: 5 };

  it('takes each ratio within a round, then the median over the rounds', () => {
    // Round 2 is slow for everyone (a busy machine): per-round ratios cancel that out.
    const summary = summarizeConsumer(
      output([
        run('ours', 900),
        run('powertools', 600),
        run('contractFloor', 1000),
        run('powertools', 300),
        run('contractFloor', 500),
        run('ours', 420),
        run('contractFloor', 1200),
        run('ours', 1080),
        run('powertools', 800),
      ]),
      settings,
    );
    expect(summary.pairedSpeedups).toEqual([1.5, 1.4, 1.35]);
    expect(summary.speedup).toBe(1.4);
    expect(summary.speedupCeiling).toBe(1.667);
    expect(summary.shareOfFloor).toBe(0.9);
    // Three rounds give a 75% interval only: not enough to call the speedup within ±5%.
    expect(summary.speedupInterval).toEqual({ low: 1.35, high: 1.5, confidence: 0.75 });
    expect(summary.speedupWithin5Percent).toBe(false);
    expect(summary.ours.wruPerEvent).toBe(1.6);
    expect(summary.ours.eventsPerSec).toBe(900);
    expect(summary.contractFloor.eventsPerSecRuns).toEqual([1000, 500, 1200]);
    expect(summary.withAddedRoundTrip).toBeUndefined();
  });

  it('summarizes the rounds with an added round trip apart from the main rounds', () => {
    const summary = summarizeConsumer(
      output(
        [run('ours', 900), run('powertools', 600), run('contractFloor', 1000)],
        [
          run('ours', 2000),
          run('powertools', 1600),
          run('contractFloor', 2400),
          run('powertools', 1000),
          run('contractFloor', 1100),
          run('ours', 1300),
        ],
      ),
      { ...settings, addedRoundTripMs: 5 },
    );
    expect(summary.speedup).toBe(1.5);
    expect(summary.withAddedRoundTrip).toMatchObject({
      addedRoundTripMs: 5,
      runsPerContestant: 2,
      ours: { eventsPerSec: 1650 },
      powertools: { eventsPerSec: 1300 },
      speedup: 1.275,
      speedupCeiling: 1.3,
      // The median of the rounds' ours/floor, 2000/2400 and 1300/1100, each rounded to 0.833 and 1.182.
      shareOfFloor: 1.007,
    });
  });

  it('refuses runs whose effects differ between contestants', () => {
    expect(() =>
      summarizeConsumer(
        output([run('ours', 900), run('powertools', 600), run('contractFloor', 1000, 1399)]),
        settings,
      ),
    ).toThrow(/Effects differ/);
  });
});
