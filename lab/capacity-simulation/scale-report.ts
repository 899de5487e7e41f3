/**
 * A scenario run's report: the figures that say whether the defaults carry it (429s, ack latency, per-lane
 * waits, backlogs and their drain, throttled writes, DLQ arrivals, duplicates absorbed, effects, dollars),
 * its verdicts, and the planner's prediction beside the simulation's figure with the reason for every
 * difference over 20 %.
 */

import { defaultPipeline } from '../../cli/capacity/pipeline.ts';
import { capacityReport } from '../../cli/capacity/report.ts';
import { PRICES } from '../../cli/cost/prices.ts';
import { ASSUMPTIONS } from '../../cli/cost/stack-cost.ts';
import { markdownTable } from '../../cli/tools/markdown-table.ts';
import { type ExpectedPeak, sizedConcurrency } from '../../contract/capacity.ts';
import { DEFAULT_CONSUMER_MEMORY_MB, DEFAULT_RECEIVER_MEMORY_MB } from '../../lib/defaults.ts';
import { backlogPeak, type ScenarioMeasures } from './measures.ts';
import type { ScenarioName } from './scenarios.ts';
import type { ScenarioConfig } from './simulation.ts';
import { type Verdict, verdicts } from './verdicts.ts';

export interface LaneFigures {
  readonly waitP50Ms: number;
  readonly waitP99Ms: number;
  readonly largestBacklog: number;
  /** Seconds from the largest backlog until it fell to a tenth of it; null: it never did. */
  readonly drainSeconds: number | null;
}

export interface Comparison {
  readonly metric: ComparedMetric;
  readonly planner: number;
  readonly simulation: number;
  /** |simulation − planner| / planner; 1 where the planner says 0 and the simulation does not. */
  readonly difference: number;
  readonly reason: string | null;
}

