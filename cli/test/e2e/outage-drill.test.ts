/**
 * A short outage drill, run as a user would (`npm run outage-drill -- --short`): it starts its own local
 * stack, drives it through an outage with Meta-style retries and redeliveries, and must conclude that every
 * distinct event was effected exactly once.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import getPort from 'get-port';
import { describe, expect, it } from 'vitest';
import { drillRunsMarkdown } from '../../../lab/docs/outage-drill-markdown.ts';
import { readDrillRecord } from '../../outage-drill/run-record.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REPORT = fileURLToPath(new URL('../output/outage-drill-report.html', import.meta.url));
const RECORD = fileURLToPath(new URL('../output/outage-drill-run.json', import.meta.url));

interface JsonSummary {
  verdict: { exactlyOnce: boolean; distinctEvents: number; effectedOnce: number; missing: number };
  totals: {
    deliveriesSent: number;
    retriesSent: number;
    redeliveriesSent: number;
    duplicatesSkipped: number;
  };
  queueing: { records: number; predictedMeanWaitMs: number; recommendation?: { servers: number } };
  intervals: number;
}

describe('npm run outage-drill -- --short', () => {
  it('survives an outage with retries and redeliveries, effecting every event exactly once', async () => {
    // A free PORT: the drill must start its own stack, not drive one a developer has running.
    const port = await getPort();
    const { code, stdout, stderr } = await new Promise<{
      code: number | null;
      stdout: string;
      stderr: string;
    }>((resolve) => {
      execFile(
        process.execPath,
        [
          '--import',
          'tsx',
          'cli/outage-drill/outage-drill.ts',
          '--short',
          '--json',
          '--seed',
          '42',
          '--report',
          REPORT,
          '--save',
          RECORD,
        ],
        {
          cwd: ROOT,
          // The SDK's warning switch unset, as in a user's shell (vitest.config.ts sets it for the tests).
          env: { ...process.env, PORT: String(port), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: '' },
          timeout: 150_000,
        },
        (error, out, err) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout: out, stderr: err }),
      );
    });

    expect(code, `${stdout}\n${stderr}`).toBe(0);
    const summary = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as JsonSummary;
    expect(summary.verdict.exactlyOnce).toBe(true);
    expect(summary.verdict.distinctEvents).toBeGreaterThan(20);
    expect(summary.verdict.effectedOnce).toBe(summary.verdict.distinctEvents);
    // The outage did its job: Meta retried, redelivered, and the consumer skipped duplicates.
    expect(summary.totals.retriesSent).toBeGreaterThan(0);
    expect(summary.totals.redeliveriesSent).toBeGreaterThan(0);
    expect(summary.totals.duplicatesSkipped).toBeGreaterThan(0);
    expect(summary.queueing.records).toBeGreaterThan(0);
    expect(summary.queueing.recommendation?.servers).toBeGreaterThanOrEqual(2);
    expect(stdout).toContain('VERDICT: EXACTLY ONCE');
    // Its own progress lines only: no process warning (e.g. the AWS SDK's NodeVersionSupportWarning on Node 20).
    expect(stderr).not.toMatch(/\(node:\d+\)/);

    const report = readFileSync(REPORT, 'utf8');
    expect(report).toContain(`EXACTLY ONCE: all ${summary.verdict.distinctEvents} distinct events`);
    expect(report).toContain('Duplicate rate per field over time');
    expect(report).not.toMatch(/<script src=/);

    // --save: the record docs/outage-drill.md prints (npm run docs:runs) holds the run the summary reports.
    const record = readDrillRecord(RECORD);
    expect(record.command).toBe(
      `npm run outage-drill -- --short --json --seed 42 --report ${REPORT} --save ${RECORD}`,
    );
    expect(record.options).toMatchObject({ seed: 42, workers: 2, ratePerSecond: 6, effectMeanMs: 40 });
    expect(record.verdict).toMatchObject({
      exactlyOnce: true,
      inconclusive: false,
      distinctEvents: summary.verdict.distinctEvents,
      missing: 0,
      duplicated: 0,
    });
    expect(record.totals).toMatchObject(summary.totals);
    expect(record.queueing.records).toBe(summary.queueing.records);
    expect(record.queueing.recommendedServers).toBe(summary.queueing.recommendation?.servers);
    expect(record.machine.loadAverage).toHaveLength(2);
    expect(record.wallSeconds).toBeGreaterThan(record.options.durationSeconds);
    expect(drillRunsMarkdown([{ name: 'this run', record }])).toContain(
      `exactly once (${summary.verdict.distinctEvents} events)`,
    );
  }, 180_000);
});
