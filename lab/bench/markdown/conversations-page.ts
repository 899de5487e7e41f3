/** docs/benchmarks.md's "Conversations" region and its summary's conversation figures, from lab/bench/results.json. */

import { markdownTable, n, times, wrap, wrapItem } from '../../../cli/tools/markdown-table.ts';
import { median, percentile } from '../../../cli/tools/statistics.ts';
import { conversationsInput } from '../conversations/conversations-input.ts';
import type { ConversationsResults, LatencySummary } from '../conversations/conversations-results.ts';
import { judgeGoals } from '../goals.ts';
import type { ResultsFile } from '../results.ts';

const NOT_MEASURED =
  'Not measured yet: `npm run bench -- --only conversations --merge` measures it and merges it into `lab/bench/results.json`.';

const ms = (value: number) => `${n(value, value < 100 ? 1 : 0)} ms`;
const whole = (value: number) => `${n(value)} ms`;
const spread = (s: LatencySummary) => `${ms(s.p25Ms)}–${ms(s.p75Ms)}`;
const range = (s: LatencySummary) => `${ms(s.minMs)}–${ms(s.maxMs)}`;
const verdict = (met: boolean | undefined) =>
  met === undefined ? 'not measured' : met ? 'met' : '**not met**';

/**
 * A lone reply's median over the pass-through floor's, and the storm's live p99 over the lone median, from the
 * samples: measurements of the local stack on one machine, no longer goals (lab/bench/goals.ts, "Retired goals").
 */
export function conversationsRatios(c: ConversationsResults): { reply: number; storm: number } {
  const lone = median(c.replyLatency.ours.samplesMs);
  return {
    reply: lone / median(c.replyLatency.floor.samplesMs),
    storm: percentile(c.storm.live.samplesMs, 99) / lone,
  };
}

interface LaneInfo {
  readonly messageLaneOrdered?: boolean;
  readonly messageLaneSettings?: {
    batchSize: number;
    maxBatchingWindowSeconds: number;
    maxConcurrency: number;
  };
  readonly settings?: { batchSize: number; maxBatchingWindowSeconds: number; maxConcurrency: number };
}

function lanesSentence(c: ConversationsResults): string {
  const subscriber = ((c.lanes.subscribers as LaneInfo[] | null) ?? [])[0];
  const status = subscriber?.settings;
  const message = subscriber?.messageLaneSettings;
  const lane = (s: NonNullable<LaneInfo['settings']>) =>
    `batches of up to ${s.batchSize}, a ${n(s.maxBatchingWindowSeconds)} s window, ${s.maxConcurrency} pollers`;
  if (status === undefined) return 'The local stack reported no subscriber.';
  return message === undefined
    ? `The stack ran one queue per subscriber, no message lane (${lane(status)}).`
    : `The stack ran its lanes: the message lane ${subscriber?.messageLaneOrdered ? 'FIFO, ordered by conversation' : 'a standard queue'} (${lane(message)}), the status lane (${lane(status)}).`;
}

/** The parameters `npm run bench` runs with (lab/bench/conversations/conversations-input.ts). */
export function conversationsParameters(): string {
  const i = conversationsInput();
  const items = [
    `Reply latency: ${i.warmupRuns} unmeasured, then ${i.loneRuns} measured lone messages on each stack, alternating; the next one ${whole(i.loneGapMs)} after the previous handler finished.`,
    `Storm: ${n(i.storm.statuses)} status deliveries paced at ${n(i.storm.perSec)}/s, at most ${i.storm.maxInFlight} POSTs awaiting an answer; a status handler of ${whole(i.storm.statusHandlerMs)}; ${i.storm.liveMessages} live messages spread evenly over the storm.`,
    `Order: ${n(i.order.pairs)} pairs, a new pair every ${whole(i.order.pairIntervalMs)}, the follow-up ${whole(i.order.gapMs)} after the question; handler times uniform in 0–${whole(i.order.maxHandlerMs)}, seed ${i.order.seed}.`,
    `A sent message is waited for at most ${n(i.settleTimeoutMs / 1000)} s.`,
  ];
  return items.map((item) => wrapItem(`- ${item}`)).join('\n');
}