export interface ScaleReport {
  readonly scenario: ScenarioName;
  readonly short: boolean;
  readonly seed: number;
  readonly virtualSeconds: number;
  readonly wallSeconds: number;
  readonly posts: number;
  readonly responses429: number;
  readonly responses5xx: number;
  readonly ackP50Ms: number;
  readonly ackP99Ms: number;
  readonly lanes: { readonly message: LaneFigures; readonly status: LaneFigures };
  readonly throttledWriteAttempts: number;
  readonly writesFailedAfterRetries: number;
  readonly dlqArrivals: number;
  /**
   * Updates accepted again (Meta's re-sends, retries of stored POSTs) plus the copies the FIFO queue dropped by
   * their deduplication id: a message re-sent within the FIFO window counts in both.
   */
  readonly duplicatesAbsorbed: number;
  readonly effects: { readonly events: number; readonly effected: number; readonly violations: number };
  readonly lambdaPeak: {
    readonly account: number;
    readonly receiver: number;
    readonly status: number;
    readonly message: number;
  };
  readonly dollars: { readonly total: number; readonly perMillionEvents: number };
  readonly verdicts: readonly Verdict[];
  readonly comparisons: readonly Comparison[];
  readonly holds: boolean;
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

function lane(m: ScenarioMeasures, name: 'message' | 'status'): LaneFigures {
  const { peak, drainSeconds } = backlogPeak(m.backlog[name]);
  return {
    waitP50Ms: round(m.waits[name].percentile(50)),
    waitP99Ms: round(m.waits[name].percentile(99)),
    largestBacklog: peak,
    drainSeconds: drainSeconds ?? null,
  };
}

/** What the run's requests cost, from docs/cost.md's price table and its log assumptions. */
export function simulatedDollars(m: ScenarioMeasures): number {
  const gbSeconds = (ms: number, memoryMb: number) => (ms / 1000) * (memoryMb / 1024);
  const answered = m.sender.posts - m.sender.throttled429;
  const lambda =
    (m.lambda.receiverInvocations + m.lambda.consumerInvocations) * PRICES.lambda.perRequest +
    (gbSeconds(m.lambda.receiverMs, DEFAULT_RECEIVER_MEMORY_MB) +
      gbSeconds(m.lambda.consumerMs, DEFAULT_CONSUMER_MEMORY_MB)) *
      PRICES.lambda.perGbSecond;
  const logsKb =
    answered * (ASSUMPTIONS.receiverLogKB + ASSUMPTIONS.apiAccessLogKB) +
    m.lambda.consumerInvocations * ASSUMPTIONS.busy.consumerLogKB;
  return (
    answered * PRICES.apiGateway.perRequest +
    lambda +
    m.sqsRequests.standard * PRICES.sqs.perRequest +
    m.sqsRequests.fifo * PRICES.sqs.fifoPerRequest +
    m.dynamoDb.writes * PRICES.dynamoDb.perWriteRequestUnit +
    m.dynamoDb.reads * PRICES.dynamoDb.perReadRequestUnit +
    (logsKb / 1e6) * PRICES.cloudWatch.logsPerGbIngested
  );
}

export const COMPARED_METRICS = [
  'message-lane p99 wait (ms)',
  'status-lane p99 wait (ms)',
  'claim-table writes per event',
  'receiver concurrency',
  'consumer concurrency',
  'dollars per million events',
] as const;
export type ComparedMetric = (typeof COMPARED_METRICS)[number];

export type Direction = 'higher' | 'lower';

/**
 * Why the simulation differs from the planner, per metric and direction (the simulation's figure higher or lower
 * than the planner's): a test fails when a difference over 20 % has none. Each names what the simulation has and
 * the planner's closed form leaves out.
 */
export const DIFFERENCE_REASONS: Readonly<Record<ComparedMetric, Partial<Record<Direction, string>>>> = {
  'message-lane p99 wait (ms)': {
    higher:
      "Where the planner's lane stays far below its concurrency it predicts next to no wait; the simulated wait also holds the path before a batch starts: the receiver's enqueue before the record is visible, the event source's receive, Lambda's invoke and the CPU of the records ahead in the batch.",
    lower:
      "The planner's M/M/c takes a batch's duration as exponential and sizes `maxConcurrency` to put that pessimist's p99 just under the target; a simulated batch is fixed parts (receive, invoke, CPU, claims, delete) plus the slowest of its handlers, far less variable, so fewer batches wait.",
  },
  'status-lane p99 wait (ms)': {
    higher:
      "The planner is the steady state at the scenario's mean rate; the simulated statuses come in bursts that the rate hides (a campaign's 300,000 statuses within minutes, Meta's retries after an outage), and a backlog's wait is its drain time, which no steady state has.",
    lower:
      "The planner's M/M/c takes a batch's duration as exponential and adds the whole batching window to the p99; a simulated batch is fixed parts plus the slowest of its handlers, far less variable, and at the peak a poller's batch fills long before its window ends.",
  },
  'claim-table writes per event': {
    higher:
      "The planner counts the writes of a fresh event (2 per message, 3 per status with the ledger); the simulation counts every write the real code sent, duplicates' failed conditional writes and retried writes included.",
    lower:
      'The planner counts the writes of every event of the peak; the simulation counts those sent by the end of the run, and the events still queued then have sent none.',
  },
  'receiver concurrency': {
    lower:
      'The planner assumes 40 ms per receiver invocation (docs/cost.md); the simulated receiver takes its measured CPU (lab/bench/results.json) plus one SQS send, and the simulation reports the most executions held at once, not the mean.',
  },
  'consumer concurrency': {
    lower:
      "The planner reports each lane's maxConcurrency (or the concurrency its p99 needs); the simulation reports the most executions the lanes held at once, which the event source's ramp (5 at first, 300 more per minute) and the lanes' load keep lower.",
  },
  'dollars per million events': {
    higher:
      "The planner prices the steady peak; the simulation also pays for what a burst or an outage brings: Meta's retries and re-sends, answered and claimed again, and the smaller batches of a lane that is not full.",
    lower:
      'The planner prices the receiver at 40 ms and every consumer batch at its modelled duration; the simulation prices what ran: the measured receiver and consumer durations, the SQS calls made (empty receives left out), the write units consumed.',
  },
};

/** The reason for a difference, in its direction; `null` within a fifth. */
export function differenceReason(
  metric: ComparedMetric,
  planner: number,
  simulation: number,
  difference: number,
) {
  if (difference <= 0.2) return null;
  return DIFFERENCE_REASONS[metric][simulation > planner ? 'higher' : 'lower'] ?? null;
}

function plannerPeak(config: ScenarioConfig): ExpectedPeak {
  const sum = (pick: (n: ScenarioConfig['numbers'][number]) => number) =>
    config.numbers.reduce((total, number) => total + pick(number), 0);
  return {
    messagesPerSecond: sum((n) => n.outboundPerSecond),
    inboundPerSecond: sum((n) => n.inboundPerSecond),
    activeConversations: sum((n) => n.conversations),
  };
}

export function compareWithPlanner(
  config: ScenarioConfig,
  m: ScenarioMeasures,
  dollars: number,
): Comparison[] {
  const report = capacityReport(plannerPeak(config), defaultPipeline());
  const laneOf = (name: 'message' | 'status') => report.plan.lanes.find((entry) => entry.lane === name);
  const plannerEvents = report.plan.lanes.reduce((total, entry) => total + entry.eventsPerSecond, 0);
  const events = Math.max(1, m.effects.keys);
  const pairs: [ComparedMetric, number | undefined, number][] = [
    [
      'message-lane p99 wait (ms)',
      (laneOf('message')?.p99WaitSeconds ?? Number.NaN) * 1000,
      m.waits.message.percentile(99),
    ],
    [
      'status-lane p99 wait (ms)',
      (laneOf('status')?.p99WaitSeconds ?? Number.NaN) * 1000,
      m.waits.status.percentile(99),
    ],
    [
      'claim-table writes per event',
      report.plan.claimWriteUnitsPerSecond / plannerEvents,
      m.dynamoDb.writes / events,
    ],
    ['receiver concurrency', report.plan.receiverConcurrency, m.lambda.receiverPeak],
    [
      'consumer concurrency',
      report.plan.lanes.reduce((total, entry) => total + sizedConcurrency(entry), 0),
      m.lambda.statusPeak + m.lambda.messagePeak,
    ],
    [
      'dollars per million events',
      (report.cost.perHour.total / (plannerEvents * 3600)) * 1e6,
      (dollars / events) * 1e6,
    ],
  ];
  return pairs.map(([metric, planner = Number.NaN, simulation]) => {
    // Where the planner predicts nothing (a p99 wait of zero), any figure at all is a whole difference.
    const difference =
      planner > 0 ? Math.abs(simulation - planner) / planner : simulation === planner ? 0 : 1;
    return {
      metric,
      planner: round(planner, 2),
      simulation: round(simulation, 2),
      difference: round(difference, 3),
      reason: differenceReason(metric, planner, simulation, difference),
    };
  });
}

export function scaleReport(
  name: ScenarioName,
  config: ScenarioConfig,
  short: boolean,
  m: ScenarioMeasures,
): ScaleReport {
  const dollars = simulatedDollars(m);
  const found = verdicts(name, m);
  return {
    scenario: name,
    short,
    seed: m.seed,
    virtualSeconds: round(m.virtualMs / 1000),
    wallSeconds: round(m.wallMs / 1000),
    posts: m.sender.posts,
    responses429: m.sender.throttled429,
    responses5xx: m.sender.serverErrors,
    ackP50Ms: round(m.ackLatencies.percentile(50)),
    ackP99Ms: round(m.ackLatencies.percentile(99)),
    lanes: { message: lane(m, 'message'), status: lane(m, 'status') },
    throttledWriteAttempts: m.dynamoDb.throttledAttempts,
    writesFailedAfterRetries: m.dynamoDb.throttledCalls,
    dlqArrivals: m.deadLetters.statusLane + m.deadLetters.messageLane + m.deadLetters.quarantined,
    duplicatesAbsorbed: m.duplicateAcceptances + m.fifoDeduplicated,
    effects: { events: m.effects.keys, effected: m.effects.effected, violations: m.effects.violations },
    lambdaPeak: {
      account: m.lambda.peak,
      receiver: m.lambda.receiverPeak,
      status: m.lambda.statusPeak,
      message: m.lambda.messagePeak,
    },
    dollars: {
      total: round(dollars, 4),
      perMillionEvents: round((dollars / Math.max(1, m.effects.keys)) * 1e6, 2),
    },
    verdicts: found,
    comparisons: name === 'outage' ? [] : compareWithPlanner(config, m, dollars),
    holds: found.every((verdict) => verdict.holds),
  };
}

const count = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number) => `${round(value)} ms`;

