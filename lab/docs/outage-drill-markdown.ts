/**
 * The generated regions of docs/outage-drill.md: the worked M/M/c example (contract/erlang-c.ts on the
 * default scenario) and the committed `npm run outage-drill -- --save` runs (cli/outage-drill/runs/*.json).
 * `npm run docs:runs` writes them; lab/test/docs/generated-figures.test.ts regenerates and compares them.
 */

import { DEFAULTS } from '../../cli/outage-drill/presets.ts';
import { type DrillRecord, type RecordedMs, readDrillRecord } from '../../cli/outage-drill/run-record.ts';
import { markdownTable } from '../../cli/tools/markdown-table.ts';
import { erlangB, erlangC, meanWaitSeconds, offeredLoad, utilisation } from '../../contract/erlang-c.ts';

export const OUTAGE_DRILL_PAGE = 'docs/outage-drill.md';
export const MMC_EXAMPLE_REGION = 'mmc-example';
export const DRILL_RUNS_REGION = 'outage-drill-runs';

/** The committed runs, in the order the page shows them, from the repository root. */
export const DRILL_RUNS: readonly { readonly name: string; readonly path: string }[] = [
  { name: 'default', path: 'cli/outage-drill/runs/default.json' },
  { name: '`--short`', path: 'cli/outage-drill/runs/short.json' },
];

/** Up to `digits` decimals, trailing zeros dropped: 1.2, 0.6, 0.45. */
const short = (value: number, digits = 2) => String(Number(value.toFixed(digits)));

export function mmcExampleMarkdown(): string {
  const model = {
    arrivalRatePerSecond: DEFAULTS.rate,
    meanServiceSeconds: DEFAULTS.effectMs / 1000,
    servers: DEFAULTS.workers,
  };
  const load = offeredLoad(model);
  const more = { ...model, servers: model.servers + 1 };
  const b = erlangB(model.servers, load);
  return (
    `For example λ = ${model.arrivalRatePerSecond}/s, S = ${DEFAULTS.effectMs} ms, c = ${model.servers} (the default ` +
    `scenario): a = ${short(load)}, ρ = ${short(utilisation(model))}, B = ${short(b)}, ` +
    `C = ${short(erlangC(model.servers, load))}, Wq = ${waitMs(meanWaitSeconds(model) * 1000)}; ` +
    `with c = ${more.servers}, Wq = ${waitMs(meanWaitSeconds(more) * 1000)}.`
  );
}

function waitMs(value: RecordedMs): string {
  if (value === null) return '–';
  return value === 'unbounded' ? 'unbounded' : `${value.toFixed(0)} ms`;
}

const percent = (value: number) => `${value.toFixed(0)} %`;

/**
 * The command a record names, as a reader would type it now: without `--save PATH`, and under the script's
 * current name (the committed runs were recorded when `npm run outage-drill` was `npm run simulate`).
 */
export function shownCommand(command: string): string {
  return command.replace(/^npm run simulate --/, 'npm run outage-drill --').replace(/ --save \S+/, '');
}

