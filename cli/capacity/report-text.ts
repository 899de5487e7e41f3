/**
 * The planner's report for a terminal: aligned text within 100 columns, one block per limit and per lane,
 * paragraphs wrapped, colour only when asked (a TTY without NO_COLOR). The same figures as the markdown the docs
 * hold (report.ts), in another layout.
 */
import { styleText } from 'node:util';
import {
  EVENT_SOURCE_MAX_CONCURRENCY,
  type LanePlan,
  MAX_SIZED_UTILISATION,
  P99_WAIT_TARGET_SECONDS,
} from 'whatsapp-webhook-dedup/contract/capacity';
import { wrap } from '../tools/markdown-table.ts';
import { type CapacityReport, count, doorSizing, duration, frontDoorName, money } from './report.ts';

export const TERMINAL_WIDTH = 100;

type Style = (format: 'bold' | 'red' | 'green' | 'dim', text: string) => string;

const plain: Style = (_format, text) => text;
// Whether to colour is decided from the report's own stream (the caller's), not from process.stdout.
const coloured: Style = (format, text) => styleText(format, text, { validateStream: false });

/** Wrapped at the terminal's width, continuation lines indented by `indent`. */
function paragraph(text: string, indent = 0): string {
  return wrap(text, TERMINAL_WIDTH - indent)
    .split('\n')
    .map((line) => ' '.repeat(indent) + line)
    .join('\n');
}

function limitBlock(report: CapacityReport, style: Style): string[] {
  const rows = report.plan.limits.map((limit) => ({
    limit,
    allows: `${count(limit.allows)} ${limit.unit}`,
    needs: `${Number.isFinite(limit.needs) ? count(limit.needs) : `> ${count(EVENT_SOURCE_MAX_CONCURRENCY)}`} ${limit.unit}`,
  }));
  const allowsWidth = Math.max('allows'.length, ...rows.map((row) => row.allows.length)) + 2;
  const needsWidth = Math.max('needs'.length, ...rows.map((row) => row.needs.length)) + 2;
  // '## ' + name + figures + '  carries'
  const nameWidth = TERMINAL_WIDTH - 4 - allowsWidth - needsWidth - '  carries'.length;
  const lines = [
    style(
      'bold',
      `${'#'.padStart(2)}  ${'limit'.padEnd(nameWidth)}${'allows'.padStart(allowsWidth)}` +
        `${'needs'.padStart(needsWidth)}  carries`,
    ),
  ];
  rows.forEach(({ limit, allows, needs }, index) => {
    const [first = '', ...rest] = wrap(limit.name, nameWidth - 1).split('\n');
    const carries = limit.carries ? style('green', 'yes') : style('red', 'NO');
    lines.push(
      `${String(index + 1).padStart(2)}  ${first.padEnd(nameWidth)}${allows.padStart(allowsWidth)}` +
        `${needs.padStart(needsWidth)}  ${carries}`,
    );
    for (const line of rest) lines.push(`    ${line}`);
    lines.push(style('dim', paragraph(`set by: ${limit.setting}`, 4)));
    if (limit.formula !== undefined) lines.push(style('dim', paragraph(`how: ${limit.formula}`, 4)));
  });
  return lines;
}

function laneBlock(lane: LanePlan, style: Style): string[] {
  const concurrency =
    lane.usableConcurrency === lane.maxConcurrency
      ? `maxConcurrency ${lane.maxConcurrency}`
      : `maxConcurrency ${lane.maxConcurrency} (usable ${lane.usableConcurrency})`;
  const batching = lane.ordered
    ? `batch ${lane.batchSize}, FIFO`
    : `batch ${lane.batchSize}, window ${lane.batchingWindowSeconds} s`;
  const backlog =
    lane.backlogEvents === undefined
      ? `grows ${count(lane.backlogGrowthPerSecond)} events/s`
      : `${Number(lane.backlogEvents.toFixed(1)).toLocaleString('en-US')} events`;
  const sized = lane.neededConcurrency === undefined ? 'none does' : String(lane.neededConcurrency);
  return [
    style('bold', `${lane.subscriber}, ${lane.lane} lane: ${count(lane.eventsPerSecond)} events/s`),
    paragraph(
      `${concurrency}, ${batching}; a batch fills to ${Number(lane.batchFill.toFixed(1))}, an invocation ` +
        `lasts ${duration(lane.batchSeconds)}, a full batch ${duration(lane.fullBatchSeconds)}; drains ` +
        `${count(lane.drainPerSecond)} events/s at utilisation ${Number(lane.utilisation.toFixed(3))}`,
      4,
    ),
    paragraph(
      `backlog ${backlog}, wait mean ${duration(lane.meanWaitSeconds)}, p99 ${duration(lane.p99WaitSeconds)}; ` +
        `smallest maxConcurrency for the target: ${sized}`,
      4,
    ),
  ];
}

