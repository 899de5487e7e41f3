/**
 * The generated regions of docs/cost.md: prices, the cost per million events of each shape, several subscribers,
 * fixed costs.
 */

import {
  DATA_TRANSFER_PRICES_COLLECTED_ON,
  FREE_TIERS,
  PRICE_REGION,
  PRICE_SOURCES,
  PRICES,
  PRICES_COLLECTED_ON,
  S3_PRICES_COLLECTED_ON,
  SNS_PRICES_COLLECTED_ON,
} from '../../../cli/cost/prices.ts';
import {
  ASSUMPTIONS,
  costPerMillionEvents,
  FRONT_DOORS,
  type FrontDoor,
  measuredShape,
  referenceShape,
  type StackCost,
} from '../../../cli/cost/stack-cost.ts';
import { dollars, markdownTable, n, wrap, wrapItem } from '../../../cli/tools/markdown-table.ts';
import { DEFAULT_ARCHIVE_RETENTION_DAYS } from '../../../contract/archive.ts';
import { LANES } from '../../../contract/lanes.ts';
import { ConsumerNumberMetric } from '../../../contract/metric-names.ts';
import { DEFAULT_CONSUMER_MEMORY_MB, DEFAULT_RECEIVER_MEMORY_MB } from '../../../lib/defaults.ts';
import type { BotMixContestant } from '../bot-mix-results.ts';
import {
  ARCHIVE_ASSUMPTIONS,
  ARCHIVE_RATES_PER_SECOND,
  archiveCostPerMillion,
} from '../cost/archive-cost.ts';
import { sharedCostPerMillion } from '../cost/fan-out-cost.ts';
import { FORWARD_ANSWER_MS, FORWARD_ASSUMPTIONS, forwardCostPerMillion } from '../cost/forward-cost.ts';
import {
  IDLE_POLL_REQUESTS_PER_MONTH,
  idleMessageLanePerMonth,
  type LaneCostRow,
  laneCostRows,
  type QueueLayout,
} from '../cost/lane-cost.ts';
import type { ResultsFile } from '../results.ts';
import { fanOutRegion } from './fan-out-table.ts';

/** Alarm metrics of the default stack; test/infra/monitoring.test.ts checks the number against the template. */
export const ALARM_METRICS = 41;
const ALARM_BREAKDOWN =
  '15 single-metric alarms (three of them the archive’s) + 12 metric-math alarms (duplicate rate and handler error rate read 6 metrics each, claim-table throttles and system errors 3 each, the other eight 1 each: signature rejections, DLQ, message-lane DLQ and quarantine growth, completion and claim failures, redeliveries not scheduled, the message wait)';
/**
 * Alarm metrics each subscriber beyond the first adds (its own queue, DLQ, consumer and handler alarms);
 * test/infra/subscribers.test.ts checks the number against a three-subscriber template.
 */
export const SUBSCRIBER_ALARM_METRICS = 26;
const SUBSCRIBER_ALARM_BREAKDOWN =
  '8 single-metric alarms + 8 metric-math alarms (duplicate rate and handler error rate read 6 metrics each, the other six 1 each: DLQ and message-lane DLQ growth, completion and claim failures, redeliveries not scheduled, the message wait)';

const perMillion = (price: number, digits = 2) => dollars(price * 1e6, digits);