function column(record: DrillRecord): string[] {
  const { options: o, totals: t, queueing: q, verdict: v, machine } = record;
  const [loadStart, loadEnd] = machine.loadAverage;
  const measuredRho =
    typeof q.measuredServiceMs === 'number'
      ? (q.measuredArrivalsPerSecond * q.measuredServiceMs) / 1000 / o.workers
      : undefined;
  const fromMeasured =
    q.predictedFromMeasuredMs === 'unbounded' && measuredRho !== undefined
      ? `unbounded (measured ρ ≈ ${measuredRho.toFixed(2)})`
      : waitMs(q.predictedFromMeasuredMs);
  const peak = record.peakDuplicateRateAfterOutage;
  const fields = Object.entries(t.duplicateRateByField);
  const peakRate = peak === null ? undefined : Math.max(0, ...Object.values(peak.byField));
  return [
    `\`${shownCommand(record.command)}\``,
    `c = ${o.workers}, λ = ${o.ratePerSecond}/s, S = ${o.effectMeanMs} ms; ${o.durationSeconds} s of traffic, a ${o.outageSeconds} s \`${o.outageMode}\` outage from ${o.outageStartSeconds} s`,
    `${short(loadStart, 1)} → ${short(loadEnd, 1)} on ${machine.cores} cores`,
    `${t.events} / ${t.deliveriesSent} (${t.retriesSent} retries, ${t.redeliveriesSent} redeliveries)`,
    `${t.failed}, ${t.duplicatesSkipped}`,
    `${fields.map(([field, rate]) => `${field} ${percent(rate)}`).join(', ') || '–'}${
      peak !== null && peakRate !== undefined
        ? ` (${percent(peakRate)} at ${peak.fromSecond}–${peak.toSecond} s, after the outage)`
        : ''
    }`,
    `${waitMs(q.measuredServiceMs)}, ${q.measuredServiceCv2 === null ? '–' : short(q.measuredServiceCv2)} (${q.records} ${q.records === 1 ? 'record' : 'records'}, ${q.windowSeconds[0]}–${q.windowSeconds[1]} s)`,
    `${waitMs(q.measuredMeanWaitMs)} / ${waitMs(q.predictedMeanWaitMs)} / ${fromMeasured} / ${waitMs(q.predictedMgcMs)}`,
    q.recommendedServers === null ? 'none up to 1000' : `\`maxConcurrency\` ${q.recommendedServers}`,
    record.maxBacklog === null ? '–' : String(record.maxBacklog),
    v.inconclusive
      ? `inconclusive (${v.missing} not effected when the queue stopped draining)`
      : v.exactlyOnce
        ? `exactly once (${v.distinctEvents} events)`
        : `**failed**: ${v.missing} never effected, ${v.duplicated} effected more than once`,
    `${Math.round(record.wallSeconds)} s`,
  ];
}

const ROWS = [
  'command',
  'scenario',
  'load average (1 min), start → end',
  'events / deliveries',
  'failed deliveries, duplicates skipped',
  'duplicate rate over the run, per field',
  'measured S (effect + overhead), Cs² (steady live phase)',
  'mean wait: measured / M/M/c configured / M/M/c measured / Allen–Cunneen',
  'recommendation for the target mean wait',
  'largest backlog at an interval’s end',
  'verdict',
  'wall time, the stack’s start included',
];

export function drillRunsMarkdown(runs: readonly { name: string; record: DrillRecord }[]): string {
  const columns = runs.map((run) => column(run.record));
  const table = markdownTable(
    ['', ...runs.map((run) => run.name)],
    ROWS.map((row, i) => [row, ...columns.map((cells) => cells[i] as string)]),
  );
  const notes = runs.map(({ name, record }) => {
    const { options: o, queueing: q } = record;
    const measured = typeof q.measuredServiceMs === 'number' ? q.measuredServiceMs : undefined;
    if (measured === undefined) return `- ${name}: no invocation in the steady live phase, nothing measured.`;
    const overhead = `the measured S is ${(measured / o.effectMeanMs).toFixed(1)} × the configured ${o.effectMeanMs} ms`;
    const saturated = q.predictedFromMeasuredMs === 'unbounded';
    return saturated
      ? `- ${name}: ${overhead}, so the ${o.workers} workers were saturated: the configured S predicts ${waitMs(q.predictedMeanWaitMs)}, the live phase already queued (${waitMs(q.measuredMeanWaitMs)}), and the recommendation rose to ${q.recommendedServers ?? 'none'}.`
      : `- ${name}: ${overhead}; the measured mean wait was ${waitMs(q.measuredMeanWaitMs)} against ${waitMs(q.predictedFromMeasuredMs)} (M/M/c, measured λ and S) and ${waitMs(q.predictedMgcMs)} (Allen–Cunneen).`;
  });
  return [table, '', ...notes].join('\n');
}

export function readDrillRuns(root: URL): { name: string; record: DrillRecord }[] {
  return DRILL_RUNS.map(({ name, path }) => ({ name, record: readDrillRecord(new URL(path, root)) }));
}

/** docs/outage-drill.md's regions as their generators write them, from the committed runs under `root`. */
export function outageDrillRegions(root: URL): Record<string, Record<string, string>> {
  return {
    [OUTAGE_DRILL_PAGE]: {
      [MMC_EXAMPLE_REGION]: mmcExampleMarkdown(),
      [DRILL_RUNS_REGION]: drillRunsMarkdown(readDrillRuns(root)),
    },
  };
}
