/**
 * The outage drill's report: one self-contained HTML file (Chart.js inlined, no network needed) with the
 * duplicate rate over time, throughput, backlog and wait against the model, and the verdict.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { DrillResult } from './run-drill.ts';
import { subscriberVerdictLines } from './verdict.ts';

const RATE_WINDOW_SECONDS = 5;

export function renderReport(result: DrillResult): string {
  const chartJs = readFileSync(
    join(dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js'),
    'utf8',
  );
  const o = result.options;
  const q = result.queueing;
  const v = result.verdict;
  const start = Math.floor(result.startedAt / 1000);
  const series = result.series.map((b) => ({
    s: b.t - start,
    byField: Object.fromEntries(Object.entries(b.byField).map(([f, c]) => [f, [c.fresh, c.duplicate]])),
    queue: b.queue ? [b.queue.backlog, b.queue.inFlight, b.queue.dlq] : null,
  }));
  const data = {
    series,
    intervals: result.intervals,
    outage: [o.outageStartSeconds, o.outageStartSeconds + o.outageSeconds],
    predictedWaitMs: q.predictedMeanWaitMs,
    rateWindow: RATE_WINDOW_SECONDS,
  };
  const ms = (value: number | undefined | null) =>
    value === undefined || value === null
      ? '–'
      : Number.isFinite(value)
        ? `${value.toFixed(0)} ms`
        : 'unbounded (ρ ≥ 1)';
  const rows = result.intervals
    .map(
      (r) =>
        `<tr><td>${r.fromSecond}–${r.toSecond} s</td><td>${r.phase}</td><td>${r.deliveriesSent}</td><td>${r.accepted}</td><td>${r.failed}</td><td>${r.retriesSent + r.redeliveriesSent}</td><td>${r.eventsInPerSecond.toFixed(1)}</td><td>${r.effectsPerSecond.toFixed(1)}</td><td>${r.backlog ?? '–'}</td><td>${ms(r.meanWaitMs)}</td><td>${r.utilisation.toFixed(2)}</td><td>${r.busy.toFixed(2)}</td><td>${escapeHtml(
          Object.entries(r.duplicateRateByField)
            .filter(([, x]) => x !== undefined)
            .map(([f, x]) => `${f} ${(x as number).toFixed(0)}%`)
            .join(', ') || '–',
        )}</td></tr>`,
    )
    .join('\n');
  const verdictText = v.inconclusive
    ? `INCONCLUSIVE: the queue did not drain in time; ${v.missing.length} of ${v.distinctEvents} events not effected yet.`
    : v.exactlyOnce
      ? `EXACTLY ONCE: all ${v.distinctEvents} distinct events were effected exactly once.`
      : `FAILED: ${v.effectedOnce}/${v.distinctEvents} effected once, ${v.missing.length} never, ${v.duplicated.length} more than once.`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Outage drill ${escapeHtml(result.runId)}</title>
<style>
 body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2937;margin:24px 32px;background:#f8f9fb}
 h1{font-size:20px} h2{font-size:15px;margin:24px 0 8px}
 .verdict{padding:12px 16px;border-radius:8px;font-weight:600;background:${v.exactlyOnce ? '#dcfce7' : '#fee2e2'};color:${v.exactlyOnce ? '#166534' : '#991b1b'}}
 .grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:16px}
 .card{background:#fff;border-radius:8px;padding:12px 16px;box-shadow:0 1px 2px rgba(0,0,0,.06)}
 .chart{position:relative;height:260px}
 table{border-collapse:collapse;font-size:12px;background:#fff} th,td{padding:4px 8px;border-bottom:1px solid #eef0f3;text-align:right} th:last-child,td:last-child,th:nth-child(2),td:nth-child(2){text-align:left}
 dl{display:grid;grid-template-columns:max-content auto;gap:2px 16px;font-size:13px} dt{color:#6b7280}
</style></head><body>
<h1>Outage drill — whatsapp-webhook-dedup local stack</h1>
<p class="verdict" id="verdict">${escapeHtml(verdictText)}</p>
${subscriberVerdictLines(v)
  .map((line) => `<p class="subscriber-verdict">${escapeHtml(line)}</p>`)
  .join('\n')}
<dl>
 <dt>Traffic</dt><dd>λ = ${o.ratePerSecond} deliveries/s for ${o.durationSeconds} s, ${result.totals.events} events, ${result.totals.deliveriesSent} deliveries (${result.totals.retriesSent} retries, ${result.totals.redeliveriesSent} redeliveries)</dd>
 <dt>Outage</dt><dd>${o.outageSeconds} s from ${o.outageStartSeconds} s, mode <code>${o.outageMode}</code>; Meta timeout ${o.metaTimeoutMs} ms; retries after ${o.retry.delaysMs.join(', ')} ms (the last repeating, ± ${o.retry.jitter * 100} %); redelivery of the last ${o.redeliverWindowSeconds} s before the outage</dd>
 <dt>Consumer</dt><dd>c = ${o.workers} workers, side effect S = ${o.effectMeanMs} ms mean (exponential)</dd>
 <dt>Model (steady live phase)</dt><dd>ρ = ${q.utilisation.toFixed(2)}; Erlang C mean wait ${ms(q.predictedMeanWaitMs)} (configured λ, S), ${ms(q.predictedFromMeasuredMs)} (measured λ = ${q.measuredArrivalsPerSecond.toFixed(2)}/s, S = ${ms(q.measuredServiceMs)}), ${ms(q.predictedMgcMs)} (M/G/c, Allen–Cunneen, Cs² = ${q.measuredServiceCv2 === undefined ? '–' : q.measuredServiceCv2.toFixed(2)}); measured ${ms(q.measuredMeanWaitMs)}</dd>
 <dt>Recommendation</dt><dd>${q.recommendation ? `maxConcurrency ${q.recommendation.servers} for a mean wait ≤ ${q.recommendation.targetWaitMs} ms (predicted ${ms(q.recommendation.meanWaitSeconds * 1000)}, ρ = ${q.recommendation.utilisation.toFixed(2)})` : '–'}</dd>
 <dt>Duplicate rate</dt><dd>${escapeHtml(
   Object.entries(result.totals.duplicateRateByField)
     .map(([f, r]) => `${f} ${r.toFixed(1)}%`)
     .join(', ') || '–',
 )}</dd>
</dl>
<div class="grid">
 <div class="card"><h2>Duplicate rate per field over time (%, ${RATE_WINDOW_SECONDS} s window; outage shaded)</h2><div class="chart"><canvas id="rate"></canvas></div></div>
 <div class="card"><h2>Events per second: fresh (effected) vs duplicate (skipped)</h2><div class="chart"><canvas id="events"></canvas></div></div>
 <div class="card"><h2>Queue backlog, in flight and DLQ</h2><div class="chart"><canvas id="queue"></canvas></div></div>
 <div class="card"><h2>Mean wait in the queue per interval vs Erlang C (ms)</h2><div class="chart"><canvas id="wait"></canvas></div></div>
</div>
<h2>Intervals</h2>
<table><thead><tr><th>interval</th><th>phase</th><th>sent</th><th>ok</th><th>failed</th><th>retries</th><th>λ in/s</th><th>effects/s</th><th>backlog</th><th>wait</th><th>ρ</th><th>busy</th><th>duplicate rate per field</th></tr></thead>
<tbody>${rows}</tbody></table>
<script>${chartJs}</script>
<script>
const DATA = ${JSON.stringify(data).replace(/</g, '\\u003c')};
${REPORT_SCRIPT}
</script>
</body></html>`;
}

const REPORT_SCRIPT = `
Chart.defaults.animation = false;
const PALETTE = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#dc2626', '#0891b2'];
const labels = DATA.series.map((b) => b.s);
const outage = {
  id: 'outage',
  beforeDatasetsDraw(chart) {
    const x = chart.scales.x;
    if (!x) return;
    const index = (s) => Math.max(0, labels.findIndex((l) => l >= s));
    const x0 = x.getPixelForValue(index(DATA.outage[0]));
    const x1 = x.getPixelForValue(labels.findIndex((l) => l >= DATA.outage[1]) === -1 ? labels.length - 1 : index(DATA.outage[1]));
    const { top, bottom } = chart.chartArea;
    chart.ctx.save();
    chart.ctx.fillStyle = 'rgba(220,38,38,0.08)';
    chart.ctx.fillRect(x0, top, x1 - x0, bottom - top);
    chart.ctx.restore();
  },
};
const fields = [...new Set(DATA.series.flatMap((b) => Object.keys(b.byField)))].sort();
const xAxis = { title: { display: true, text: 's since start' }, ticks: { maxTicksLimit: 20 } };
new Chart(document.getElementById('rate'), {
  type: 'line',
  plugins: [outage],
  data: { labels, datasets: fields.map((field, i) => ({
    label: field, borderColor: PALETTE[i % PALETTE.length], backgroundColor: PALETTE[i % PALETTE.length], pointRadius: 0, spanGaps: true,
    data: DATA.series.map((_, j) => {
      let f = 0, d = 0;
      for (let k = Math.max(0, j - DATA.rateWindow + 1); k <= j; k++) {
        const c = DATA.series[k].byField[field];
        if (c) { f += c[0]; d += c[1]; }
      }
      return f + d === 0 ? null : (100 * d) / (f + d);
    }),
  })) },
  options: { maintainAspectRatio: false, scales: { x: xAxis, y: { beginAtZero: true, suggestedMax: 100 } } },
});
const total = (b, i) => Object.values(b.byField).reduce((s, c) => s + c[i], 0);
new Chart(document.getElementById('events'), {
  type: 'bar',
  plugins: [outage],
  data: { labels, datasets: [
    { label: 'fresh', data: DATA.series.map((b) => total(b, 0)), backgroundColor: '#16a34a' },
    { label: 'duplicate', data: DATA.series.map((b) => total(b, 1)), backgroundColor: '#dc2626' },
  ] },
  options: { maintainAspectRatio: false, scales: { x: { ...xAxis, stacked: true }, y: { stacked: true, beginAtZero: true } } },
});
let last = null;
const queue = DATA.series.map((b) => (b.queue ? (last = b.queue) : last));
new Chart(document.getElementById('queue'), {
  type: 'line',
  plugins: [outage],
  data: { labels, datasets: [
    { label: 'backlog', data: queue.map((q) => (q ? q[0] : null)), borderColor: '#2563eb', pointRadius: 0, stepped: true },
    { label: 'in flight', data: queue.map((q) => (q ? q[1] : null)), borderColor: '#9ca3af', pointRadius: 0, stepped: true },
    { label: 'DLQ', data: queue.map((q) => (q ? q[2] : null)), borderColor: '#dc2626', pointRadius: 0, stepped: true },
  ] },
  options: { maintainAspectRatio: false, scales: { x: xAxis, y: { beginAtZero: true } } },
});
new Chart(document.getElementById('wait'), {
  type: 'line',
  data: { labels: DATA.intervals.map((r) => r.fromSecond + '–' + r.toSecond + ' s'), datasets: [
    { label: 'measured mean wait', data: DATA.intervals.map((r) => (r.meanWaitMs === undefined ? null : r.meanWaitMs)), borderColor: '#2563eb', backgroundColor: '#2563eb' },
    { label: 'Erlang C (configured λ, S)', data: DATA.intervals.map(() => DATA.predictedWaitMs), borderColor: '#d97706', borderDash: [6, 4], pointRadius: 0 },
  ] },
  options: { maintainAspectRatio: false, scales: { y: { beginAtZero: true } } },
});
document.body.dataset.rendered = 'true';
`;

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string,
  );
}
