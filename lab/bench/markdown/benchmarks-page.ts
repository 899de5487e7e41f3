/** The generated regions of docs/benchmarks.md, its summary paragraph included, from lab/bench/results.json. */

import { dollars, markdownTable, n, times, wrap } from '../../../cli/tools/markdown-table.ts';
import { CONSUMER_CPU_MS_PER_RECORD } from '../../../contract/capacity.ts';
import type { BotMixContestant, BotMixResults } from '../bot-mix-results.ts';
import type { BotMixContestantName } from '../consumer/bot-mix-worker.ts';
import type { EventClass } from '../consumer/bot-mix-workload.ts';
import { CONTESTANT_LABELS, CONTESTANTS, type ContestantName } from '../consumer/contestant-names.ts';
import { GOALS, judgeGoals } from '../goals.ts';
import type {
  ContestantSummary,
  RatioInterval,
  ReceiverFanOutSummary,
  ResultsFile,
  RoundTripSummary,
} from '../results.ts';
import { readmeConversationsClause } from './conversations-page.ts';
import { consumerOverheadSection, productWorkClause, stormIsolationSection } from './product-work-page.ts';

const label = (name: ContestantName) =>
  name === 'contractFloor' ? `${CONTESTANT_LABELS[name]} (yardstick)` : CONTESTANT_LABELS[name];
const ops = (byOperation: Record<string, number>, digits = 0) =>
  Object.entries(byOperation)
    .map(([operation, value]) => `${operation} ${n(value, digits)}`)
    .join(', ');
const range = (interval: RatioInterval, format: (value: number) => string) =>
  `${format(interval.low)}–${format(interval.high)}, ${n(interval.confidence * 100, 0)}% interval`;
const percent = (value: number) => `${n(value * 100)}%`;

export const BOT_MIX_LABELS: Readonly<Record<BotMixContestantName, string>> = {
  ours: 'ours (defaults)',
  oursNoUnhandledClaims: 'ours, `claimUnhandledEvents: false`',
  powertools: "Powertools, SQS recipe keyed on the record's event",
  powertoolsPerMessage: 'Powertools around the per-message function',
};
const BOT_MIX_ORDER: readonly BotMixContestantName[] = [
  'ours',
  'oursNoUnhandledClaims',
  'powertools',
  'powertoolsPerMessage',
];
const CLASS_LABELS: Readonly<Record<EventClass, string>> = {
  message: 'fresh message (handled)',
  status: 'fresh status (no handler)',
  retry: 'retry in a later batch',
  retryInBatch: 'retry in the same batch',
};

export function machineRegion(r: ResultsFile): string {
  const m = r.machine;
  const part = (name: string) => n(r.run.partSeconds[name] ?? 0);
  return wrap(
    `${m.cpus} vCPU (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}. Run of ${r.run.finishedAt.slice(0, 16).replace('T', ' ')} UTC, ` +
      `${n(r.run.durationSeconds)} s in all (consumer ${part('consumer')} s, bot mix ${part('botmix')} s, receiver ${part('receiver')} s, ` +
      `bundles ${part('bundles')} s, end to end ${part('e2e')} s). Load average (1, 5, 15 min) ` +
      `${m.loadAverageAtStart.join(', ')} at the start, ${m.loadAverageAtEnd.join(', ')} at the end.`,
  );
}