export function pricesRegion(): string {
  const p = PRICES;
  return [
    wrap(
      `Collected on **${PRICES_COLLECTED_ON}**, ${PRICE_REGION}, from \`cli/cost/prices.ts\`, the one module both this page and \`npm run bench\` read.`,
    ),
    '',
    markdownTable(
      ['service', 'price (us-east-1)', 'source'],
      [
        [
          'API Gateway HTTP API',
          `${perMillion(p.apiGateway.perRequest)} per million requests (first 300 million a month), metered per ${p.apiGateway.meteredKiB} KB`,
          PRICE_SOURCES.apiGateway,
        ],
        [
          'Lambda, arm64',
          `${perMillion(p.lambda.perRequest)} per million requests; $${p.lambda.perGbSecond} per GB-second (first 7.5 billion GB-s a month)`,
          PRICE_SOURCES.lambda,
        ],
        [
          'SQS standard',
          `${perMillion(p.sqs.perRequest)} per million requests (first 100 billion a month); every ${p.sqs.meteredKiB} KB of a message counts as one request`,
          PRICE_SOURCES.sqs,
        ],
        [
          'SQS FIFO (the ordered message lane)',
          `${perMillion(p.sqs.fifoPerRequest)} per million requests (first 100 billion a month, high-throughput mode included), metered per ${p.sqs.meteredKiB} KB as standard requests`,
          PRICE_SOURCES.sqs,
        ],
        [
          'SNS standard topic (the fan-out we did not choose)',
          `${perMillion(p.sns.perPublishRequest)} per million publish requests (first million a month free); every ${p.sns.meteredKiB} KB of a payload counts as one request; deliveries to SQS queues ${perMillion(p.sns.perSqsDelivery)} (collected on ${SNS_PRICES_COLLECTED_ON})`,
          PRICE_SOURCES.sns,
        ],
        [
          'DynamoDB on-demand',
          `${perMillion(p.dynamoDb.perWriteRequestUnit, 3)} per million write request units (1 WRU writes up to 1 KB); ${perMillion(p.dynamoDb.perReadRequestUnit, 3)} per million read request units (1 RRU: a strongly consistent read up to 4 KB)`,
          PRICE_SOURCES.dynamoDb,
        ],
        [
          'CloudWatch Logs',
          `${dollars(p.cloudWatch.logsPerGbIngested)} per GB ingested (standard class; Lambda logs use the same first tier since the tiered pricing of May 2025); ${dollars(p.cloudWatch.logsPerGbMonthStored)} per GB-month stored`,
          PRICE_SOURCES.cloudWatch,
        ],
        [
          'CloudWatch metrics, dashboards, alarms',
          `${dollars(p.cloudWatch.perCustomMetricMonth)} per custom metric per month (first 10,000); ${dollars(p.cloudWatch.perDashboardMonth)} per dashboard per month; ${dollars(p.cloudWatch.perAlarmMetricMonth)} per standard alarm metric per month`,
          PRICE_SOURCES.cloudWatch,
        ],
        [
          'Secrets Manager',
          `${dollars(p.secretsManager.perSecretMonth)} per secret per month; ${dollars(p.secretsManager.per10kApiCalls)} per 10,000 API calls`,
          PRICE_SOURCES.secretsManager,
        ],
        [
          'Data transfer out to the internet (forwarding)',
          `${dollars(p.dataTransfer.outToInternetPerGb)} per GB (after the first 100 GB a month, up to 10 TB); in: free (collected on ${DATA_TRANSFER_PRICES_COLLECTED_ON})`,
          PRICE_SOURCES.dataTransfer,
        ],
        [
          'S3 Standard (the delivery archive)',
          `${dollars(p.s3.perPutRequest * 1000, 3)} per 1,000 PUT requests; ${dollars(p.s3.perGetRequest * 1000, 4)} per 1,000 GET requests; ${dollars(p.s3.storagePerGbMonth, 3)} per GB-month (first 50 TB) (collected on ${S3_PRICES_COLLECTED_ON})`,
          PRICE_SOURCES.s3,
        ],
      ],
    ),
  ].join('\n');
}

const COMPONENTS: readonly [keyof StackCost, string][] = [
  ['apiGateway', 'API Gateway HTTP API'],
  ['receiver', 'Lambda receiver'],
  ['consumer', 'Lambda consumer'],
  ['sqs', 'SQS'],
  ['dynamoDb', 'DynamoDB'],
  ['logs', 'CloudWatch Logs'],
  ['total', '**total**'],
];

