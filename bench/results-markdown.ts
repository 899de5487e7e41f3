/**
 * Prints the "Machine" and "Results" sections of docs/benchmarks.md from a results file, so that the page
 * shows the committed figures without retyping them:
 *
 *   npx tsx bench/results-markdown.ts [bench/results.json]
 */
import { readFileSync } from 'node:fs';
import { CONTESTANT_LABELS, CONTESTANTS, type ContestantName } from './consumer/contestant-names.ts';

interface Results {
  consumer: {
    events: number;
    distinctEvents: number;
    duplicateRatio: number;
    batchSize: number;
    concurrency: number;
    runsPerContestant: number;
    speedup: number;
    pairedSpeedups: number[];
    speedupOfMedians: number;
    cpuPerEventRatio: number;
    speedupCeiling: number;
    shareOfFloor: number;
    ours: Contestant;
    powertools: Contestant;
    contractFloor: Contestant;
    withAddedRoundTrip: {
      addedRoundTripMs: number;
      runsPerContestant: number;
      speedup: number;
      speedupCeiling: number;
    } & Record<'ours' | 'powertools' | 'contractFloor', RoundTripRow>;
    rebatchedProbe: {
      records: number;
      distinctEvents: number;
      ours: ProbeRow;
      powertools: ProbeRow;
      powertoolsAllWamids: ProbeRow;
    };
  };
  receiver: {
    bodies: {
      updates: number;
      bodyBytes: number;
      queueMessages: number;
      msPerDelivery: number;
      floorMs: number;
      ratio: number;
      iterations: number;
    }[];
  };
  bundles: Record<
    'receiver' | 'consumer',
    { bytes: number; sourceMapBytes: number; initMs: number; importMs: number }
  > & {
    baselineReadyMs: number;
    spawns: number;
  };
  endToEnd: {
    deliveriesPerSec: number;
    ackP50Ms: number;
    ackP99Ms: number;
    ackMaxMs: number;
    durationSeconds: number;
    connections: number;
    deliveriesAcked: number;
    distinctEventsAcked: number;
    effects: number;
    repeatedEffects: number;
    missingEffects: number;
    effectsOfUnansweredDeliveries: number;
    effectsPerSec: number;
    drainMs: number;
  };
  goals: Record<string, boolean | null>;
  machine: {
    cpus: number;
    cpuModel: string;
    memoryGiB: number;
    node: string;
    platform: string;
    loadAverageAtStart: number[];
    loadAverageAtEnd: number[];
  };
  run: { finishedAt: string; durationSeconds: number; partSeconds: Record<string, number> };
}

interface Contestant {
  eventsPerSec: number;
  eventsPerSecMin: number;
  eventsPerSecMax: number;
  requestsPerEvent: number;
  requestsByOperation: Record<string, number>;
  meanRequestMsByOperation: Record<string, number>;
  nodeCpuMsPerEvent: number;
  redeliveries: number;
  medianInvocationMs: number;
  effects: number;
}

interface RoundTripRow {
  eventsPerSec: number;
  medianInvocationMs: number;
  invocations: number;
  nodeCpuMsPerEvent: number;
}

interface ProbeRow {
  effects: number;
  missing: number;
  repeated: number;
}

const file = process.argv[2] ?? new URL('./results.json', import.meta.url);
const r = JSON.parse(readFileSync(file, 'utf8')) as Results;
const n = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ops = (byOperation: Record<string, number>, digits = 0) =>
  Object.entries(byOperation)
    .map(([operation, value]) => `${operation} ${n(value, digits)}`)
    .join(', ');

const label = (name: ContestantName) =>
  name === 'contractFloor' ? `${CONTESTANT_LABELS[name]} (yardstick)` : CONTESTANT_LABELS[name];
const { consumer: c, receiver, bundles: b, endToEnd: e, machine: m } = r;
const trip = c.withAddedRoundTrip;
const tripRow = (name: string, x: RoundTripRow) =>
  `| ${name} | **${n(x.eventsPerSec)}** | ${n(x.medianInvocationMs, 1)} | ${n(x.invocations)} | ${n(x.nodeCpuMsPerEvent, 2)} |`;
const lines: string[] = [];
lines.push(
  `${m.cpus} vCPU (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}. Run of ${r.run.finishedAt.slice(0, 16).replace('T', ' ')} UTC, ` +
    `${n(r.run.durationSeconds)} s in all (consumer ${n(r.run.partSeconds.consumer ?? 0)} s, receiver ${n(r.run.partSeconds.receiver ?? 0)} s, ` +
    `bundles ${n(r.run.partSeconds.bundles ?? 0)} s, end to end ${n(r.run.partSeconds.e2e ?? 0)} s). Load average (1, 5, 15 min) ` +
    `${m.loadAverageAtStart.join(', ')} at the start, ${m.loadAverageAtEnd.join(', ')} at the end.`,
);
lines.push('', '<!-- results tables -->', '');
const row = (name: string, x: Contestant) =>
  `| ${name} | **${n(x.eventsPerSec)}** (${n(x.eventsPerSecMin)}–${n(x.eventsPerSecMax)}) | **${n(x.requestsPerEvent, 3)}** | ${ops(x.requestsByOperation)} | ${ops(x.meanRequestMsByOperation)} | ${n(x.nodeCpuMsPerEvent, 2)} | ${n(x.medianInvocationMs)} | ${n(x.redeliveries)} | ${x.effects} |`;