function consumerSection(r: ResultsFile): string[] {
  const c = r.consumer;
  const row = (name: ContestantName, x: ContestantSummary) => [
    label(name),
    `**${n(x.eventsPerSec)}** (${n(x.eventsPerSecMin)}–${n(x.eventsPerSecMax)})`,
    `**${n(x.requestsPerEvent, 3)}**`,
    n(x.wruPerEvent, 3),
    n(x.rruPerEvent, 3),
    ops(x.requestsByOperation),
    ops(x.meanRequestMsByOperation),
    n(x.nodeCpuMsPerEvent, 2),
    n(x.medianInvocationMs),
    n(x.redeliveries),
    String(x.effects),
  ];
  const trip = c.withAddedRoundTrip;
  const tripRow = (name: ContestantName, x: RoundTripSummary) => [
    label(name),
    `**${n(x.eventsPerSec)}**`,
    n(x.medianInvocationMs, 1),
    n(x.invocations),
    n(x.nodeCpuMsPerEvent, 2),
  ];
  const lines = [
    `### Consumer: ${c.events} records, ${c.distinctEvents} distinct events (${c.duplicateRatio * 100}% duplicates), batches of ${c.batchSize}, ${c.concurrency} containers, ${c.runsPerContestant} rounds`,
    '',
    markdownTable(
      [
        '',
        'events/s, median (range)',
        'requests/event',
        'WRU/event',
        'RRU/event',
        'requests per run',
        'mean ms per request',
        'Node CPU ms/event',
        'median invocation ms',
        'redelivered records',
        'effects',
      ],
      CONTESTANTS.map((name) => row(name, c[name])),
    ),
    '',
    wrap(
      `**Speedup ${times(c.speedup)}** (${range(c.speedupInterval, times)}; median over the ${c.runsPerContestant} rounds of ours/Powertools: ${c.pairedSpeedups.map((s) => times(s)).join(', ')}; ratio of the medians ${times(c.speedupOfMedians)}). ` +
        `${c.speedupWithin5Percent ? 'The interval lies within ±5% of the median.' : '**The interval is wider than ±5% of the median**: the rounds disagree more than that on this machine at this load.'} ` +
        `Powertools spends ${times(c.cpuPerEventRatio)} our Node CPU per event and ${times(c.powertools.requestsPerEvent / c.ours.requestsPerEvent)} our DynamoDB requests. ` +
        `The capacity planner sizes lanes on a fixed ${n(CONSUMER_CPU_MS_PER_RECORD, 2)} ms per record (contract/capacity.ts); this run measured ${n(c.ours.nodeCpuMsPerEvent, 2)} ms, and no run changes the constant.`,
    ),
    '',
    wrap(
      `**Ours runs at ${percent(c.shareOfFloor)} of the contract floor** (${range(c.shareOfFloorInterval, percent)}); the floor drains ${times(c.speedupCeiling)} Powertools' rate (${range(c.speedupCeilingInterval, times)}).`,
    ),
  ];
  if (trip) {
    lines.push(
      '',
      `With **${trip.addedRoundTripMs} ms added to every DynamoDB request** (an AWS-like round trip; median of ${trip.runsPerContestant} rounds):`,
      '',
      markdownTable(
        ['', 'events/s', 'median invocation ms', 'invocations', 'Node CPU ms/event'],
        CONTESTANTS.map((name) => tripRow(name, trip[name])),
      ),
      '',
      `speedup **${times(trip.speedup)}**, floor/Powertools ${times(trip.speedupCeiling)}, ours at **${percent(trip.shareOfFloor)} of the floor**.`,
    );
  }
  const probe = c.rebatchedProbe;
  lines.push(
    '',
    `Re-batched probe (untimed; ${probe.records} bodies of 1–3 messages, ${probe.distinctEvents} distinct events):`,
    '',
    markdownTable(
      ['', 'effects', 'events never effected', 'events effected twice or more'],
      (
        [
          ['ours', probe.ours],
          ["Powertools, keyed on the body's first wamid", probe.powertools],
          ['Powertools around the per-message function', probe.powertoolsPerMessage],
          ["Powertools, keyed on all the body's wamids", probe.powertoolsAllWamids],
        ] as const
      ).map(([name, row]) => [name, String(row.effects), String(row.missing), String(row.repeated)]),
    ),
  );
  return lines;
}