export function scaleReportMarkdown(report: ScaleReport): string {
  const { message, status } = report.lanes;
  const drain = (figures: LaneFigures) =>
    figures.drainSeconds === null ? 'never' : `${figures.drainSeconds} s`;
  const figures = markdownTable(
    ['figure', 'value'],
    [
      ['webhook POSTs (first sends, retries, re-sends)', count(report.posts)],
      ['429s', count(report.responses429)],
      ['5xx and timeouts', count(report.responses5xx)],
      ['ack latency p50 / p99', `${ms(report.ackP50Ms)} / ${ms(report.ackP99Ms)}`],
      ['message lane wait p50 / p99', `${ms(message.waitP50Ms)} / ${ms(message.waitP99Ms)}`],
      ['status lane wait p50 / p99', `${ms(status.waitP50Ms)} / ${ms(status.waitP99Ms)}`],
      [
        'largest backlog, message lane (down to a tenth of it in)',
        `${count(message.largestBacklog)} (${drain(message)})`,
      ],
      [
        'largest backlog, status lane (down to a tenth of it in)',
        `${count(status.largestBacklog)} (${drain(status)})`,
      ],
      [
        'throttled write attempts (failed after the SDK retries)',
        `${count(report.throttledWriteAttempts)} (${count(report.writesFailedAfterRetries)})`,
      ],
      ['DLQ arrivals', count(report.dlqArrivals)],
      ['duplicates absorbed (accepted again + FIFO-deduplicated copies)', count(report.duplicatesAbsorbed)],
      [
        'effects (events; not exactly once)',
        `${count(report.effects.effected)} (${count(report.effects.events)}; ${count(report.effects.violations)})`,
      ],
      [
        'Lambda executions at most (receiver, status, message)',
        `${report.lambdaPeak.account} (${report.lambdaPeak.receiver}, ${report.lambdaPeak.status}, ${report.lambdaPeak.message})`,
      ],
      [
        'dollars (per million events)',
        `$${report.dollars.total.toFixed(2)} ($${report.dollars.perMillionEvents.toFixed(2)})`,
      ],
    ],
    ['left', 'right'],
  );
  const verdictLines = report.verdicts.map(
    (v) => `- ${v.holds ? 'holds' : '**fails**'}: ${v.name} (${v.detail})`,
  );
  const lines = [
    `**${report.scenario}${report.short ? ' (short)' : ''}**, seed ${report.seed}: ${round(report.virtualSeconds)} s of virtual time in ${round(report.wallSeconds)} s.`,
    '',
    figures,
    '',
    ...verdictLines,
  ];
  if (report.comparisons.length > 0) {
    lines.push(
      '',
      markdownTable(
        ['metric', 'planner', 'simulation', 'difference'],
        report.comparisons.map((c) => [
          c.metric,
          String(c.planner),
          String(c.simulation),
          `${Math.round(c.difference * 100)} %${c.reason === null ? '' : ' ¹'}`,
        ]),
        ['left', 'right', 'right', 'right'],
      ),
    );
    const reasons = report.comparisons.filter((c) => c.reason !== null);
    if (reasons.length > 0) lines.push('', ...reasons.map((c) => `¹ ${c.metric}: ${c.reason}`));
  }
  return lines.join('\n');
}
