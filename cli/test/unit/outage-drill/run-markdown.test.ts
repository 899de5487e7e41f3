/**
 * The generators of the recorded-run regions (docs/outage-drill.md, docs/consumer.md) on made-up records:
 * what they print must follow the record, including the cases the committed records do not show.
 */
import { describe, expect, it } from 'vitest';
import { type KillRun, killRunsMarkdown, killTestLine } from '../../../../lab/docs/kill-run-record.ts';
import {
  drillRunsMarkdown,
  mmcExampleMarkdown,
  shownCommand,
} from '../../../../lab/docs/outage-drill-markdown.ts';
import type { DrillRecord } from '../../../outage-drill/run-record.ts';

const record = (queueing: Partial<DrillRecord['queueing']>, verdict: Partial<DrillRecord['verdict']> = {}) =>
  ({
    command: 'npm run outage-drill -- --seed 3 --save x.json',
    recordedAt: '2026-01-02T03:04:05.000Z',
    machine: { cores: 4, loadAverage: [0.5, 1.54] },
    wallSeconds: 81.4,
    options: {
      ratePerSecond: 8,
      effectMeanMs: 150,
      workers: 2,
      durationSeconds: 60,
      outageStartSeconds: 20,
      outageSeconds: 15,
      outageMode: 'mixed',
      metaTimeoutMs: 3000,
      targetWaitMs: 100,
      seed: 3,
    },
    totals: {
      events: 480,
      deliveriesSent: 700,
      accepted: 480,
      failed: 220,
      retriesSent: 210,
      redeliveriesSent: 6,
      duplicatesSkipped: 150,
      duplicateRateByField: { message: 21.6, status: 30.2 },
    },
    peakDuplicateRateAfterOutage: { fromSecond: 35, toSecond: 40, byField: { message: 40.4, status: 63.5 } },
    maxBacklog: 31,
    queueing: {
      windowSeconds: [4, 20],
      records: 120,
      measuredArrivalsPerSecond: 8,
      measuredServiceMs: 180,
      measuredServiceCv2: 0.5,
      measuredMeanWaitMs: 140,
      predictedMeanWaitMs: 84.4,
      predictedFromMeasuredMs: 160.2,
      predictedMgcMs: 120.1,
      recommendedServers: 3,
      ...queueing,
    },
    verdict: {
      exactlyOnce: true,
      inconclusive: false,
      distinctEvents: 480,
      effectedOnce: 480,
      missing: 0,
      duplicated: 0,
      ...verdict,
    },
  }) satisfies DrillRecord;

describe('drillRunsMarkdown', () => {
  it("prints a run's figures, rounded, and its command without --save", () => {
    const markdown = drillRunsMarkdown([{ name: 'run', record: record({}) }]);
    expect(markdown).toContain('`npm run outage-drill -- --seed 3`');
    expect(markdown).not.toContain('--save');
    expect(markdown).toContain('0.5 → 1.5 on 4 cores');
    expect(markdown).toContain('480 / 700 (210 retries, 6 redeliveries)');
    expect(markdown).toContain('message 22 %, status 30 % (64 % at 35–40 s, after the outage)');
    expect(markdown).toContain('180 ms, 0.5 (120 records, 4–20 s)');
    expect(markdown).toContain('140 ms / 84 ms / 160 ms / 120 ms');
    expect(markdown).toContain('`maxConcurrency` 3');
    expect(markdown).toContain('exactly once (480 events)');
    expect(markdown).toContain('| 81 s');
    expect(markdown).toContain(
      'the measured S is 1.2 × the configured 150 ms; the measured mean wait was 140 ms',
    );
  });

  it("names a run recorded under the script's old name, `npm run simulate`, by its current one", () => {
    expect(
      shownCommand('npm run simulate -- --short --seed 42 --save cli/outage-drill/runs/short.json'),
    ).toBe('npm run outage-drill -- --short --seed 42');
  });

  it('gives the measured ρ of a saturated run, and says the workers were saturated', () => {
    const markdown = drillRunsMarkdown([
      { name: 'run', record: record({ measuredServiceMs: 300, predictedFromMeasuredMs: 'unbounded' }) },
    ]);
    expect(markdown).toContain('unbounded (measured ρ ≈ 1.20)');
    expect(markdown).toContain('so the 2 workers were saturated');
  });

  it('prints a failed and an inconclusive verdict as such', () => {
    expect(
      drillRunsMarkdown([
        { name: 'run', record: record({}, { exactlyOnce: false, missing: 2, duplicated: 1 }) },
      ]),
    ).toContain('**failed**: 2 never effected, 1 effected more than once');
    expect(
      drillRunsMarkdown([
        { name: 'run', record: record({}, { exactlyOnce: false, inconclusive: true, missing: 7 }) },
      ]),
    ).toContain('inconclusive (7 not effected');
  });
});

describe('mmcExampleMarkdown', () => {
  it("gives the default scenario's Erlang C by the closed form", () => {
    // a = 1.2, c = 2: C = (a²/2! · c/(c − a)) / (1 + a + a²/2! · c/(c − a)) = 0.45; Wq = C / (c/S − λ).
    const top = (1.2 ** 2 / 2) * (2 / 0.8);
    const c2 = top / (1 + 1.2 + top);
    const top3 = (1.2 ** 3 / 6) * (3 / 1.8);
    const c3 = top3 / (1 + 1.2 + 1.2 ** 2 / 2 + top3);
    const example = mmcExampleMarkdown();
    expect(example).toContain(`C = ${Number(c2.toFixed(2))}`);
    expect(example).toContain(`Wq = ${((c2 / (2 / 0.15 - 8)) * 1000).toFixed(0)} ms;`);
    expect(example).toContain(`with c = 3, Wq = ${((c3 / (3 / 0.15 - 8)) * 1000).toFixed(0)} ms.`);
  });
});

describe('killRunsMarkdown', () => {
  const run = (inWindow: number, effectedTwice: number, load: number): KillRun => ({
    recordedAt: '2026-01-02T03:04:05.000Z',
    machine: { cores: 2, loadAverage: [load, load + 1] },
    events: 180,
    killedAfterEffects: 20,
    claimsLeftProcessing: 40,
    inWindow,
    windowCap: 20,
    effectedTwice,
    killedAfterFirstEffectMs: 250,
    wallSeconds: 30.2,
  });

  it('pastes the last run as the test prints it, and lists every run', () => {
    const markdown = killRunsMarkdown({ runs: [run(3, 3, 2), run(5, 5, 7)] });
    expect(markdown).toContain(`\`\`\`\n${killTestLine(run(5, 5, 7))}\n\`\`\``);
    expect(markdown).toContain('The 2 recorded runs');
    expect(markdown).toContain('load average 2.0–8.0');
    expect(markdown).toContain('put 3 and 5 events in the window, and effected 3 and 5 twice: every event');
  });

  it('claims nothing about the window when a run effected fewer twice than it caught', () => {
    expect(killRunsMarkdown({ runs: [run(4, 3, 2)] })).not.toContain('every event in the window');
  });
});