function botMixSection(b: BotMixResults): string[] {
  const row = (name: BotMixContestantName) => {
    const x: BotMixContestant = b[name];
    return [
      BOT_MIX_LABELS[name],
      `**${n(x.wruPerTurn, 2)}**`,
      n(x.rruPerTurn, 2),
      n(x.requestsPerTurn, 2),
      n(x.refusedWriteWruPerTurn, 2),
      n(x.lambdaMsPerEvent, 2),
      n(x.invocations),
      n(x.redeliveries),
      n(x.recordsPerSec),
      `**${dollars(x.dollarsPerMillionEvents)}**`,
      dollars(x.dollarsPerMillionEventsAtMeasuredMs),
      dollars(x.dollarsByComponent.dynamoDb, 3),
      `${x.effects} (${x.missingEffects} missing, ${x.repeatedEffects} repeated)`,
    ];
  };
  const classRow = (eventClass: EventClass) => [
    CLASS_LABELS[eventClass],
    ...BOT_MIX_ORDER.map((name) => {
      const cost = b.eventClasses[name][eventClass];
      return `${n(cost.wru, 2)} / ${n(cost.rru, 2)} / ${n(cost.requests, 2)} / ${cost.lambdaMs === null ? '–' : n(cost.lambdaMs, 1)}`;
    }),
  ];
  return [
    `### Bot mix: ${n(b.turns)} conversation turns, ${n(b.events)} events in ${n(b.deliveries)} deliveries, ${b.rounds} rounds`,
    '',
    wrap(
      `Per turn: 1 inbound message (\`onMessage\`) and the \`sent\`, \`delivered\`, \`read\` statuses of the reply (no \`onStatus\`). Meta's retries: ${n(b.retries.sameBytes)} deliveries again byte for byte, ${n(b.retries.rebatchedEvents)} events again regrouped into ${n(b.retries.rebatchedBodies)} new bodies. Medians over the rounds.`,
    ),
    '',
    markdownTable(
      [
        '',
        'WRU/turn',
        'RRU/turn',
        'requests/turn',
        'of which refused-write WRU',
        'consumer ms/event',
        'invocations',
        'redelivered records',
        'records/s',
        'whole stack per million events',
        'the same, consumer billed the ms measured here',
        'DynamoDB per million events',
        'effects',
      ],
      BOT_MIX_ORDER.map(row),
      [
        'left',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'left',
      ],
    ),
    '',
    wrap(
      `**Floor** (docs/design.md §2 for these batches): **${n(b.floorWruPerTurn, 3)} WRU per turn** with the defaults, ${n(b.floorWruPerTurnNoUnhandledClaims, 3)} with \`claimUnhandledEvents: false\`` +
        (b.returnedWruPerTurn === undefined
          ? '. '
          : `; each round adds one refused claim per event of a copy that met its twin in flight and came back (${n(b.returnedWruPerTurn, 3)} WRU per turn in the median round, ${n(b.returnedWruPerTurnNoUnhandledClaims ?? 0, 3)} without unhandled claims). `) +
        `DynamoDB cost, ours/Powertools: **${times(b.dynamoDbCostRatio)}** against the recipe, ${times(b.dynamoDbCostRatioPerMessage)} against Powertools around the per-message function, which writes nothing for statuses and so counts none of their duplicates; with \`claimUnhandledEvents: false\` (the same information) **${times(b.dynamoDbCostRatioLikeForLike)}**, both at the floor of a handled message's two writes. ` +
        `Whole stack with each consumer billed the milliseconds measured in its own runs: ours ${dollars(b.ours.dollarsPerMillionEventsAtMeasuredMs)} per million events against ${dollars(b.powertools.dollarsPerMillionEventsAtMeasuredMs)} for Powertools' recipe.`,
    ),
    '',
    wrap(
      `Per event class, each measured alone on ${b.classEvents} deliveries (write units / read units / requests / billed consumer ms, per delivery; the same-batch retry is that run less the fresh run of the same messages, its milliseconds not separable):`,
    ),
    '',
    markdownTable(
      ['class', ...BOT_MIX_ORDER.map((name) => BOT_MIX_LABELS[name])],
      (['message', 'status', 'retry', 'retryInBatch'] as const).map(classRow),
    ),
  ];
}