export function perMillionRegion(results: ResultsFile): string {
  const quiet = costPerMillionEvents(referenceShape('quiet'));
  const busy = costPerMillionEvents(referenceShape('busy'));
  const bot = results.botMix;
  const oursFunctionUrl = bot.ours.functionUrl;
  const a = ASSUMPTIONS;
  const busyInvocations = 1e6 / a.busy.batchSize;
  const assumption: Record<keyof StackCost, string> = {
    apiGateway: '1 M requests (bodies under 512 KB); none behind a function URL',
    receiver: `${DEFAULT_RECEIVER_MEMORY_MB} MB, ${a.receiverMs} ms each (assumed): 1 M requests + ${n((1e6 * DEFAULT_RECEIVER_MEMORY_MB * a.receiverMs) / 1024 / 1000)} GB-s`,
    consumer: `${DEFAULT_CONSUMER_MEMORY_MB} MB; quiet: 1 M invocations × ${a.quiet.consumerMs} ms; busy: ${n(busyInvocations)} invocations × ${a.busy.consumerMs} ms (assumed)`,
    sqs: `send 1 per delivery, receive and delete 1 per batch: quiet ${n(1 + 2 / a.quiet.batchSize)} M requests, busy ${n(1 + 2 / a.busy.batchSize, 1)} M`,
    dynamoDb: '2 WRU per fresh event (claim `PutItem` + complete `UpdateItem`, items under 1 KB): 2 M WRU',
    logs: `per delivery ${a.receiverLogKB} KB receiver and ${a.apiAccessLogKB} KB HTTP API access log; consumer ${a.quiet.consumerLogKB} KB per invocation (quiet) or ${a.busy.consumerLogKB} KB (busy) (assumed)`,
    total: '',
  };
  const cell = (cost: StackCost, component: keyof StackCost) => {
    const text = dollars(cost[component]);
    return component === 'total' ? `**${text}**` : text;
  };
  const botColumns: [string, StackCost][] = [
    ['bot mix, ours', bot.ours.dollarsByComponent],
    ...(oursFunctionUrl === undefined
      ? []
      : [['bot mix, ours, function URL', oursFunctionUrl.dollarsByComponent] as [string, StackCost]]),
    ['bot mix, Powertools recipe', bot.powertools.dollarsByComponent],
    ['bot mix, Powertools per message', bot.powertoolsPerMessage.dollarsByComponent],
  ];
  const main = markdownTable(
    ['component', 'reference shapes: assumption', 'quiet', 'busy', ...botColumns.map(([label]) => label)],
    COMPONENTS.map(([component, label]) => [
      label,
      assumption[component],
      cell(quiet, component),
      cell(busy, component),
      ...botColumns.map(([, cost]) => cell(cost, component)),
    ]),
    ['left', 'left', 'right', 'right', ...botColumns.map(() => 'right' as const)],
  );
  const behindFunctionUrl = (name: 'quiet' | 'busy') =>
    dollars(costPerMillionEvents(referenceShape(name), 'function-url').total);
  const inputs = (c: BotMixContestant) => [
    n(c.wruPerTurn / 4, 3),
    n(c.rruPerTurn / 4, 3),
    n(c.invocations / bot.events, 3),
    n(c.lambdaMsPerEvent, 2),
    n(c.logBytesPerInvocation),
    `**${dollars(c.dollarsPerMillionEvents)}**`,
    ...(oursFunctionUrl === undefined ? [] : [dollars(c.functionUrl?.dollarsPerMillionEvents ?? Number.NaN)]),
  ];
  const measured = markdownTable(
    [
      'bot mix',
      'WRU per event',
      'RRU per event',
      'consumer invocations per event',
      'consumer ms per event, measured on DynamoDB Local (not billed)',
      'consumer log bytes per invocation',
      'per million events',
      ...(oursFunctionUrl === undefined ? [] : ['per million events, function URL']),
    ],
    [
      ['ours (defaults)', ...inputs(bot.ours)],
      ['ours, `claimUnhandledEvents: false`', ...inputs(bot.oursNoUnhandledClaims)],
      ["Powertools, SQS recipe keyed on the record's event", ...inputs(bot.powertools)],
      ['Powertools around the per-message function', ...inputs(bot.powertoolsPerMessage)],
    ],
    ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
  const volume = bot.logVolume;
  const receiverLog =
    volume === undefined
      ? "and the receiver's duration and log volume are the reference shapes' too"
      : `the receiver's duration is the reference shapes' too, and its log volume is measured (${n(volume.receiverBytesPerDelivery.info)} bytes per delivery, below)`;
  return [
    main,
    '',
    wrap(
      `**Two front doors.** Meta's POSTs reach the receiver through an API Gateway HTTP API (the default, \`endpoint: 'http-api'\`) or through the receiver's Lambda function URL (\`endpoint: 'function-url'\`), which AWS bills nothing beyond the receiver's own invocation: no request charge and no access log. ` +
        `Behind a function URL the reference shapes cost ${behindFunctionUrl('quiet')} (quiet) and ${behindFunctionUrl('busy')} (busy)` +
        (oursFunctionUrl === undefined
          ? '.'
          : `, and ours in the bot mix ${dollars(oursFunctionUrl.dollarsPerMillionEvents)}. Powertools' columns keep the HTTP API: its SQS recipe has a front door of its own.`),
    ),
    '',
    wrap(
      `The bot-mix columns are measured by \`npm run bench\` (${n(bot.turns)} conversation turns, ${n(bot.events)} events in ${n(bot.deliveries)} deliveries, ` +
        `${n((bot.deliveries / bot.events - 1) * 100, 1)}% more deliveries than events from Meta's retries): ${n(bot.deliveries / bot.events, 3)} deliveries per event for the front door, the receiver and SQS; ` +
        "capacity units from DynamoDB's answers; consumer invocations (a redelivered record costs another) and consumer log bytes from the runs. " +
        `Each consumer invocation is billed the busy shape's ${a.busy.consumerMs} ms, ${receiverLog}: ` +
        'DynamoDB Local on a shared machine answers in tens of milliseconds where DynamoDB answers in a few, so the durations measured there would price ' +
        "the emulator's queueing ([benchmarks.md](benchmarks.md#2-bot-mix) gives the figures at the measured durations as well). Per million events:",
    ),
    '',
    measured,
    ...(volume === undefined ? [] : ['', logLevelsParagraph(results)]),
  ].join('\n');
}

/**
 * The bot mix's CloudWatch Logs line for ours at INFO and at DEBUG, from the bytes measured at each level: the
 * receiver's per delivery, the consumer's per invocation, API Gateway's access log assumed.
 */
export function logsAtLevels(
  results: ResultsFile,
): Record<'info' | 'debug', Record<FrontDoor, number>> | undefined {
  const bot = results.botMix;
  const volume = bot.logVolume;
  if (volume === undefined) return undefined;
  const logsAt = (level: 'info' | 'debug') => {
    const shape = measuredShape({
      events: bot.events,
      deliveries: bot.deliveries,
      consumerInvocations: bot.ours.invocations,
      wru: 0,
      rru: 0,
      consumerLogBytes: volume.consumerBytesPerInvocation[level] * bot.ours.invocations,
      receiverLogBytesPerDelivery: volume.receiverBytesPerDelivery[level],
    });
    return Object.fromEntries(
      FRONT_DOORS.map((door) => [door, costPerMillionEvents(shape, door).logs]),
    ) as Record<FrontDoor, number>;
  };
  return { info: logsAt('info'), debug: logsAt('debug') };
}

function logLevelsParagraph(results: ResultsFile): string {
  const volume = results.botMix.logVolume as NonNullable<ResultsFile['botMix']['logVolume']>;
  const logs = logsAtLevels(results) as NonNullable<ReturnType<typeof logsAtLevels>>;
  const r = volume.receiverBytesPerDelivery;
  const c = volume.consumerBytesPerInvocation;
  return wrap(
    `**The logs line, before and after the cut** ([decisions.md](decisions.md#the-functions-log-at-info-what-follows-one-event)), measured on the bot mix by \`npm run bench\`: the real receiver handler writes ${n(r.info)} bytes per delivery at INFO and ${n(r.debug)} at DEBUG (its line and its EMF document, with a Lambda context of AWS's shape); ours' consumer ${n(c.info)} bytes per invocation at INFO and ${n(c.debug)} at DEBUG. ` +
      `CloudWatch Logs for ours per million events, **after** (INFO): ${dollars(logs.info['http-api'])} behind the HTTP API, ${dollars(logs.info['function-url'])} behind a function URL; ` +
      `**before**, bounded from above by DEBUG: ${dollars(logs.debug['http-api'])} and ${dollars(logs.debug['function-url'])}. ` +
      'DEBUG logs again everything the cut moved to debug (the details and the whole Lambda context on each line), plus the lines of their own it needs and the per-event lines that were debug already, so it is more than the functions logged before the cut, never less.',
  );
}

export function adjustmentsRegion(): string {
  const wru = perMillion(PRICES.dynamoDb.perWriteRequestUnit, 3);
  return [
    `- **Duplicates** cost one refused conditional write (1 WRU, no read): **${wru} per million duplicates** for DynamoDB, plus the same API, Lambda, SQS and log cost as any delivery if Meta sent it again over HTTP. A repeat of a key within one batch or one delivery costs nothing.`,
    `- **Events without a handler** (a bot's statuses, usually) are recorded as done in one write: **${wru} per million** instead of twice that; with \`claimUnhandledEvents: false\`, nothing.`,
    `- **Statuses with an \`onStatus\` handler** also update the status ledger: +1 WRU, **+${wru} per million fresh statuses**.`,
    `- **Larger deliveries**: Meta may batch up to 1,000 updates in one POST. Per event, API Gateway, receiver and log costs then shrink by the number of events per delivery, while SQS pays one request per ${PRICES.sqs.meteredKiB} KB of body.`,
    "- Functions log at INFO with Lambda's system log level at WARN, so the platform's START/END/REPORT lines are not ingested. DEBUG logging multiplies the log line.",
  ]
    .map((item) => wrapItem(item))
    .join('\n');
}

/** The per-number metrics of one declared number: its counts, and its wait in each lane. */
const PER_NUMBER_COUNTS = Object.keys(ConsumerNumberMetric).length;
const PER_NUMBER_METRICS = PER_NUMBER_COUNTS + LANES.length;

export function fixedRegion(): string {
  const c = PRICES.cloudWatch;
  const metrics = [15, 25] as const;
  const storageGb = 0.08;
  const f = FREE_TIERS;
  const freeTiers =
    `Small accounts fall largely inside the free tiers (Lambda: ${n(f.lambdaRequests / 1e6)} M requests and ${n(f.lambdaGbSeconds)} GB-s a month; ` +
    `SQS: ${n(f.sqsRequests / 1e6)} M requests a month; API Gateway: ${n(f.apiGatewayRequests / 1e6)} M requests a month for the first 12 months; ` +
    `CloudWatch: ${f.alarmMetrics} alarm metrics, ${f.customMetrics} detailed or custom metrics and ${f.dashboards} dashboards of up to 50 metrics).`;
  return `${markdownTable(
    ['item', 'per month'],
    [
      [
        `Dashboard (more than 50 metrics, so the ${f.dashboards} free dashboards do not cover it)`,
        dollars(c.perDashboardMonth),
      ],
      [
        `Alarms: ${ALARM_BREAKDOWN} = ${ALARM_METRICS} alarm metrics`,
        dollars(ALARM_METRICS * c.perAlarmMetricMonth),
      ],
      [
        `Each subscriber beyond the first, its alarms: ${SUBSCRIBER_ALARM_BREAKDOWN} = ${SUBSCRIBER_ALARM_METRICS} alarm metrics`,
        `+${dollars(SUBSCRIBER_ALARM_METRICS * c.perAlarmMetricMonth)}`,
      ],
      [
        `Custom metrics: one per metric name × \`Field\` value that reported during the month; typically ${metrics[0]}–${metrics[1]} (messages/statuses/errors fresh and duplicate, receiver and consumer counts, the odd management field)`,
        `${dollars(metrics[0] * c.perCustomMetricMonth)}–${dollars(metrics[1] * c.perCustomMetricMonth)}`,
      ],
      [
        `Each number a subscriber declares in \`numbers\`: its ${PER_NUMBER_COUNTS} counts (${Object.values(ConsumerNumberMetric).join(', ')}) and its wait in each of its ${LANES.length} lanes = up to ${PER_NUMBER_METRICS} custom metrics, and 2 widgets on the same dashboard; undeclared numbers add none`,
        `+${dollars(PER_NUMBER_METRICS * c.perCustomMetricMonth)}`,
      ],
      ['Secret', dollars(PRICES.secretsManager.perSecretMonth)],
      [
        'SQS long polling of an idle queue by the Lambda event source: AWS does not publish the poller count; about 5 pollers × 3 requests a minute ≈ 650,000 requests (uncertain)',
        `≈ ${dollars(650_000 * PRICES.sqs.perRequest)}`,
      ],
      [
        `Claim table storage and PITR: a million events a month kept 8 days ≈ 270,000 items × ~300 B ≈ ${storageGb} GB at ${dollars(PRICES.dynamoDb.storagePerGbMonth)} + ${dollars(PRICES.dynamoDb.pitrPerGbMonth)} per GB-month`,
        `≈ ${dollars(storageGb * (PRICES.dynamoDb.storagePerGbMonth + PRICES.dynamoDb.pitrPerGbMonth))}`,
      ],
    ],
    ['left', 'right'],
  )}\n\n${wrap(freeTiers)}`;
}

export function formulasRegion(): string {
  const p = PRICES;
  const m = (price: number) => `$${n(price * 1e6, 3).replace(/0$/, '')} / 1e6`;
  return [
    '```',
    `API Gateway  = D × ceil(body / ${p.apiGateway.meteredKiB} KB) × ${m(p.apiGateway.perRequest)}   (0 behind a function URL)`,
    `Receiver     = D × (${m(p.lambda.perRequest)} + M_r × t_r × $${p.lambda.perGbSecond})`,
    `Consumer     = I × (${m(p.lambda.perRequest)} + M_c × t_c × $${p.lambda.perGbSecond})`,
    `SQS          = (D × ceil(message / ${p.sqs.meteredKiB} KB) + 2 × I) × ${m(p.sqs.perRequest)}`,
    `DynamoDB     = (2 × H + N + U) × ${m(p.dynamoDb.perWriteRequestUnit)} + R × ${m(p.dynamoDb.perReadRequestUnit)}`,
    `Logs         = (D × (Lr + La) + I × Lc) × $${n(p.cloudWatch.logsPerGbIngested, 2)}   (La = 0 behind a function URL)`,
    '```',
  ].join('\n');
}

