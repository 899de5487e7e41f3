/**
 * The retry budget of a set of settings, as docs/consumer.md prints it ("Retry budget"): the delays receive
 * by receive, the outage a record rides out, and how the longest stay compares with the retentions. Every
 * figure comes from contract/retry-budget.ts; `npm run retry-budget` prints it, `-- --write-docs` writes it.
 */

import { markdownTable } from '../../cli/tools/markdown-table.ts';
import { MIN_ORDERED_LANE_OUTAGE_RIDDEN_OUT_SECONDS, resolveMessageLane } from '../../contract/lanes.ts';
import {
  backoffCeilingSeconds,
  backoffFloorSeconds,
  longestBackoffSeconds,
  longestTimeInQueueSeconds,
  MIN_OUTAGE_RIDDEN_OUT_SECONDS,
  outageRiddenOutSeconds,
  receivesToRideOut,
} from '../../contract/retry-budget.ts';
import type { PipelineSettings } from '../../contract/settings.ts';

/** The region of docs/consumer.md that holds the defaults' budget. */
export const RETRY_BUDGET_REGION = 'retry-budget';
/** The region of docs/consumer.md that holds an ordered message lane's budget (contract/lanes.ts). */
export const ORDERED_LANE_RETRY_BUDGET_REGION = 'retry-budget-ordered-lane';

export interface RetryBudgetMarkdownOptions {
  /** The outage the budget must ride out (`resolveSettings`' minimum for these settings). */
  readonly outageToRideOutSeconds?: number;
  /** How a record leaves for the DLQ on its last failed receive. @default SQS redrive */
  readonly deadLetteredBy?: 'redrive' | 'consumer';
}

/** Meta retries an unacknowledged webhook for up to 7 days. */
const META_RETRY_DAYS = 7;
const DAY = 86_400;

export function retryBudgetMarkdown(
  settings: PipelineSettings,
  options: RetryBudgetMarkdownOptions = {},
): string {
  const { maxReceiveCount, retryBaseDelaySeconds, retryMaxDelaySeconds } = settings;
  const outage = options.outageToRideOutSeconds ?? MIN_OUTAGE_RIDDEN_OUT_SECONDS;
  const byConsumer = options.deadLetteredBy === 'consumer';
  const longest = longestTimeInQueueSeconds(settings);
  const setting = `\`maxReceiveCount\` ${maxReceiveCount}, \`retryBaseDelaySeconds\` ${retryBaseDelaySeconds}, \`retryMaxDelaySeconds\` ${retryMaxDelaySeconds}`;
  return [
    `With ${setting}:`,
    '',
    markdownTable(
      ['failed receive', 'delay before the next receive', 'next receive, counted from the first'],
      scheduleRows(settings, byConsumer),
    ),
    '',
    `- **Outage ridden out**: ${duration(outageRiddenOutSeconds(settings))} at the shortest draws (every delay at its floor): a record whose first receive fails as a downstream outage starts is still retried that long after. Riding out ${duration(outage)} with these delays takes a \`maxReceiveCount\` of at least ${receivesToRideOut(outage, settings)}.`,
    byConsumer
      ? `- **In the DLQ** at the latest ${duration(longestBackoffSeconds(settings) - backoffCeilingSeconds(maxReceiveCount, settings))} after the first receive when every delay is the backoff's longest: the consumer moves the record there itself when its ${maxReceiveCount}th receive fails, and runs the conversation's next messages in the same invocation.`
      : `- **In the DLQ** at the latest ${duration(longestBackoffSeconds(settings))} after the first receive when every delay is the backoff's longest.`,
    `- **Longest stay in the queue**: ${duration(longest)}, had every receive ended in the cap (${duration(retryMaxDelaySeconds)}, which \`RetryLater\` may ask for from the first receive) after the longest invocation, or in the visibility timeout (${settings.visibilityTimeoutSeconds} s) — against \`queueRetentionDays\` ${settings.queueRetentionDays} (SQS deletes a message then, wherever its retries are), and \`deadLetterRetentionDays\` ${settings.deadLetterRetentionDays}, which the DLQ counts from the first enqueue: a record that used its whole budget still has ${duration(settings.deadLetterRetentionDays * DAY - longest)} in the DLQ. Meta's ${META_RETRY_DAYS}-day retry window plays no part: the receiver acknowledges a delivery once the queue holds it, so the queue's retention (never below ${META_RETRY_DAYS} days) is what bounds the retries.`,
  ].join('\n');
}

/** The budget of a default ordered message lane, as docs/consumer.md prints it ("Conversations"). */
export function orderedLaneRetryBudgetMarkdown(): string {
  const lane = resolveMessageLane({}, {}, undefined);
  if (lane === undefined) throw new Error('A subscriber of every field has a message lane.');
  return retryBudgetMarkdown(lane.settings, {
    outageToRideOutSeconds: MIN_ORDERED_LANE_OUTAGE_RIDDEN_OUT_SECONDS,
    deadLetteredBy: 'consumer',
  });
}

/** One row per receive while the delay grows, one for the run at the cap, one for the last receive. */
function scheduleRows(settings: PipelineSettings, byConsumer: boolean): string[][] {
  const rows: string[][] = [];
  let earliest = 0;
  let latest = 0;
  let capped: { first: number; floor: number; ceiling: number; from: [number, number] } | undefined;
  const last = settings.maxReceiveCount;
  for (let n = 1; n <= last; n++) {
    const floor = backoffFloorSeconds(n, settings);
    const ceiling = backoffCeilingSeconds(n, settings);
    earliest += floor;
    latest += ceiling;
    const next = n === last ? (byConsumer ? 'none: moved to the DLQ by the consumer' : 'the DLQ: ') : '';
    const atCap = ceiling === settings.retryMaxDelaySeconds && n < last;
    if (atCap && capped === undefined) capped = { first: n, floor, ceiling, from: [earliest, latest] };
    if (atCap && n < last - 1) continue;
    if (capped !== undefined) {
      const receives = capped.first === n ? `${n}` : `${capped.first}–${n}`;
      const each = capped.first === n ? '' : ' each';
      rows.push([
        receives,
        `${duration(capped.floor)} – ${duration(capped.ceiling)}${each}`,
        capped.first === n
          ? span(capped.from)
          : `receive ${capped.first + 1}: ${span(capped.from)}; … receive ${n + 1}: ${span([earliest, latest])}`,
      ]);
      capped = undefined;
      continue;
    }
    rows.push(
      n === last && byConsumer
        ? [`${n} (\`maxReceiveCount\`)`, '—', next]
        : [
            n === last ? `${n} (\`maxReceiveCount\`)` : `${n}`,
            `${duration(floor)} – ${duration(ceiling)}`,
            `${next}${span([earliest, latest])}`,
          ],
    );
  }
  return rows;
}

function span([earliest, latest]: [number, number]): string {
  return `${duration(earliest)} – ${duration(latest)}`;
}

/** Seconds as a reader counts them: `45 s`, `16 min`, `1.5 h`, `2.3 days`. */
export function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 2 * 3600) return `${round(seconds / 60)} min`;
  if (seconds < 2 * DAY) return `${round(seconds / 3600)} h`;
  return `${round(seconds / DAY)} days`;
}

function round(value: number): number {
  return Number(value.toFixed(1));
}