function receiverSection(r: ResultsFile): string[] {
  return [
    '### Receiver: handler per delivery vs HMAC-SHA256 + JSON.parse (medians)',
    '',
    markdownTable(
      ['updates', 'body', 'queue messages', 'ms per delivery', 'floor ms', 'ratio', 'iterations'],
      r.receiver.bodies.map((body) => [
        String(body.updates),
        `${n(body.bodyBytes / 1024, 1)} KiB`,
        String(body.queueMessages),
        n(body.msPerDelivery, 3),
        n(body.floorMs, 3),
        `**${times(body.ratio)}**`,
        n(body.iterations),
      ]),
    ),
    '',
    ...receiverFanOutSection(r.receiver.fanOut),
  ];
}

/** The same receiver sending one body to several subscriber queues (docs/design.md §7). */
export function receiverFanOutSection(fanOut: ReceiverFanOutSummary | undefined): string[] {
  if (fanOut === undefined) {
    return [
      wrap(
        'Several subscribers: not measured in this run (lab/bench/results.json predates them); the next `npm run bench` adds the 100-update body sent to three subscriber queues.',
      ),
    ];
  }
  return [
    wrap(
      `Several subscribers: the ${fanOut.updates}-update body sent to ${fanOut.subscribers} subscriber queues, timed in the same iterations as the same body to one subscriber and the floor (medians of ${n(fanOut.iterations)} iterations each):`,
    ),
    '',
    markdownTable(
      ['subscribers', 'queue messages', 'ms per delivery', 'against one subscriber', 'against the floor'],
      [
        [
          '1',
          n(fanOut.queueMessages / fanOut.subscribers),
          n(fanOut.oneSubscriberMs, 3),
          times(1),
          times(fanOut.oneSubscriberMs / fanOut.floorMs),
        ],
        [
          String(fanOut.subscribers),
          n(fanOut.queueMessages),
          n(fanOut.msPerDelivery, 3),
          `**${times(fanOut.ratioToOneSubscriber)}**`,
          times(fanOut.ratio),
        ],
      ],
      ['left', 'right', 'right', 'right', 'right'],
    ),
  ];
}

function bundlesSection(r: ResultsFile): string[] {
  const b = r.bundles;
  return [
    `### Bundles (esbuild with the construct's options; load time over ${b.spawns} fresh processes, empty-module baseline ${n(b.baselineReadyMs)} ms)`,
    '',
    markdownTable(
      ['bundle', 'bytes', 'source map', 'init ms (over the baseline)', '`import()` ms'],
      (['receiver', 'consumer'] as const).map((name) => [
        name,
        `${n(b[name].bytes)} (${n(b[name].bytes / 1024)} KiB)`,
        `${n(b[name].sourceMapBytes / 1024)} KiB`,
        `**${n(b[name].initMs)}**`,
        n(b[name].importMs),
      ]),
    ),
  ];
}

function endToEndSection(r: ResultsFile): string[] {
  const e = r.endToEnd;
  return [
    `### End to end (local stack, autocannon, ${e.connections} connections, ${n(e.durationSeconds, 1)} s measured)`,
    '',
    markdownTable(
      [
        'deliveries/s',
        'ack p50 ms',
        'ack p99 ms',
        'ack max ms',
        'acknowledged',
        'distinct events',
        'effects',
        'repeated',
        'missing',
        'effects/s',
        'drain after load',
      ],
      [
        [
          `**${n(e.deliveriesPerSec, 1)}**`,
          `**${n(e.ackP50Ms)}**`,
          `**${n(e.ackP99Ms)}**`,
          n(e.ackMaxMs),
          n(e.deliveriesAcked),
          n(e.distinctEventsAcked),
          n(e.effects),
          String(e.repeatedEffects),
          String(e.missingEffects),
          n(e.effectsPerSec, 1),
          `${n(e.drainMs / 1000, 1)} s`,
        ],
      ],
    ),
    '',
    `(${e.effectsOfUnansweredDeliveries} of the effects belong to deliveries still unanswered when the load stopped.)`,
  ];
}