export function conversationsRegion(r: ResultsFile): string {
  const c = r.conversations;
  if (c === undefined) return [conversationsParameters(), '', wrap(NOT_MEASURED)].join('\n');
  const v = judgeGoals(r);
  const ratios = conversationsRatios(c);
  const reply = c.replyLatency;
  const storm = c.storm;
  const order = c.order;
  return [
    conversationsParameters(),
    '',
    wrap(
      `Run of ${c.finishedAt.slice(0, 16).replace('T', ' ')} UTC, ${n(c.durationSeconds)} s, ${c.machine.cpus} vCPU; load average (1, 5, 15 min) ` +
        `${c.machine.loadAverageAtStart.join(', ')} at the start, ${c.machine.loadAverageAtEnd.join(', ')} at the end. ${lanesSentence(c)}`,
    ),
    '',
    `**Reply latency**: a lone inbound message, POST → handler start, ${reply.runs} runs on each stack, alternating.`,
    '',
    markdownTable(
      ['stack', 'median', 'p25–p75', 'min–max', "from the POST's 200: median (p25–p75)"],
      [
        [
          'local stack, defaults',
          `**${ms(reply.ours.medianMs)}**`,
          spread(reply.ours),
          range(reply.ours),
          `${ms(reply.oursAfterAnswer.medianMs)} (${spread(reply.oursAfterAnswer)})`,
        ],
        [
          'pass-through floor (no claim)',
          `**${ms(reply.floor.medianMs)}**`,
          spread(reply.floor),
          range(reply.floor),
          `${ms(reply.floorAfterAnswer.medianMs)} (${spread(reply.floorAfterAnswer)})`,
        ],
      ],
      ['left', 'right', 'right', 'right', 'right'],
    ),
    '',
    wrap(`${times(ratios.reply)} the floor.`),
    '',
    wrap(
      `**Storm**: ${n(storm.statuses)} status deliveries (one status per POST) sent at ${n(storm.statusesPerSec, 1)}/s ` +
        `(aimed at ${n(storm.targetPerSec)}/s), a status handler of ${n(storm.statusHandlerMs)} ms, ${storm.live.count} live messages spread over the storm, each from its own customer.`,
    ),
    '',
    markdownTable(
      ['figure', 'value'],
      [
        ["live messages' POST → handler start, p99", `**${ms(storm.live.p99Ms)}**`],
        [
          '… median (p25–p75, min–max)',
          `${ms(storm.live.medianMs)} (${spread(storm.live)}, ${range(storm.live)})`,
        ],
        ['… against the lone median', `**${times(ratios.storm)}**`],
        [
          "live messages from their POST's 200 to handler start, p99 (median)",
          `${ms(percentile(storm.liveAfterAnswer.samplesMs, 99))} (${ms(storm.liveAfterAnswer.medianMs)})`,
        ],
        [
          "status POSTs' answer, median and slowest",
          `${ms(storm.statusAckP50Ms)}, ${ms(storm.statusAckMaxMs)}`,
        ],
        ['POSTs not answered 200 (timeouts included)', n(storm.non200)],
        ['status handlers started by the last live message’s start', n(storm.statusesHandledByLastLive)],
      ],
      ['left', 'right'],
    ),
    '',
    wrap(
      `**Order**: ${n(order.pairs)} pairs from one customer each, the follow-up POSTed ${n(order.gapMs)} ms after the question ` +
        `(median gap sent ${ms(order.medianGapSentMs)}: the follow-up waits for the question's 200), handler times drawn from 0–${n(order.maxHandlerMs)} ms (seed ${order.seed}).`,
    ),
    '',
    markdownTable(
      ['pairs judged', 'inversions', 'messages never handled', 'handled twice'],
      [[n(order.judged), `**${n(order.inversions)}**`, n(order.missing), n(order.repeated)]],
      ['right', 'right', 'right', 'right'],
    ),
    '',
    wrap(`Goal 0 inversions: ${verdict(v.conversationsNoInversions?.met)}.`),
  ].join('\n');
}

/** The benchmarks summary's clause on conversations, empty until they were measured. */
export function readmeConversationsClause(r: ResultsFile): string {
  const c = r.conversations;
  if (c === undefined) return '';
  const ratios = conversationsRatios(c);
  return (
    `**Conversations** (local stack): a lone reply reaches its handler in ${ms(c.replyLatency.ours.medianMs)}, ` +
    `${times(ratios.reply)} the pass-through floor's ${ms(c.replyLatency.floor.medianMs)}; ` +
    `during a ${n(c.storm.statuses)}-status storm the live messages' p99 wait is ${ms(c.storm.live.p99Ms)}, ${times(ratios.storm)} the lone median; ` +
    `${n(c.order.inversions)} of ${n(c.order.judged)} same-customer pairs ran out of order. `
  );
}
