/**
 * What one `npm run outage-drill -- --save PATH` run leaves behind: the figures docs/outage-drill.md prints
 * from it (lab/docs/outage-drill-markdown.ts), as JSON. The run drives a real stack, so its timing varies
 * even with `--seed`: the page shows a committed record, not a rerun.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { DrillResult } from './run-drill.ts';

/** A wait or a time as JSON holds it: `unbounded` where the model has no steady state (ρ ≥ 1), null when unmeasured. */
export type RecordedMs = number | 'unbounded' | null;

export interface DrillRecord {
  /** The command line that wrote it. */
  readonly command: string;
  readonly recordedAt: string;
  readonly machine: {
    readonly cores: number;
    /** One-minute load average when the run started and when it ended. */
    readonly loadAverage: readonly [number, number];
  };
  /** From the command's start to its verdict, the stack's start included when it started its own. */
  readonly wallSeconds: number;
  readonly options: Pick<
    DrillResult['options'],
    | 'ratePerSecond'
    | 'effectMeanMs'
    | 'workers'
    | 'durationSeconds'
    | 'outageStartSeconds'
    | 'outageSeconds'
    | 'outageMode'
    | 'metaTimeoutMs'
    | 'targetWaitMs'
    | 'seed'
  >;
  readonly totals: DrillResult['totals'];
  /** The interval after the outage with the highest duplicate rate of any field, and its rates. */
  readonly peakDuplicateRateAfterOutage: {
    readonly fromSecond: number;
    readonly toSecond: number;
    readonly byField: Readonly<Record<string, number>>;
  } | null;
  readonly maxBacklog: number | null;
  readonly queueing: {
    readonly windowSeconds: readonly [number, number];
    readonly records: number;
    readonly measuredArrivalsPerSecond: number;
    readonly measuredServiceMs: RecordedMs;
    readonly measuredServiceCv2: number | null;
    readonly measuredMeanWaitMs: RecordedMs;
    readonly predictedMeanWaitMs: RecordedMs;
    readonly predictedFromMeasuredMs: RecordedMs;
    readonly predictedMgcMs: RecordedMs;
    readonly recommendedServers: number | null;
  };
  readonly verdict: {
    readonly exactlyOnce: boolean;
    readonly inconclusive: boolean;
    readonly distinctEvents: number;
    readonly effectedOnce: number;
    readonly missing: number;
    readonly duplicated: number;
  };
}

const ms = (value: number | undefined): RecordedMs =>
  value === undefined ? null : Number.isFinite(value) ? value : 'unbounded';

export function drillRecord(
  result: DrillResult,
  run: {
    command: string;
    cores: number;
    loadAverage: readonly [number, number];
    wallSeconds: number;
  },
): DrillRecord {
  const { options: o, queueing: q, verdict } = result;
  const afterOutage = result.intervals.filter((row) => row.phase === 'recovery' || row.phase === 'drain');
  const rates = (row: (typeof afterOutage)[number]) =>
    Object.fromEntries(
      Object.entries(row.duplicateRateByField).filter(
        (entry): entry is [string, number] => entry[1] !== undefined,
      ),
    );
  const peak = afterOutage.reduce<(typeof afterOutage)[number] | undefined>(
    (best, row) =>
      best === undefined ||
      Math.max(0, ...Object.values(rates(row))) > Math.max(0, ...Object.values(rates(best)))
        ? row
        : best,
    undefined,
  );
  const backlogs = result.intervals.flatMap((row) => (row.backlog === undefined ? [] : [row.backlog]));
  return {
    command: run.command,
    recordedAt: new Date(result.finishedAt).toISOString(),
    machine: { cores: run.cores, loadAverage: run.loadAverage },
    wallSeconds: run.wallSeconds,
    options: {
      ratePerSecond: o.ratePerSecond,
      effectMeanMs: o.effectMeanMs,
      workers: o.workers,
      durationSeconds: o.durationSeconds,
      outageStartSeconds: o.outageStartSeconds,
      outageSeconds: o.outageSeconds,
      outageMode: o.outageMode,
      metaTimeoutMs: o.metaTimeoutMs,
      targetWaitMs: o.targetWaitMs,
      seed: o.seed,
    },
    totals: result.totals,
    peakDuplicateRateAfterOutage:
      peak === undefined
        ? null
        : { fromSecond: peak.fromSecond, toSecond: peak.toSecond, byField: rates(peak) },
    maxBacklog: backlogs.length === 0 ? null : Math.max(...backlogs),
    queueing: {
      windowSeconds: q.windowSeconds,
      records: q.records,
      measuredArrivalsPerSecond: q.measuredArrivalsPerSecond,
      measuredServiceMs: ms(q.measuredServiceMs),
      measuredServiceCv2: q.measuredServiceCv2 ?? null,
      measuredMeanWaitMs: ms(q.measuredMeanWaitMs),
      predictedMeanWaitMs: ms(q.predictedMeanWaitMs),
      predictedFromMeasuredMs: ms(q.predictedFromMeasuredMs),
      predictedMgcMs: ms(q.predictedMgcMs),
      recommendedServers: q.recommendation?.servers ?? null,
    },
    verdict: {
      exactlyOnce: verdict.exactlyOnce,
      inconclusive: verdict.inconclusive === true,
      distinctEvents: verdict.distinctEvents,
      effectedOnce: verdict.effectedOnce,
      missing: verdict.missing.length,
      duplicated: verdict.duplicated.length,
    },
  };
}

export function writeDrillRecord(path: string, record: DrillRecord): void {
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`);
}

export function readDrillRecord(path: string | URL): DrillRecord {
  return JSON.parse(readFileSync(path, 'utf8')) as DrillRecord;
}