/** Every goal, judged from the figures above (lab/bench/goals.ts), met or not, with the figure it was judged on. */
function goalsSection(r: ResultsFile): string[] {
  const verdicts = judgeGoals(r);
  return [
    '### Goals',
    '',
    markdownTable(
      ['goal', 'what it asks', 'judged on', 'met'],
      GOALS.map((goal) => {
        const verdict = verdicts[goal.name];
        return [
          `\`${goal.name}\``,
          goal.asks,
          verdict ? `${goal.format(verdict.measured)}${verdict.note ? ` (${verdict.note})` : ''}` : '–',
          verdict === null || verdict === undefined ? 'not measured' : verdict.met ? 'yes' : '**no**',
        ];
      }),
    ),
  ];
}

export function resultsRegion(r: ResultsFile): string {
  return [
    ...consumerSection(r),
    '',
    ...botMixSection(r.botMix),
    '',
    ...receiverSection(r),
    '',
    ...bundlesSection(r),
    '',
    ...endToEndSection(r),
    '',
    ...consumerOverheadSection(r),
    '',
    ...stormIsolationSection(r),
    '',
    ...goalsSection(r),
  ].join('\n');
}

/** The goals met and not met, in one sentence. */
function goalsSentence(r: ResultsFile): string {
  const verdicts = judgeGoals(r);
  const list = (met: boolean) => {
    const names = GOALS.filter((goal) => verdicts[goal.name]?.met === met).map((goal) => goal.short);
    return names.length > 0 ? names.join('; ') : 'none';
  };
  const judged = GOALS.filter((goal) => verdicts[goal.name] != null).length;
  const met = GOALS.filter((goal) => verdicts[goal.name]?.met === true).length;
  const unmeasured = GOALS.filter((goal) => verdicts[goal.name] == null).map((goal) => goal.short);
  return (
    `**Goals** ([below](#goals)): ${met} of ${judged} met. ` +
    `Met: ${list(true)}. Not met: ${list(false)}.` +
    (unmeasured.length > 0 ? ` Not measured yet: ${unmeasured.join('; ')}.` : '')
  );
}

/**
 * The page's summary: cost per million events against Powertools, drain rate, receiver vs its floor, and the
 * goals met and not met.
 */
export function summaryRegion(r: ResultsFile): string {
  const b = r.botMix;
  const c = r.consumer;
  const thousand = r.receiver.bodies.find((body) => body.updates === 1000);
  if (thousand === undefined) throw new Error('The receiver part has no 1000-update body.');
  return wrap(
    `Measured by \`npm run bench\` on DynamoDB Local (method, intervals and caveats below). **Cost**: a bot's traffic (per turn a handled message and three ` +
      `statuses without handler, 10% retried) costs **${dollars(b.ours.dollarsPerMillionEvents)} per million events** ` +
      `for the whole stack (${dollars(b.oursNoUnhandledClaims.dollarsPerMillionEvents)} with \`claimUnhandledEvents: false\`), ` +
      `against ${dollars(b.powertools.dollarsPerMillionEvents)} with Powertools Idempotency's SQS recipe and ` +
      `${dollars(b.powertoolsPerMessage.dollarsPerMillionEvents)} with Powertools around the per-message function ` +
      `([cost.md](cost.md)). **Drain**: ${times(c.speedup)} Powertools' rate ` +
      `(${times(c.speedupInterval.low)}–${times(c.speedupInterval.high)}). **Receiver**: a 1000-update body in ` +
      `${times(thousand.ratio)} the time of HMAC + one \`JSON.parse\`. ${readmeConversationsClause(r)}${productWorkClause(r)}${goalsSentence(r)}`,
  );
}