lines.push(
  `### Consumer: ${c.events} records, ${c.distinctEvents} distinct events (${c.duplicateRatio * 100}% duplicates), batches of ${c.batchSize}, ${c.concurrency} containers`,
  '',
  '| | events/s, median (range) | requests/event | requests per run | mean ms per request | Node CPU ms/event | median invocation ms | redelivered records | effects |',
  '|---|---|---|---|---|---|---|---|---|',
  ...CONTESTANTS.map((name) => row(label(name), c[name])),
  '',
  `**speedup ×${n(c.speedup, 2)}** (median over the ${c.runsPerContestant} rounds of ours/Powertools: ${c.pairedSpeedups.map((s) => `×${n(s, 2)}`).join(', ')}; ` +
    `ratio of the medians ×${n(c.speedupOfMedians, 2)}). Powertools spends ×${n(c.cpuPerEventRatio, 2)} our Node CPU per event and ` +
    `×${n(c.powertools.requestsPerEvent / c.ours.requestsPerEvent, 2)} our DynamoDB requests.`,
  '',
  `**Ceiling ×${n(c.speedupCeiling, 2)}**: the contract floor (design.md §2's requests and nothing else) against Powertools, median over the rounds: ` +
    `the most any consumer writing what the contract prescribes could show on this machine. Ours runs at **${n(c.shareOfFloor * 100)}%** of the floor.`,
  '',
  `With **${trip.addedRoundTripMs} ms added to every DynamoDB request** (an AWS-like round trip; median of ${trip.runsPerContestant} rounds):`,
  '',
  '| | events/s | median invocation ms | invocations | Node CPU ms/event |',
  '|---|---|---|---|---|',
  ...CONTESTANTS.map((name) => tripRow(label(name), trip[name])),
  '',
  `speedup **×${n(trip.speedup, 2)}**, ceiling ×${n(trip.speedupCeiling, 2)}.`,
  '',
  `Re-batched probe (untimed; ${c.rebatchedProbe.records} bodies of 1–3 messages, ${c.rebatchedProbe.distinctEvents} distinct events):`,
  '',
  '| | effects | events never effected | events effected twice or more |',
  '|---|---|---|---|',
  `| ours | ${c.rebatchedProbe.ours.effects} | ${c.rebatchedProbe.ours.missing} | ${c.rebatchedProbe.ours.repeated} |`,
  `| Powertools, keyed on the body's first wamid | ${c.rebatchedProbe.powertools.effects} | ${c.rebatchedProbe.powertools.missing} | ${c.rebatchedProbe.powertools.repeated} |`,
  `| Powertools, keyed on all the body's wamids | ${c.rebatchedProbe.powertoolsAllWamids.effects} | ${c.rebatchedProbe.powertoolsAllWamids.missing} | ${c.rebatchedProbe.powertoolsAllWamids.repeated} |`,
  '',
  '### Receiver: handler per delivery vs HMAC-SHA256 + JSON.parse (medians)',
  '',
  '| updates | body | queue messages | ms per delivery | floor ms | ratio | iterations |',
  '|---|---|---|---|---|---|---|',
  ...receiver.bodies.map(
    (body) =>
      `| ${body.updates} | ${n(body.bodyBytes / 1024, 1)} KiB | ${body.queueMessages} | ${n(body.msPerDelivery, 3)} | ${n(body.floorMs, 3)} | **×${n(body.ratio, 2)}** | ${n(body.iterations)} |`,
  ),
  '',
  `### Bundles (esbuild with the construct's options; load time over ${b.spawns} fresh processes, empty-module baseline ${n(b.baselineReadyMs)} ms)`,
  '',
  '| bundle | bytes | source map | init ms (over the baseline) | `import()` ms |',
  '|---|---|---|---|---|',
  ...(['receiver', 'consumer'] as const).map(
    (name) =>
      `| ${name} | ${n(b[name].bytes)} (${n(b[name].bytes / 1024)} KiB) | ${n(b[name].sourceMapBytes / 1024)} KiB | **${n(b[name].initMs)}** | ${n(b[name].importMs)} |`,
  ),
  '',
  `### End to end (local stack, autocannon, ${e.connections} connections, ${n(e.durationSeconds, 1)} s measured)`,
  '',
  '| deliveries/s | ack p50 ms | ack p99 ms | ack max ms | acknowledged | distinct events | effects | repeated | missing | effects/s | drain after load |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
  `| **${n(e.deliveriesPerSec, 1)}** | **${n(e.ackP50Ms)}** | **${n(e.ackP99Ms)}** | ${n(e.ackMaxMs)} | ${n(e.deliveriesAcked)} | ${n(e.distinctEventsAcked)} | ${n(e.effects)} | ${e.repeatedEffects} | ${e.missingEffects} | ${n(e.effectsPerSec, 1)} | ${n(e.drainMs / 1000, 1)} s |`,
  '',
  `(${e.effectsOfUnansweredDeliveries} of the effects belong to deliveries still unanswered when the load stopped.)`,
  '',
  '### Goals of the issue',
  '',
  '| goal | met |',
  '|---|---|',
  ...Object.entries(r.goals).map(
    ([goal, met]) => `| ${goal} | ${met === null ? 'not measured' : met ? 'yes' : '**no**'} |`,
  ),
);
process.stdout.write(`${lines.join('\n')}\n`);
