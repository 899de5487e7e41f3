/**
 * The live dashboard served at `/` by the local stack: one static page that polls `/local/stats` every
 * second and draws it with Chart.js, served from node_modules (no CDN: the page works offline). The charts
 * and tiles sum over the subscribers; the subscribers table shows each one's effects, duplicates and queues,
 * and the lanes table each subscriber's lanes (contract/lanes.ts): how long records waited before their
 * handler (p50, p99 of the consumers' `EventWaitTime` over the last minute) and the oldest message's age.
 * Two operator panels show what `npm run ops` shows: an event key's claim per subscriber (`/local/key`), and
 * each lane's DLQ (status, and message when a subscriber has one) and the quarantine queue with their newest
 * records (`/local/dead-letters`, polled with the stats).
 */
import { CLAIM_STATUS_TEXT } from '../../ops/inspect/claim-view.ts';

export const CHART_JS_ROUTE = '/assets/chart.umd.min.js';

export function dashboardHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>whatsapp-webhook-dedup · local stack</title>
<style>
  :root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2937; background: #f6f7f9; }
  body { margin: 0; padding: 20px 28px; }
  header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; }
  h1 { font-size: 20px; margin: 0; }
  #status { font-size: 13px; color: #6b7280; }
  #status.down { color: #b91c1c; }
  .tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; margin: 16px 0; }
  .tile { background: #fff; border-radius: 8px; padding: 10px 14px; box-shadow: 0 1px 2px rgba(0,0,0,.06); }
  .tile .label { font-size: 12px; color: #6b7280; }
  .tile .value { font-size: 24px; font-weight: 600; font-variant-numeric: tabular-nums; }
  .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 16px; }
  .card { background: #fff; border-radius: 8px; padding: 12px 16px; box-shadow: 0 1px 2px rgba(0,0,0,.06); }
  .card h2 { font-size: 14px; margin: 0 0 8px; }
  .chart { position: relative; height: 240px; }
  table { width: 100%; border-collapse: collapse; font-size: 12px; }
  th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid #eef0f3; }
  td.key { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; word-break: break-all; }
  .empty { color: #9ca3af; font-size: 13px; padding: 8px 0; }
  .subscribers, .lanes { margin-bottom: 16px; }
  td.number { font-variant-numeric: tabular-nums; }
  .operator { margin-bottom: 16px; }
  .card h3 { font-size: 12px; margin: 12px 0 4px; color: #4b5563; }
  .key-form { display: flex; gap: 8px; margin-bottom: 8px; }
  .key-form input { flex: 1; font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; padding: 4px 6px; border: 1px solid #d1d5db; border-radius: 4px; }
  .key-form select, .key-form button { font-size: 12px; padding: 4px 8px; border: 1px solid #d1d5db; border-radius: 4px; background: #fff; }
  .key-form button { background: #2563eb; border-color: #2563eb; color: #fff; cursor: pointer; }
  .key-view { border-top: 1px solid #eef0f3; padding: 6px 0; }
  .key-view-head { display: flex; gap: 8px; align-items: baseline; font-size: 13px; }
  .key-phrase { font-size: 12px; color: #6b7280; margin: 2px 0 4px; }
  .badge { display: inline-block; padding: 1px 6px; border-radius: 4px; font-size: 11px; background: #eef0f3; }
  .badge.done { background: #dcfce7; color: #166534; }
  .badge.in-flight { background: #dbeafe; color: #1e40af; }
  .badge.lease-lapsed, .badge.unknown-state, .badge.failed { background: #fee2e2; color: #991b1b; }
  .facts th { width: 130px; color: #6b7280; font-weight: normal; }
  .error { color: #b91c1c; font-size: 13px; padding: 8px 0; }
</style>
</head>
<body>
<header>
  <h1>whatsapp-webhook-dedup · local stack</h1>
  <span id="status">connecting…</span>
</header>
<section class="tiles">
  <div class="tile"><div class="label">Fresh events</div><div class="value" id="tile-fresh">0</div></div>
  <div class="tile"><div class="label">Duplicates skipped by claims</div><div class="value" id="tile-duplicates">0</div></div>
  <div class="tile" title="A repeat within 5 minutes never reaches a claim: the message lane's FIFO queue drops it (SQS's NumberOfDeduplicatedSentMessages)"><div class="label">Duplicates absorbed by the FIFO queue</div><div class="value" id="tile-absorbed">0</div></div>
  <div class="tile"><div class="label">Duplicate rate (claims and queue)</div><div class="value" id="tile-rate">0 %</div></div>
  <div class="tile"><div class="label">Deliveries accepted (each holds one or more events)</div><div class="value" id="tile-accepted">0</div></div>
  <div class="tile"><div class="label">Queue backlog</div><div class="value" id="tile-backlog">0</div></div>
  <div class="tile"><div class="label">DLQ depth</div><div class="value" id="tile-dlq">0</div></div>
  <div class="tile"><div class="label">Quarantined</div><div class="value" id="tile-quarantine">0</div></div>
  <div class="tile"><div class="label">Mean wait in queue</div><div class="value" id="tile-wait">0 ms</div></div>
</section>
<section class="card subscribers">
  <h2>Subscribers</h2>
  <table><thead><tr><th>subscriber</th><th>fields</th><th>effects</th><th>fresh</th><th>duplicates skipped</th><th>absorbed by queue</th><th>backlog</th><th>in flight</th><th>DLQ</th><th>destination's answers</th></tr></thead><tbody id="subscribers"></tbody></table>
</section>
<section class="card lanes">
  <h2>Lanes: wait before the handler (last minute; a quiet lane shows its last busy minute and its age) and oldest message</h2>
  <table><thead><tr><th>subscriber</th><th>lane</th><th>order</th><th>wait p50</th><th>wait p99</th><th>records</th><th>oldest message</th><th>backlog</th><th>in flight</th><th>DLQ</th></tr></thead><tbody id="lanes"></tbody></table>
</section>
<section class="grid operator">
  <div class="card" id="key-lookup"><h2>Key lookup</h2>
    <form id="key-form" class="key-form">
      <input id="key-input" name="key" placeholder="msg:&lt;wamid&gt;, st:&lt;wamid&gt;:&lt;status&gt;, …" autocomplete="off" spellcheck="false" aria-label="event key">
      <select id="key-subscriber" aria-label="subscriber"><option value="">every subscriber</option></select>
      <button type="submit">Look up</button>
    </form>
    <div id="key-result" class="empty">The claim of an event key for each subscriber, as npm run ops -- key shows it (npm run keys -- BODY.json prints a body's keys).</div>
  </div>
  <div class="card" id="dead-letters-card"><h2>Dead letters and quarantine</h2>
    <table><thead><tr><th>queue</th><th>waiting</th><th>being read</th></tr></thead><tbody id="dead-letter-counts"></tbody></table>
    <h3>Newest failed records</h3>
    <table><thead><tr><th>subscriber</th><th>lane</th><th>age</th><th>receives</th><th>moved by</th><th>failure</th><th>not done</th></tr></thead><tbody id="dead-letters"></tbody></table>
    <div class="empty" id="dead-letters-empty">No failed record in any DLQ.</div>
    <h3>Newest quarantined bodies</h3>
    <table><thead><tr><th>age</th><th>reason</th><th>size</th><th>chunks</th><th>reads as</th><th>id</th></tr></thead><tbody id="quarantined"></tbody></table>
    <div class="empty" id="quarantined-empty">Nothing quarantined.</div>
  </div>
</section>
<section class="grid">
  <div class="card"><h2>Fresh vs duplicate events per field</h2><div class="chart"><canvas id="chart-fields"></canvas></div></div>
  <div class="card"><h2>Events per second <span id="events-age"></span></h2><div class="chart"><canvas id="chart-events"></canvas></div></div>
  <div class="card"><h2>Duplicate rate per field (10 s window, %)</h2><div class="chart"><canvas id="chart-rate"></canvas></div></div>
  <div class="card"><h2>Queue backlog and DLQ depth</h2><div class="chart"><canvas id="chart-queue"></canvas></div></div>
  <div class="card"><h2>Recent skipped duplicates</h2>
    <table><thead><tr><th>time</th><th>subscriber</th><th>key</th><th>field</th><th>state</th></tr></thead><tbody id="duplicates"></tbody></table>
    <div class="empty" id="duplicates-empty">No duplicate yet: send the same body twice.</div>
  </div>
</section>
<script src="${CHART_JS_ROUTE}"></script>
<script>
${DASHBOARD_SCRIPT}
</script>
</body>
</html>`;
}

/** Browser code, kept as plain ES2020 so it runs unbundled. */
const DASHBOARD_SCRIPT = `
const CLAIM_STATUS_TEXT = ${JSON.stringify(CLAIM_STATUS_TEXT)};
const WINDOW_SECONDS = 120;
const RATE_WINDOW = 10;
const PALETTE = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#dc2626', '#0891b2', '#4b5563', '#db2777'];
const colour = (i) => PALETTE[i % PALETTE.length];
const fieldColours = new Map();
const colourOf = (field) => {
  if (!fieldColours.has(field)) fieldColours.set(field, colour(fieldColours.size));
  return fieldColours.get(field);
};
Chart.defaults.animation = false;
Chart.defaults.font.size = 11;
const timeLabel = (t) => new Date(t * 1000).toLocaleTimeString([], { hour12: false });

const fieldsChart = new Chart(document.getElementById('chart-fields'), {
  type: 'bar',
  data: { labels: [], datasets: [
    { label: 'fresh', data: [], backgroundColor: '#16a34a' },
    { label: 'duplicate', data: [], backgroundColor: '#dc2626' },
  ] },
  options: { indexAxis: 'y', maintainAspectRatio: false, scales: { x: { stacked: true, beginAtZero: true }, y: { stacked: true } } },
});
const eventsChart = new Chart(document.getElementById('chart-events'), {
  type: 'line',
  data: { labels: [], datasets: [
    { label: 'fresh', data: [], borderColor: '#16a34a', backgroundColor: '#16a34a', pointRadius: 0, tension: 0.2 },
    { label: 'duplicate', data: [], borderColor: '#dc2626', backgroundColor: '#dc2626', pointRadius: 0, tension: 0.2 },
  ] },
  options: { maintainAspectRatio: false, scales: { y: { beginAtZero: true } } },
});
const rateChart = new Chart(document.getElementById('chart-rate'), {
  type: 'line',
  data: { labels: [], datasets: [] },
  options: { maintainAspectRatio: false, scales: { y: { beginAtZero: true, suggestedMax: 100 } } },
});
const queueChart = new Chart(document.getElementById('chart-queue'), {
  type: 'line',
  data: { labels: [], datasets: [
    { label: 'backlog', data: [], borderColor: '#2563eb', backgroundColor: '#2563eb', pointRadius: 0, stepped: true },
    { label: 'in flight', data: [], borderColor: '#9ca3af', backgroundColor: '#9ca3af', pointRadius: 0, stepped: true },
    { label: 'DLQ', data: [], borderColor: '#dc2626', backgroundColor: '#dc2626', pointRadius: 0, stepped: true },
  ] },
  options: { maintainAspectRatio: false, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
});

function sumFields(byField, name) {
  let total = 0;
  for (const counts of Object.values(byField)) total += counts[name] || 0;
  return total;
}

// Fields come from /local/info, fetched once: the subscribers do not change while the stack runs.
let subscriberFields = null;
fetch('/local/info', { cache: 'no-store' })
  .then((response) => (response.ok ? response.json() : null))
  .then((info) => {
    if (!info || !info.subscribers) return;
    subscriberFields = new Map(info.subscribers.map((s) => [s.name, s.fields]));
    const select = document.getElementById('key-subscriber');
    for (const { name } of info.subscribers) select.appendChild(new Option(name, name));
  })
  .catch(() => undefined);

function cellsRow(texts, classes) {
  const row = document.createElement('tr');
  texts.forEach((text, i) => {
    const cell = document.createElement('td');
    cell.textContent = String(text);
    if (classes[i]) cell.className = classes[i];
    row.appendChild(cell);
  });
  return row;
}

// A forward subscriber's answers by class (ForwardAnswers/<class> counters); '–' for a subscriber of code.
function answersText(counters) {
  const classes = Object.entries(counters || {})
    .filter(([name]) => name.startsWith('ForwardAnswers/'))
    .map(([name, count]) => name.slice('ForwardAnswers/'.length) + ' ' + count);
  return classes.length === 0 ? '–' : classes.sort().join(' · ');
}

function renderSubscribers(subscribers) {
  const rows = Object.entries(subscribers || {}).map(([name, s]) => {
    const fields = subscriberFields && subscriberFields.has(name) ? subscriberFields.get(name) : undefined;
    const row = cellsRow(
      [
        name,
        fields === undefined ? '…' : fields === null ? 'all' : fields.join(', '),
        s.effects,
        sumFields(s.totals.byField, 'fresh'),
        sumFields(s.totals.byField, 'duplicate'),
        s.totals.absorbedByQueue,
        s.queue ? s.queue.backlog : '–',
        s.queue ? s.queue.inFlight : '–',
        s.queue ? s.queue.dlq : '–',
        answersText(s.totals.counters),
      ],
      ['name', 'fields', 'number effects', 'number fresh', 'number duplicates', 'number absorbed', 'number', 'number', 'number', 'answers'],
    );
    row.dataset.subscriber = name;
    return row;
  });
  document.getElementById('subscribers').replaceChildren(...rows);
}

const LANE_TEXT = { message: 'message (inbound messages)', status: 'status (statuses, other fields)' };
const ms = (value) => (value === null || value === undefined ? '–' : Math.round(value) + ' ms');

// A lane quiet for a minute keeps showing what it last did, and how long ago.
function lastActive(l, figure) {
  const last = l.lastActive;
  if (!last) return figure === 'waitCount' ? 0 : '–';
  const value = figure === 'waitCount' ? last.waitCount : ms(last[figure]);
  return value + ' (' + span(last.ageMs) + ' ago)';
}

function renderLanes(subscribers) {
  const rows = [];
  for (const [name, s] of Object.entries(subscribers || {})) {
    for (const lane of ['message', 'status']) {
      const l = s.lanes && s.lanes[lane];
      if (!l) continue;
      const q = l.queue;
      const row = cellsRow(
        [
          name,
          LANE_TEXT[lane],
          l.ordered ? 'per conversation (FIFO)' : 'none',
          l.waitCount > 0 ? ms(l.waitP50Ms) : lastActive(l, 'waitP50Ms'),
          l.waitCount > 0 ? ms(l.waitP99Ms) : lastActive(l, 'waitP99Ms'),
          l.waitCount > 0 ? l.waitCount : lastActive(l, 'waitCount'),
          q ? (q.oldestMessageAgeMs === null ? 'none waiting' : span(q.oldestMessageAgeMs)) : '–',
          q ? q.backlog : '–',
          q ? q.inFlight : '–',
          q ? q.dlq : '–',
        ],
        ['name', 'lane', '', 'number wait-p50', 'number wait-p99', 'number waits', 'oldest', 'number', 'number', 'number'],
      );
      row.dataset.subscriber = name;
      row.dataset.lane = lane;
      rows.push(row);
    }
  }
  document.getElementById('lanes').replaceChildren(...rows);
}

function render(stats) {
  const fields = Object.keys(stats.totals.byField).sort();
  const fresh = sumFields(stats.totals.byField, 'fresh');
  const duplicates = sumFields(stats.totals.byField, 'duplicate');
  const absorbed = stats.totals.absorbedByQueue;
  const repeats = duplicates + absorbed;
  document.getElementById('tile-fresh').textContent = fresh;
  document.getElementById('tile-duplicates').textContent = duplicates;
  document.getElementById('tile-absorbed').textContent = absorbed;
  document.getElementById('tile-rate').textContent = (fresh + repeats === 0 ? 0 : (100 * repeats) / (fresh + repeats)).toFixed(1) + ' %';
  document.body.dataset.absorbedByQueue = String(absorbed);
  document.getElementById('tile-accepted').textContent = stats.totals.counters.DeliveriesAccepted || 0;
  document.getElementById('tile-backlog').textContent = stats.queue ? stats.queue.backlog : '–';
  document.getElementById('tile-dlq').textContent = stats.queue ? stats.queue.dlq : '–';
  document.getElementById('tile-quarantine').textContent = stats.queue && stats.queue.quarantine !== undefined ? stats.queue.quarantine : '–';
  renderSubscribers(stats.subscribers);
  renderLanes(stats.subscribers);
  document.getElementById('tile-wait').textContent = Math.round(stats.totals.meanWaitMs) + ' ms';

  fieldsChart.data.labels = fields;
  fieldsChart.data.datasets[0].data = fields.map((f) => stats.totals.byField[f].fresh);
  fieldsChart.data.datasets[1].data = fields.map((f) => stats.totals.byField[f].duplicate);
  fieldsChart.update();

  // The charts reach back to the last second with events (within the stats' window), so that a quiet
  // minute after a test run does not leave them flat.
  const busy = (b) => sumFields(b.byField, 'fresh') + sumFields(b.byField, 'duplicate') > 0;
  let lastBusy = stats.series.length - 1;
  while (lastBusy >= 0 && !busy(stats.series[lastBusy])) lastBusy--;
  const quietSeconds = lastBusy < 0 ? 0 : stats.series.length - 1 - lastBusy;
  const series = stats.series.slice(-Math.max(WINDOW_SECONDS, quietSeconds + 30));
  document.getElementById('events-age').textContent =
    lastBusy >= 0 && quietSeconds >= 60 ? '(last event ' + span(quietSeconds * 1000) + ' ago)' : '';
  document.body.dataset.chartSeconds = String(series.length);
  const labels = series.map((b) => timeLabel(b.t));
  eventsChart.data.labels = labels;
  eventsChart.data.datasets[0].data = series.map((b) => sumFields(b.byField, 'fresh'));
  eventsChart.data.datasets[1].data = series.map((b) => sumFields(b.byField, 'duplicate'));
  eventsChart.update();

  const full = stats.series;
  const offset = full.length - series.length;
  rateChart.data.labels = labels;
  rateChart.data.datasets = fields.map((field) => ({
    label: field,
    borderColor: colourOf(field),
    backgroundColor: colourOf(field),
    pointRadius: 2,
    spanGaps: true,
    data: series.map((_, i) => {
      let f = 0;
      let d = 0;
      for (let j = Math.max(0, offset + i - RATE_WINDOW + 1); j <= offset + i; j++) {
        const counts = full[j].byField[field];
        if (counts) { f += counts.fresh; d += counts.duplicate; }
      }
      return f + d === 0 ? null : (100 * d) / (f + d);
    }),
  }));
  rateChart.update();

  let lastQueue = null;
  const queueAt = series.map((b) => (b.queue ? (lastQueue = b.queue) : lastQueue));
  queueChart.data.labels = labels;
  queueChart.data.datasets[0].data = queueAt.map((q) => (q ? q.backlog : null));
  queueChart.data.datasets[1].data = queueAt.map((q) => (q ? q.inFlight : null));
  queueChart.data.datasets[2].data = queueAt.map((q) => (q ? q.dlq : null));
  queueChart.update();

  const body = document.getElementById('duplicates');
  body.replaceChildren(...stats.recentDuplicates.slice(0, 20).map((d) => cellsRow(
    [new Date(d.at).toLocaleTimeString([], { hour12: false }), d.subscriber || '', d.key, d.field || '', d.inFlight ? 'in flight' : 'done'],
    ['', 'subscriber', 'key', '', ''],
  )));
  document.getElementById('duplicates-empty').style.display = stats.recentDuplicates.length ? 'none' : '';
  document.body.dataset.freshEvents = String(fresh);
  document.body.dataset.duplicateEvents = String(duplicates);
}

/** \`3 s\`, \`4 min\`, \`2 h\`, \`8 d\`, as npm run ops prints ages. */
function span(ms) {
  const seconds = Math.max(0, Math.round(Math.abs(ms) / 1000));
  if (seconds < 120) return seconds + ' s';
  if (seconds < 7200) return Math.round(seconds / 60) + ' min';
  if (seconds < 172800) return Math.round(seconds / 3600) + ' h';
  return Math.round(seconds / 86400) + ' d';
}
const ageOf = (iso) => (iso ? span(Date.now() - Date.parse(iso)) : '?');
const when = (iso) => {
  if (!iso) return undefined;
  const ms = Date.parse(iso) - Date.now();
  return iso + (ms > 0 ? ' (in ' + span(ms) + ')' : ' (' + span(ms) + ' ago)');
};

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function factsTable(rows) {
  const table = element('table', 'facts');
  for (const [label, value] of rows) {
    if (value === undefined || value === null) continue;
    const row = document.createElement('tr');
    row.append(element('th', '', label), element('td', 'key', value));
    table.appendChild(row);
  }
  return table;
}

function keyView(view) {
  const claim = view.claim;
  // receivesOrigin is false when the key names a number or WABA the subscriber is not limited to.
  const receives = view.receivesField && view.receivesOrigin !== false;
  const status = claim ? claim.status : receives ? 'no claim' : 'not received';
  const block = element('div', 'key-view');
  block.dataset.subscriber = view.subscriber;
  block.dataset.status = status;
  const head = element('div', 'key-view-head');
  head.append(element('strong', '', view.subscriber), element('span', 'badge claim-status ' + status, status));
  block.appendChild(head);
  block.appendChild(element('div', 'key-phrase', claim
    ? CLAIM_STATUS_TEXT[claim.status]
    : receives
      ? 'no claim: the next delivery claims the event as new'
      : view.receivesField
        ? 'subscriber ' + view.subscriber + ' does not receive the number or account this key names, so it never claims it'
        : 'subscriber ' + view.subscriber + ' does not receive field ' + view.field + ', so it never claims this key'));
  const rows = [['stored as', view.pk]];
  if (claim) {
    rows.push(
      ['state', claim.state],
      ['attempts', claim.attempt],
      ['claimed', when(claim.claimedAt)],
      ['lease end', when(claim.leaseUntil)],
      ['done', when(claim.doneAt)],
      ['expires', when(claim.expiresAt)],
      ['held by message', claim.messageId],
    );
  }
  if (view.ledger) {
    rows.push(['ledger', view.ledger.current === undefined ? 'none (' + view.ledger.pk + ')' : 'current ' + view.ledger.current]);
    for (const [name, time] of Object.entries(view.ledger.times)) rows.push(['  ' + name, time]);
  }
  block.appendChild(factsTable(rows));
  return block;
}

async function lookUpKey(event) {
  event.preventDefault();
  const key = document.getElementById('key-input').value.trim();
  const subscriber = document.getElementById('key-subscriber').value;
  const result = document.getElementById('key-result');
  if (key === '') return;
  const query = '?key=' + encodeURIComponent(key) + (subscriber ? '&subscriber=' + encodeURIComponent(subscriber) : '');
  // Only the answer to the latest lookup is shown; \`shown\` names the key whose answer is on the page.
  result.dataset.key = key;
  const show = (className, nodes) => {
    if (result.dataset.key !== key) return;
    result.className = className;
    result.replaceChildren(...nodes);
    result.dataset.shown = key;
  };
  try {
    const response = await fetch('/local/key' + query, { cache: 'no-store' });
    const body = await response.json();
    if (response.ok) show('', body.subscribers.map(keyView));
    else show('error', [document.createTextNode(body.message || 'HTTP ' + response.status)]);
  } catch (error) {
    show('error', [document.createTextNode('lookup failed (' + error.message + ')')]);
  }
}
document.getElementById('key-form').addEventListener('submit', lookUpKey);

function renderDeadLetters(view) {
  const countRow = (label, queue, counts) => {
    const row = cellsRow([label, counts.visible, counts.inFlight], ['', 'number', 'number']);
    row.dataset.queue = queue;
    return row;
  };
  document.getElementById('dead-letter-counts').replaceChildren(
    ...view.subscribers.map((s) => countRow(
      'DLQ of ' + s.subscriber + ', ' + s.lane + ' lane' + (s.ordered ? ' (FIFO)' : ''),
      s.subscriber + '/' + s.lane,
      s.counts,
    )),
    countRow('quarantine', 'quarantine', view.quarantine.counts),
  );
  const records = view.subscribers.flatMap((s) => s.newest.map((record) => ({ subscriber: s.subscriber, record })));
  document.getElementById('dead-letters').replaceChildren(...records.map(({ subscriber, record }) => cellsRow(
    [
      subscriber,
      record.lane,
      ageOf(record.sentAt),
      record.receiveCount === undefined ? '?' : record.receiveCount,
      // The ordered lane's consumer moves a record failing its last receive itself, so its chat goes on.
      record.deadLetteredBy === 'consumer' ? 'consumer' : record.deadLetteredBy === 'sqs' ? 'SQS redrive' : '?',
      record.failure.join('; '),
      record.pendingKeys.slice(0, 3).join(', ') + (record.pendingKeys.length > 3 ? ', … (' + record.pendingKeys.length + ')' : ''),
    ],
    ['subscriber', 'lane', '', 'number', 'moved-by', 'failure', 'key'],
  )));
  document.getElementById('dead-letters-empty').style.display = records.length ? 'none' : '';
  const bodies = view.quarantine.newest;
  document.getElementById('quarantined').replaceChildren(...bodies.map((body) => cellsRow(
    [
      ageOf(body.receivedAt),
      body.reason || '?',
      body.bytes === undefined ? '?' : body.bytes + ' bytes',
      body.chunksPresent + '/' + body.chunks,
      body.reads,
      body.id,
    ],
    ['', 'reason', 'number', 'number', '', 'key'],
  )));
  document.getElementById('quarantined-empty').style.display = bodies.length ? 'none' : '';
  document.body.dataset.quarantinedBodies = String(view.quarantine.bodies);
}

// Polled with the stats, one request at a time: a queue being scanned can make an answer take a second.
let deadLettersPending = false;
async function refreshDeadLetters() {
  if (deadLettersPending) return;
  deadLettersPending = true;
  try {
    const response = await fetch('/local/dead-letters', { cache: 'no-store' });
    if (response.ok) renderDeadLetters(await response.json());
  } catch {
    // The status line reports an unreachable stack.
  } finally {
    deadLettersPending = false;
  }
}

async function poll() {
  const status = document.getElementById('status');
  try {
    const response = await fetch('/local/stats', { cache: 'no-store' });
    if (!response.ok) throw new Error('HTTP ' + response.status);
    render(await response.json());
    void refreshDeadLetters();
    status.textContent = 'live · updated ' + new Date().toLocaleTimeString([], { hour12: false });
    status.className = '';
  } catch (error) {
    status.textContent = 'local stack unreachable (' + error.message + ')';
    status.className = 'down';
  } finally {
    setTimeout(poll, 1000);
  }
}
poll();
`;