export function reportText(report: CapacityReport, options: { colour: boolean }): string {
  const style = options.colour ? coloured : plain;
  const { plan, assumptions, cost } = report;
  const t = plan.traffic;
  const lines = [
    paragraph(
      `Peak: ${t.numbers} number${t.numbers === 1 ? '' : 's'} × (3 × ${count(report.peak.messagesPerSecond)} ` +
        `outbound + 1 × ${count(t.inboundPerSecond / t.numbers)} inbound messages/s) = ` +
        `${count(t.postsPerSecond)} webhook POSTs/s: ${count(t.statusesPerSecond)} statuses/s and ` +
        `${count(t.inboundPerSecond)} inbound messages/s, ${count(t.activeConversations)} active conversations, ` +
        `through ${frontDoorName(plan)}.`,
    ),
    paragraph(
      `Assumed: handlers of ${assumptions.handlerMs.message} ms per message and ${assumptions.handlerMs.status} ms ` +
        `per status, ${assumptions.claimWriteMs} ms per claim-table write, ${assumptions.receiverMs} ms per ` +
        'receiver invocation.',
    ),
    '',
    style('bold', 'Limits on the path'),
    ...limitBlock(report, style),
    paragraph(
      "A limit's needs can exceed the peak's mean: the claim table's warm throughput must take what the " +
        'lanes write when they drain a backlog at full concurrency (after an outage or a campaign), not the ' +
        'steady rate, or the drain is throttled.',
    ),
    '',
    style('bold', 'Lanes'),
    paragraph(
      'Each lane is an M/M/c queue of batches: the wait runs from enqueue to the batch start; the target is a ' +
        `p99 wait within ${duration(P99_WAIT_TARGET_SECONDS.message)} on a message lane and ` +
        `${duration(P99_WAIT_TARGET_SECONDS.status)} on a status lane, at utilisation ${MAX_SIZED_UTILISATION} ` +
        'at most.',
    ),
    ...plan.lanes.flatMap((lane) => laneBlock(lane, style)),
    '',
    paragraph(
      `Cost at the peak: ${money(cost.perHour.total)} per hour (API Gateway ${money(cost.perHour.apiGateway)}, ` +
        `receiver ${money(cost.perHour.receiver)}, SQS ${money(cost.perHour.sqs)}, consumers ` +
        `${money(cost.perHour.consumers)}, DynamoDB ${money(cost.perHour.dynamoDb)}, logs ` +
        `${money(cost.perHour.logs)}); ${money(cost.perMonth)} per month were the peak to last all month.`,
    ),
    '',
    plan.problems.length === 0
      ? style('green', 'Every limit carries this peak.')
      : [
          style('red', 'Cannot carry this peak:'),
          ...plan.problems.map((problem) => paragraph(`- ${problem}`, 2).replace(/^ {2}/, '')),
        ].join('\n'),
    '',
    style('bold', 'The smallest settings that carry this peak'),
    ...smallestSettings(report).map((line) => paragraph(line, 2)),
  ];
  return lines.join('\n');
}

function smallestSettings({ plan }: CapacityReport): string[] {
  const z = plan.sizing;
  return [
    doorSizing(plan, (name) => name),
    ...z.maxConcurrency.map(
      (entry) =>
        `${entry.subscriber}, ${entry.lane} lane: maxConcurrency ` +
        `${entry.value ?? `more than ${count(EVENT_SOURCE_MAX_CONCURRENCY)}`}`,
    ),
    `claim table warm throughput ${count(z.warmWriteUnitsPerSecond)} WU/s`,
    `${count(z.lambdaConcurrency)} Lambda executions of the account's quota`,
  ];
}
