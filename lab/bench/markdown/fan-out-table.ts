/**
 * The cost of several subscribers, for docs/cost.md ("Several subscribers"), from the price table.
 */

import { PRICES } from '../../../cli/cost/prices.ts';
import { ASSUMPTIONS, referenceShape } from '../../../cli/cost/stack-cost.ts';
import { dollars, markdownTable, n, wrapItem } from '../../../cli/tools/markdown-table.ts';
import {
  FAN_OUT_SUBSCRIBER_COUNTS,
  type FanOutMechanism,
  fanOutCost,
  sharedCostPerMillion,
  subscriberCostPerMillion,
} from '../cost/fan-out-cost.ts';

const BUSY = referenceShape('busy');
const plus = (value: number) => `+${dollars(value)}`;

/** Subscribers × mechanism, per million deliveries of the busy shape; the last row is one subscriber more. */
export function fanOutTable(): string {
  const cost = (mechanism: FanOutMechanism, subscribers: number) => fanOutCost(mechanism, subscribers, BUSY);
  const further = (mechanism: FanOutMechanism) => {
    const one = cost(mechanism, 1);
    const two = cost(mechanism, 2);
    return { fanOut: two.fanOut - one.fanOut, total: two.total - one.total };
  };
  const ownEach = subscriberCostPerMillion(BUSY).total;
  const rows = FAN_OUT_SUBSCRIBER_COUNTS.map((subscribers) => {
    const ours = cost('receiverSends', subscribers);
    const sns = cost('snsTopic', subscribers);
    return [
      String(subscribers),
      dollars(ours.fanOut),
      dollars(sns.fanOut),
      dollars(ours.subscribersOwn),
      `**${dollars(ours.total)}**`,
      dollars(sns.total),
    ];
  });
  const ours = further('receiverSends');
  const sns = further('snsTopic');
  rows.push([
    'each subscriber more',
    plus(ours.fanOut),
    plus(sns.fanOut),
    plus(ownEach),
    `**${plus(ours.total)}**`,
    plus(sns.total),
  ]);
  return markdownTable(
    [
      'subscribers',
      'fan-out: the receiver sends to each queue (ours)',
      'fan-out: SNS topic',
      "the subscribers' own cost",
      'whole stack, ours',
      'whole stack, SNS',
    ],
    rows,
    ['left', 'right', 'right', 'right', 'right', 'right'],
  );
}

/** The smallest subscriber count from which SNS's fan-out costs less than the receiver's sends. */
function snsCheaperFrom(): number {
  for (let subscribers = 1; subscribers <= 100; subscribers++) {
    if (fanOutCost('snsTopic', subscribers).fanOut < fanOutCost('receiverSends', subscribers).fanOut) {
      return subscribers;
    }
  }
  throw new Error('SNS never costs less than the receiver within 100 subscribers.');
}

function subscriberTable(): string {
  const quiet = subscriberCostPerMillion(referenceShape('quiet'));
  const busy = subscriberCostPerMillion(BUSY);
  const row = (label: string, pick: (cost: typeof busy) => number, bold = false) => {
    const cell = (value: number) => (bold ? `**${dollars(value)}**` : dollars(value));
    return [label, cell(pick(quiet)), cell(pick(busy))];
  };
  return markdownTable(
    [
      'one subscriber, per million deliveries it receives',
      `quiet (batches of ${ASSUMPTIONS.quiet.batchSize})`,
      `busy (batches of ${ASSUMPTIONS.busy.batchSize})`,
    ],
    [
      row('SQS receive and delete (its event source)', (cost) => cost.sqsReceiveAndDelete),
      row('Lambda, its consumer', (cost) => cost.consumer),
      row('DynamoDB, its claims (2 WRU per fresh handled event)', (cost) => cost.dynamoDb),
      row('CloudWatch Logs, its consumer', (cost) => cost.logs),
      row('**total**', (cost) => cost.total, true),
    ],
    ['left', 'right', 'right'],
  );
}

/** docs/cost.md's region: the table, one subscriber's cost by component, and what the figures assume. */
export function fanOutRegion(): string {
  const ten = {
    ours: fanOutCost('receiverSends', 10),
    sns: fanOutCost('snsTopic', 10),
  };
  const publish = PRICES.sns.perPublishRequest * 1e6;
  const notes = [
    `**Shared by every subscriber**: the front door, the receiver Lambda and their logs, ${dollars(sharedCostPerMillion(BUSY, 'http-api'))} per million deliveries behind the HTTP API (the whole-stack columns above), ${dollars(sharedCostPerMillion(BUSY, 'function-url'))} behind a function URL (no request charge, no access log), whatever the mechanism (the receiver is billed ${ASSUMPTIONS.receiverMs} ms either way: it sends to the queues in parallel, so its duration is one round trip, not one per queue).`,
    `**Fan-out**: the receiver pays one SQS request per subscriber queue for every ${PRICES.sqs.meteredKiB} KB of body (${dollars(PRICES.sqs.perRequest * 1e6)} per million each). SNS bills the publish once per ${PRICES.sns.meteredKiB} KB (${dollars(publish)} per million) and nothing for deliveries to SQS; the SendMessage SNS makes into each queue is counted as free too, the reading most favourable to SNS. SNS's fan-out is cheaper from ${snsCheaperFrom()} subscribers on; at 10 it saves ${dollars(ten.ours.fanOut - ten.sns.fanOut)} per million deliveries, ${n((100 * (ten.ours.total - ten.sns.total)) / ten.ours.total)}% of the whole stack's ${dollars(ten.ours.total)}. If SQS does bill SNS's sends, SNS costs ${dollars(publish)} per million deliveries more than ours at every subscriber count.`,
    '**Field filters** cost nothing in either mechanism (the receiver checks the fields itself; SNS would filter on a message attribute the receiver sets, which SNS does not bill, where filtering on the body is billed per GB scanned). A subscriber that wants only some fields pays its own cost only for the deliveries that hold them, and ours pays the SQS send only for those.',
    `**Larger deliveries**: both mechanisms pay per ${PRICES.sqs.meteredKiB} KB, ours once per queue, SNS once per publish.`,
    "Each subscriber also adds fixed monthly costs: its alarms, its row of the dashboard, and its consumer's custom metrics (every consumer metric carries a `Subscriber` dimension) — see the fixed costs below.",
  ];
  return [
    fanOutTable(),
    '',
    'What one subscriber spends on its own copy of the deliveries, by component:',
    '',
    subscriberTable(),
    '',
    notes.map((note) => wrapItem(`- ${note}`)).join('\n'),
  ].join('\n');
}
