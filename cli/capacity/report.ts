/**
 * The planner's report: the model's plan (contract/capacity.ts) with its cost, as markdown (what
 * `--markdown` prints and docs/capacity.md holds) or as JSON; report-text.ts lays it out for a terminal.
 */

import {
  type CapacityPlan,
  DEFAULT_CLAIM_WRITE_MS,
  DEFAULT_HANDLER_MS,
  DEFAULT_RECEIVER_MS,
  EVENT_SOURCE_MAX_CONCURRENCY,
  type ExpectedPeak,
  type LanePlan,
  MAX_SIZED_UTILISATION,
  P99_WAIT_TARGET_SECONDS,
  planCapacity,
} from 'whatsapp-webhook-dedup/contract/capacity';
import { markdownTable } from '../tools/markdown-table.ts';
import { type PeakCost, peakCost } from './cost.ts';
import type { PlannedPipeline } from './pipeline.ts';

export interface CapacityReport {
  readonly peak: ExpectedPeak;
  readonly assumptions: {
    readonly handlerMs: { readonly message: number; readonly status: number };
    readonly claimWriteMs: number;
    readonly receiverMs: number;
  };
  readonly plan: CapacityPlan;
  readonly cost: PeakCost;
  /** Every limit carries the peak. */
  readonly carries: boolean;
}

export function capacityReport(peak: ExpectedPeak, pipeline: PlannedPipeline): CapacityReport {
  const plan = planCapacity(peak, pipeline);
  return {
    peak,
    assumptions: {
      handlerMs: { ...DEFAULT_HANDLER_MS, ...pipeline.handlerMs },
      claimWriteMs: pipeline.claimWriteMs ?? DEFAULT_CLAIM_WRITE_MS,
      receiverMs: pipeline.receiverMs ?? DEFAULT_RECEIVER_MS,
    },
    plan,
    cost: peakCost(plan, pipeline),
    carries: plan.problems.length === 0,
  };
}

/**
 * JSON of the report. `null` where the model has no figure: the wait and backlog of a lane that cannot keep up,
 * a concurrency that no value up to the event source's maximum would meet.
 */
export function reportJson(report: CapacityReport): string {
  return JSON.stringify(
    {
      peak: report.peak,
      endpoint: report.plan.endpoint,
      traffic: report.plan.traffic,
      assumptions: report.assumptions,
      receiverConcurrency: report.plan.receiverConcurrency,
      sizing: report.plan.sizing,
      claimWriteUnitsPerSecond: report.plan.claimWriteUnitsPerSecond,
      limits: report.plan.limits,
      lanes: report.plan.lanes,
      cost: report.cost,
      problems: report.plan.problems,
      carries: report.carries,
    },
    (_key, value) =>
      value === undefined || (typeof value === 'number' && !Number.isFinite(value)) ? null : value,
    2,
  );
}

export const count = (value: number) => Math.round(value).toLocaleString('en-US');
export const money = (value: number) =>
  `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

export function duration(seconds: number | undefined): string {
  if (seconds === undefined) return '∞';
  if (seconds < 1) return `${Number((seconds * 1000).toFixed(1))} ms`;
  return `${Number(seconds.toFixed(2))} s`;
}

function laneRow(lane: LanePlan): string[] {
  const backlog =
    lane.backlogEvents === undefined
      ? `grows ${count(lane.backlogGrowthPerSecond)}/s`
      : Number(lane.backlogEvents.toFixed(1)).toLocaleString('en-US');
  const concurrency =
    lane.usableConcurrency === lane.maxConcurrency
      ? String(lane.maxConcurrency)
      : `${lane.maxConcurrency} (usable ${lane.usableConcurrency})`;
  const batching = lane.ordered
    ? `${lane.batchSize}, FIFO`
    : `${lane.batchSize}, window ${lane.batchingWindowSeconds} s`;
  return [
    lane.subscriber,
    lane.lane,
    count(lane.eventsPerSecond),
    concurrency,
    batching,
    String(Number(lane.batchFill.toFixed(1))),
    duration(lane.batchSeconds),
    duration(lane.fullBatchSeconds),
    count(lane.drainPerSecond),
    String(Number(lane.utilisation.toFixed(3))),
    backlog,
    duration(lane.meanWaitSeconds),
    duration(lane.p99WaitSeconds),
    lane.neededConcurrency === undefined ? 'none' : String(lane.neededConcurrency),
  ];
}

/** The door the plan is for, as the reports name it. */
export function frontDoorName(plan: CapacityPlan): string {
  return plan.endpoint === 'function-url'
    ? "the receiver's function URL (its reserved concurrency throttles)"
    : 'an API Gateway HTTP API (its route throttles)';
}

/** The door's throttle that carries the peak: the route's rate and burst, or the receiver's reservation. */
export function doorSizing(plan: CapacityPlan, code: (name: string) => string): string {
  const z = plan.sizing;
  return plan.endpoint === 'function-url'
    ? `${code('receiverReservedConcurrency')} ${count(z.receiverReservedConcurrency)}`
    : `${code('throttlingRateLimit')} ${count(z.throttlingRateLimit)}, ${code('throttlingBurstLimit')} ${count(z.throttlingBurstLimit)}`;
}

function sizingLine(plan: CapacityPlan): string {
  const z = plan.sizing;
  const lanes = z.maxConcurrency
    .map(
      (entry) =>
        `${entry.subscriber} ${entry.lane} lane ${entry.value ?? `more than ${count(EVENT_SOURCE_MAX_CONCURRENCY)}`}`,
    )
    .join(', ');
  return `**The smallest settings that carry this peak**: ${doorSizing(plan, (name) => `\`${name}\``)}; \`maxConcurrency\` per lane: ${lanes}; claim table warm throughput ${count(z.warmWriteUnitsPerSecond)} WU/s; ${count(z.lambdaConcurrency)} Lambda executions of the account's quota.`;
}

