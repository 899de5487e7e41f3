/**
 * docs/benchmarks.md's sections on the product's own work, from lab/bench/results.json: the consumer's overhead
 * before a handler (`npm run bench -- --only overhead`) and a campaign's effect on live chats in the capacity
 * simulation (`--only storm`), and the summary's clause on both.
 */
import { markdownTable, n, times, wrap } from '../../../cli/tools/markdown-table.ts';
import type { MsSpread } from '../consumer/overhead-results.ts';
import { judgeGoals } from '../goals.ts';
import type { ResultsFile } from '../results.ts';

const ms3 = (value: number) => `${n(value, 2)} ms`;
const spread = (s: MsSpread) => `${ms3(s.p25Ms)}–${ms3(s.p75Ms)}`;
const verdict = (met: boolean | undefined) =>
  met === undefined ? 'not measured' : met ? 'met' : '**not met**';
const notMeasured = (part: string) =>
  `Not measured yet: \`npm run bench -- --only ${part} --merge\` measures it and merges it into \`lab/bench/results.json\`.`;

export function consumerOverheadSection(r: ResultsFile): string[] {
  const o = r.consumerOverhead;
  const heading = '### Consumer overhead: invocation → handler start, beside one claim round trip';
  if (o === undefined) return [heading, '', wrap(notMeasured('overhead'))];
  const goal = judgeGoals(r).consumerHandlerStartWithinClaimPlus1Ms;
  return [
    heading,
    '',
    wrap(
      `The consumer Lambda's handler for the ${o.lane} lane${o.ordered ? ' (ordered)' : ''} with the defaults, ${n(o.invocations)} invocations of one ` +
        `fresh message each after ${n(o.warmupPairs)} unmeasured, interleaved with as many bare conditional PutItems on the same table.`,
    ),
    '',
    markdownTable(
      ['figure', 'median', 'p25–p75'],
      [
        ["invocation → the handler's first line", `**${ms3(o.toHandler.medianMs)}**`, spread(o.toHandler)],
        [
          'a bare conditional PutItem (`attribute_not_exists`)',
          `**${ms3(o.barePut.medianMs)}**`,
          spread(o.barePut),
        ],
        [
          'the whole invocation (claim, handler, completion, log line, metrics)',
          ms3(o.invocation.medianMs),
          spread(o.invocation),
        ],
      ],
      ['left', 'right', 'right'],
    ),
    '',
    wrap(
      `Before its handler the consumer adds ${ms3(o.addedMs)} to the claim's round trip; goal at most 1 ms: ${verdict(goal?.met)}.`,
    ),
  ];
}

export function stormIsolationSection(r: ResultsFile): string[] {
  const s = r.stormIsolation;
  const heading = "### Storm isolation: a campaign's effect on live chats (capacity simulation)";
  if (s === undefined) return [heading, '', wrap(notMeasured('storm'))];
  const goal = judgeGoals(r).campaignMessageLaneP99AtMost2xWithout;
  const row = (name: string, w: typeof s.withCampaign) => [
    name,
    n(w.messages),
    `${n(w.messageP50Ms)} ms`,
    `**${n(w.messageP99Ms)} ms**`,
    n(w.statuses),
    `${n(w.statusP99Ms)} ms`,
  ];
  return [
    heading,
    '',
    wrap(
      `The capacity simulation's \`${s.scenario}\` scenario${s.short ? ' (its short version)' : ''}, seed ${s.seed}: ${n(s.campaignMessages)} campaign ` +
        `messages, each followed by three statuses, while customers write in at ${n(s.inboundPerSecond)}/s; then the same run with the campaign drawn but not sent. Waits in virtual time, from the receiver's acceptance to the handler's start.`,
    ),
    '',
    markdownTable(
      ['run', 'messages', 'message lane p50', 'message lane p99', 'statuses', 'status lane p99'],
      [row('with the campaign', s.withCampaign), row('without it', s.withoutCampaign)],
      ['left', 'right', 'right', 'right', 'right', 'right'],
    ),
    '',
    wrap(
      `The campaign takes the message lane's p99 to ${times(goal?.measured ?? Number.NaN)} its p99 without it; goal at most ×2: ${verdict(goal?.met)}.`,
    ),
  ];
}

/** The benchmarks summary's clause on the product's own work, empty for a part not measured yet. */
export function productWorkClause(r: ResultsFile): string {
  const v = judgeGoals(r);
  const o = r.consumerOverhead;
  const s = r.stormIsolation;
  const clauses = [
    o === undefined
      ? ''
      : `**Consumer overhead**: a message reaches its handler ${ms3(o.toHandler.medianMs)} after the consumer's invocation, ` +
        `${ms3(o.addedMs)} beyond a bare conditional PutItem's ${ms3(o.barePut.medianMs)}. `,
    s === undefined
      ? ''
      : `**Storm isolation** (capacity simulation): a ${n(s.campaignMessages)}-message campaign puts the message lane's p99 wait at ` +
        `${n(s.withCampaign.messageP99Ms)} ms, ${times(v.campaignMessageLaneP99AtMost2xWithout?.measured ?? Number.NaN)} its ${n(s.withoutCampaign.messageP99Ms)} ms without it. `,
  ];
  return clauses.join('');
}
