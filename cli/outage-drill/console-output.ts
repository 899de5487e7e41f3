/**
 * What `npm run outage-drill` prints: a progress bar (on a terminal: cli/tools/progress-bar.ts, with this detail
 * after it), a row per interval, the summary.
 */

import type { IntervalRow, Progress } from './interval-recorder.ts';
import type { DrillResult } from './run-drill.ts';
import { subscriberVerdictLines } from './verdict.ts';

/** After the bar: the phase and the counts so far. */
export function progressDetail(p: Progress): string {
  return `${p.phase.padEnd(8)} events ${p.events}  deliveries ${p.deliveriesSent}  retrying ${p.pendingRetries}  backlog ${p.backlog ?? '–'}  effects ${p.effects ?? '–'}`;
}

const COLUMNS: readonly [string, number, (row: IntervalRow) => string][] = [
  ['interval', 9, (r) => `${r.fromSecond}-${r.toSecond}s`],
  ['phase', 9, (r) => r.phase],
  ['sent', 6, (r) => String(r.deliveriesSent)],
  ['ok', 6, (r) => String(r.accepted)],
  ['failed', 7, (r) => String(r.failed)],
  ['retries', 8, (r) => String(r.retriesSent + r.redeliveriesSent)],
  ['λ in/s', 8, (r) => r.eventsInPerSecond.toFixed(1)],
  ['effects/s', 10, (r) => r.effectsPerSecond.toFixed(1)],
  ['backlog', 8, (r) => String(r.backlog ?? '–')],
  ['wait ms', 8, (r) => (r.meanWaitMs === undefined ? '–' : r.meanWaitMs.toFixed(0))],
  ['ρ', 6, (r) => r.utilisation.toFixed(2)],
  ['busy', 6, (r) => r.busy.toFixed(2)],
];

export const INTERVAL_HEADER = `${COLUMNS.map(([name, width]) => name.padStart(width)).join('')}  duplicate rate per field`;

export function intervalLine(row: IntervalRow): string {
  const rates = Object.entries(row.duplicateRateByField)
    .filter(([, r]) => r !== undefined)
    .map(([field, r]) => `${field} ${(r as number).toFixed(0)}%`)
    .join(', ');
  return `${COLUMNS.map(([, width, value]) => value(row).padStart(width)).join('')}  ${rates || '–'}`;
}

export function summary(result: DrillResult, reportPath: string | undefined): string {
  const { verdict, queueing: q, totals, options: o } = result;
  const ms = (v: number | undefined | null) =>
    v === undefined || v === null ? '–' : Number.isFinite(v) ? `${v.toFixed(0)} ms` : 'unbounded (ρ ≥ 1)';
  const lines = [
    '',
    `Run ${result.runId}: ${totals.events} events in ${totals.deliveriesSent} deliveries (${totals.retriesSent} retries, ${totals.redeliveriesSent} redeliveries), ${totals.failed} failed deliveries, ${totals.duplicatesSkipped} duplicates skipped by the consumer.`,
    `Duplicate rate per field: ${
      Object.entries(totals.duplicateRateByField)
        .map(([f, r]) => `${f} ${r.toFixed(1)}%`)
        .join(', ') || '–'
    }`,
    '',
    `Queueing, steady live phase (${q.windowSeconds[0].toFixed(0)}–${q.windowSeconds[1]} s, ${q.records} records), M/M/c with c = ${o.workers}:`,
    `  configured  λ = ${o.ratePerSecond}/s, S = ${o.effectMeanMs} ms, ρ = ${q.utilisation.toFixed(2)}  → Erlang C mean wait ${ms(q.predictedMeanWaitMs)}`,
    `  measured    λ = ${q.measuredArrivalsPerSecond.toFixed(2)}/s, S = ${ms(q.measuredServiceMs)} (effect + claim/complete)  → Erlang C mean wait ${ms(q.predictedFromMeasuredMs)}`,
    `  measured    service-time variability Cs² = ${q.measuredServiceCv2 === undefined ? '–' : q.measuredServiceCv2.toFixed(2)}  → Allen–Cunneen (M/G/c) mean wait ${ms(q.predictedMgcMs)}`,
    `  measured mean wait in the queue: ${ms(q.measuredMeanWaitMs)}`,
    q.recommendation
      ? `  recommendation: maxConcurrency ${q.recommendation.servers} for a mean wait ≤ ${q.recommendation.targetWaitMs} ms (predicted ${ms(q.recommendation.meanWaitSeconds * 1000)}, ρ = ${q.recommendation.utilisation.toFixed(2)})`
      : '  recommendation: none (no server count up to 1000 meets the target)',
    '',
    verdict.inconclusive
      ? `VERDICT: INCONCLUSIVE — the queue did not drain in time; ${verdict.missing.length} of ${verdict.distinctEvents} events not effected yet (still queued, or lost: rerun with a lighter load).`
      : verdict.exactlyOnce
        ? `VERDICT: EXACTLY ONCE — all ${verdict.distinctEvents} distinct events were effected exactly once.`
        : `VERDICT: FAILED — ${verdict.effectedOnce}/${verdict.distinctEvents} effected once; ${verdict.missing.length} never effected${
            verdict.missing.length ? ` (e.g. ${verdict.missing.slice(0, 3).join(', ')})` : ''
          }; ${verdict.duplicated.length} effected more than once${
            verdict.duplicated.length
              ? ` (e.g. ${verdict.duplicated
                  .slice(0, 3)
                  .map((d) => `${d.key} ×${d.count}`)
                  .join(', ')})`
              : ''
          }.`,
    ...subscriberVerdictLines(verdict).map((line) => `  ${line}`),
  ];
  if (reportPath) lines.push(`Report: ${reportPath}`);
  return lines.join('\n');
}