const LAYOUT_LABELS: Readonly<Record<QueueLayout, string>> = {
  singleQueue: 'one standard queue (before the lanes)',
  lanes: 'lanes: FIFO message lane + standard status lane',
};

/** Each subscriber's single queue against its two lanes, per million events of the bot mix (lab/bench/cost/lane-cost.ts). */
export function lanesRegion(results: ResultsFile): string {
  const bot = results.botMix;
  const mix = { messageShare: bot.turns / bot.events, deliveriesPerEvent: bot.deliveries / bot.events };
  const rows = laneCostRows(mix, bot.ours.dollarsByComponent.dynamoDb);
  const before = (row: LaneCostRow) =>
    rows.find(
      (other) =>
        other.layout === 'singleQueue' &&
        other.traffic === row.traffic &&
        other.subscribers === row.subscribers,
    ) as LaneCostRow;
  const table = markdownTable(
    [
      'traffic',
      'subscribers',
      'queues per subscriber',
      'consumer invocations',
      'SQS',
      'consumer Lambda',
      'consumer logs',
      'whole stack',
      'lanes − one queue',
    ],
    rows.map((row) => {
      const delta = row.total - before(row).total;
      return [
        row.traffic,
        String(row.subscribers),
        LAYOUT_LABELS[row.layout],
        n(row.queueSide.consumerInvocations),
        dollars(row.queueSide.sqsSends + row.queueSide.sqsReceiveAndDelete),
        dollars(row.queueSide.consumer),
        dollars(row.queueSide.consumerLogs),
        `**${dollars(row.total)}**`,
        row.layout === 'lanes' ? `+${dollars(delta)} (+${n((delta / before(row).total) * 100, 1)}%)` : '',
      ];
    }),
    ['left', 'right', 'left', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
  const a = ASSUMPTIONS;
  return [
    wrap(
      `Per million events of the bot mix above (${n(mix.messageShare * 100)}% inbound messages, ${n(mix.deliveriesPerEvent, 3)} deliveries per event), ` +
        `every subscriber wanting every delivery. Quiet: every invocation holds one record (${a.quiet.consumerMs} ms, ${a.quiet.consumerLogKB} KB of logs). ` +
        `Busy: the standard queues batch ${a.busy.batchSize} records within their window (${a.busy.consumerMs} ms, ${a.busy.consumerLogKB} KB); the message lane, ` +
        `which has no window, is counted at one invocation per message (${a.quiet.consumerMs} ms), its upper bound. SQS FIFO requests cost ` +
        `${perMillion(PRICES.sqs.fifoPerRequest)} per million against ${perMillion(PRICES.sqs.perRequest)}. ` +
        "API Gateway, the receiver and DynamoDB (the bot mix's measured writes, per subscriber) are the same in both layouts and included in the whole stack.",
    ),
    '',
    table,
    '',
    wrap(
      `An idle message lane is polled too: at the fixed costs' estimate of ${n(IDLE_POLL_REQUESTS_PER_MONTH)} long polls a month per queue, ` +
        `each subscriber's FIFO queue adds about ${dollars(idleMessageLanePerMonth(1))} a month (${dollars(idleMessageLanePerMonth(3))} for 3).`,
    ),
  ].join('\n');
}

/** The delivery archive per million deliveries, at three steady rates (lab/bench/cost/archive-cost.ts). */
export function archiveRegion(): string {
  const a = ARCHIVE_ASSUMPTIONS;
  const rows = ARCHIVE_RATES_PER_SECOND.map((rate) => archiveCostPerMillion(rate));
  return [
    wrap(
      `Per million deliveries, kept the default ${DEFAULT_ARCHIVE_RETENTION_DAYS} days: a delivery of ${n(a.bodyBytes)} bytes, archived as a line about ${n(a.lineOverheadBytes)} bytes longer and gzipped to ${Math.round(a.gzipShare * 100)} in a hundred of its bytes (assumed); one archive queue message each (the body's text), received and deleted ten at a time; one object per batching window, up to the batch size or Lambda's payload; the archiver billed ${a.archiverMsPerDelivery} ms a delivery and ${a.archiverMsPerInvocation} ms an invocation (assumed, from a measured run of the archiver's code).`,
    ),
    '',
    markdownTable(
      [
        'deliveries per second',
        'deliveries per object',
        'S3 PUTs',
        'S3 storage',
        'archive queue',
        'archiver Lambda',
        '**total**',
      ],
      rows.map((row) => [
        n(row.ratePerSecond),
        n(row.deliveriesPerObject),
        dollars(row.puts, 4),
        dollars(row.storage, 4),
        dollars(row.sqs, 4),
        dollars(row.archiver, 4),
        `**${dollars(row.total, 2)}**`,
      ]),
    ),
  ].join('\n');
}

export function forwardingRegion(): string {
  const a = FORWARD_ASSUMPTIONS;
  const busy = FORWARD_ANSWER_MS.map((answerMs) => forwardCostPerMillion(answerMs, 'busy'));
  const quiet = FORWARD_ANSWER_MS.map((answerMs) => forwardCostPerMillion(answerMs, 'quiet'));
  return [
    wrap(
      `Per million events forwarded, one event per delivery, every event fresh: a body of ${n(a.bodyBytes)} bytes and about ${n(a.requestOverheadBytes)} bytes of headers and framing per POST (assumed); the forwarding consumer (${DEFAULT_CONSUMER_MEMORY_MB} MB) billed its own time for a batch (${ASSUMPTIONS.busy.consumerMs} ms for ${ASSUMPTIONS.busy.batchSize} records, ${ASSUMPTIONS.quiet.consumerMs} ms for ${ASSUMPTIONS.quiet.batchSize}) plus one answer of the destination, as a batch's POSTs are in flight together. Busy traffic, by component:`,
    ),
    '',
    markdownTable(
      [
        'the destination answers in',
        'SQS (its queue)',
        'Lambda (forwarding)',
        'DynamoDB (claims)',
        'CloudWatch Logs',
        'data out',
        '**total, busy**',
        'total, quiet',
      ],
      busy.map((row, index) => [
        `${n(row.answerMs)} ms`,
        dollars(row.sqs),
        dollars(row.lambda),
        dollars(row.dynamoDb),
        dollars(row.logs),
        dollars(row.dataOut),
        `**${dollars(row.total)}**`,
        dollars(quiet[index]?.total ?? Number.NaN),
      ]),
      ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    ),
    '',
    wrap(
      `The front door all subscribers share (the HTTP API or a function URL, the receiver and their logs) adds ${dollars(sharedCostPerMillion(referenceShape('busy'), 'http-api'))} per million deliveries behind the HTTP API, ${dollars(sharedCostPerMillion(referenceShape('busy'), 'function-url'))} behind a function URL, once, however many subscribers forward or run code.`,
    ),
  ].join('\n');
}

export function costRegions(results: ResultsFile): Record<string, string> {
  return {
    prices: pricesRegion(),
    'per-million': perMillionRegion(results),
    'fan-out': fanOutRegion(),
    lanes: lanesRegion(results),
    adjustments: adjustmentsRegion(),
    fixed: fixedRegion(),
    archive: archiveRegion(),
    forwarding: forwardingRegion(),
    formulas: formulasRegion(),
  };
}