export function reportMarkdown(report: CapacityReport): string {
  const { plan, assumptions, cost } = report;
  const t = plan.traffic;
  const lines = [
    `**Peak**: ${t.numbers} number${t.numbers === 1 ? '' : 's'} × (3 × ${count(report.peak.messagesPerSecond)} outbound + 1 × ${count(t.inboundPerSecond / t.numbers)} inbound messages/s) = **${count(t.postsPerSecond)} webhook POSTs/s**: ${count(t.statusesPerSecond)} statuses/s and ${count(t.inboundPerSecond)} inbound messages/s, ${count(t.activeConversations)} active conversations, through ${frontDoorName(plan)}. Assumed: handlers of ${assumptions.handlerMs.message} ms per message and ${assumptions.handlerMs.status} ms per status, ${assumptions.claimWriteMs} ms per claim-table write, ${assumptions.receiverMs} ms per receiver invocation.`,
    '',
    markdownTable(
      ['#', 'limit', 'setting or quota', 'allows', 'needs', 'carries'],
      plan.limits.map((limit, index) => {
        const needs = Number.isFinite(limit.needs)
          ? count(limit.needs)
          : `more than ${count(EVENT_SOURCE_MAX_CONCURRENCY)}`;
        const how = limit.formula === undefined ? '' : ` (${limit.formula})`;
        return [
          String(index + 1),
          `${limit.name}${how}`,
          `\`${limit.setting}\``,
          `${count(limit.allows)} ${limit.unit}`,
          `${needs} ${limit.unit}`,
          limit.carries ? 'yes' : '**no**',
        ];
      }),
      ['right', 'left', 'left', 'right', 'right', 'left'],
    ),
    '',
    `Per lane, the M/M/c queue of batches (contract/erlang-c.ts): λ events/s, c concurrent batches, S a poller's time for a full batch (the event source's receive and delete, the invoke, the records' CPU one after the other, the claim writes and the slowest of the batch's handlers), ρ = λ·S / (c·batch), the queued events leaving in full batches; the wait runs from enqueue to the batch's start. An invocation at the lane's fill lasts what Lambda bills. The last column is the smallest \`maxConcurrency\` that keeps the p99 wait within ${duration(P99_WAIT_TARGET_SECONDS.message)} on a message lane and ${duration(P99_WAIT_TARGET_SECONDS.status)} on a status lane, at a utilisation ρ of at most ${MAX_SIZED_UTILISATION}.`,
    '',
    markdownTable(
      [
        'subscriber',
        'lane',
        'λ events/s',
        'maxConcurrency',
        'batch',
        'fill',
        'invocation',
        'S',
        'drains events/s',
        'ρ',
        'backlog (events)',
        'mean wait',
        'p99 wait',
        'c sized',
      ],
      plan.lanes.map(laneRow),
      [
        'left',
        'left',
        'right',
        'right',
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
      ],
    ),
    '',
    `**Cost at the peak** (cli/cost/prices.ts): ${money(cost.perHour.total)} per hour (API Gateway ${money(cost.perHour.apiGateway)}, receiver ${money(cost.perHour.receiver)}, SQS ${money(cost.perHour.sqs)}, consumers ${money(cost.perHour.consumers)}, DynamoDB ${money(cost.perHour.dynamoDb)}, logs ${money(cost.perHour.logs)}); ${money(cost.perMonth)} per month were the peak to last all month.`,
    '',
    plan.problems.length === 0
      ? '**Every limit carries this peak.**'
      : ['**Cannot carry this peak:**', '', ...plan.problems.map((problem) => `- ${problem}`)].join('\n'),
    '',
    sizingLine(plan),
  ];
  return lines.join('\n');
}
