/** The generated region of docs/receiver.md ("Performance"): the receiver part of lab/bench/results.json. */

import { markdownTable, n, times, wrap } from '../../../cli/tools/markdown-table.ts';
import { resolveSettings } from '../../../contract/settings.ts';
import { GOALS, judgeGoals } from '../goals.ts';
import type { ResultsFile } from '../results.ts';

const RECEIVER_GOAL = 'receiverRatioAtMost3At1000Updates';

export function receiverPerformanceRegion(r: ResultsFile): string {
  const bodies = r.receiver.bodies;
  const largest = bodies.reduce((a, b) => (b.updates > a.updates ? b : a));
  const smallest = bodies.reduce((a, b) => (b.updates < a.updates ? b : a));
  const messageMiB = resolveSettings().maximumMessageSizeBytes / 1024 ** 2;
  const split = bodies.filter((body) => body.queueMessages > 1);
  const goal = GOALS.find((candidate) => candidate.name === RECEIVER_GOAL);
  const verdict = judgeGoals(r)[RECEIVER_GOAL];
  if (goal === undefined || verdict == null) throw new Error('The receiver goal was not judged.');
  return [
    wrap(
      `Run of ${r.run.finishedAt.slice(0, 10)} on ${r.machine.cpus} vCPU, load average ${r.machine.loadAverageAtStart[0]} at the start ` +
        '([benchmarks.md](benchmarks.md#machine) has the machine), medians:',
    ),
    '',
    markdownTable(
      ['updates', 'body', 'queue messages', 'ms per delivery', 'floor ms', 'against the floor'],
      bodies.map((body) => [
        String(body.updates),
        `${n(body.bodyBytes / 1024, 1)} KiB`,
        String(body.queueMessages),
        n(body.msPerDelivery, 3),
        n(body.floorMs, 3),
        times(body.ratio),
      ]),
      ['left', 'right', 'right', 'right', 'right', 'right'],
    ),
    '',
    wrap(
      `${
        split.length === 0
          ? `With the default message size (${n(messageMiB)} MiB) every body, the ${largest.updates}-update one included, is one queue message: none is split.`
          : `With the default message size (${n(messageMiB)} MiB) the ${split.map((body) => `${body.updates}-update body becomes ${body.queueMessages} queue messages`).join(', ')}.`
      } The goal is at most 3 times the floor for the ${largest.updates}-update body: ${goal.format(verdict.measured)}, ${verdict.met ? 'met' : '**not met**'}. ` +
        `A ${smallest.updates}-update body costs ${n(smallest.msPerDelivery, 3)} ms, ${times(smallest.ratio)} a floor of microseconds: ` +
        'the fixed costs of an invocation and of one SDK request (command, signing, a log line, the EMF document) dominate.',
    ),
  ].join('\n');
}

const ARCHIVE_GOAL = 'receiverArchiveWithin5Percent';

type ArchiveBody = NonNullable<ResultsFile['archive']>['bodies'][number];
type ArchiveLatency = NonNullable<ArchiveBody['network']>;

/** The median per-pair ratio with its 95 % interval, as a table cell (the ratio of the medians without pairs). */
const ratioCell = (ratio: number, interval: { low: number; high: number } | undefined) =>
  interval === undefined
    ? times(ratio, 3)
    : `${times(ratio, 3)} (${times(interval.low, 3)}–${times(interval.high, 3)})`;

const latencyCells = (latency: ArchiveLatency | undefined) =>
  latency === undefined
    ? ['not measured', '']
    : [
        `${n(latency.offMs, 2)} / ${n(latency.onMs, 2)}`,
        ratioCell(latency.pairedRatio, latency.pairedRatioInterval),
      ];

/** docs/receiver.md's "archive-overhead" region: the receiver with the archive on beside off. */
export function receiverArchiveRegion(r: ResultsFile): string {
  const goal = GOALS.find((candidate) => candidate.name === ARCHIVE_GOAL);
  const verdict = judgeGoals(r)[ARCHIVE_GOAL];
  if (r.archive === undefined || goal === undefined || verdict == null) {
    return wrap(
      'Not measured with the CPU per delivery yet: `npm run bench -- --only archive --merge` measures it.',
    );
  }
  const roundTrip = r.archive.modelledRoundTrip;
  const latencyIterations = r.archive.bodies[0]?.modelled?.iterations;
  return [
    wrap(
      'With the archive on, the receiver sends one more SendMessageBatch, the copy of the body (its text when SQS ' +
        'takes it as it is, else base64), beside the subscriber’s send (in the same `Promise.all`). Archive off and ' +
        `on alternate in the same iterations, each pair side by side, ${latencyIterations ?? 0} pairs after a warm-up: ` +
        `SQS answered in memory after a modelled ${n(roundTrip?.ms ?? 0)} ms round trip (${roundTrip?.source ?? 'not recorded'}), ` +
        'timing Meta’s acknowledgement and the process’s CPU time of each call (`process.cpuUsage`, user + system: ' +
        'what the copy adds to the receiver’s billed milliseconds), then over a real connection to fauxqs in another ' +
        'process (the real SQS client, HTTP on loopback). Medians in ms, off / on; on against off is the median of the ' +
        'per-pair ratios (a change of the machine’s load between pairs cancels out), in brackets its 95 % interval:',
    ),
    '',
    markdownTable(
      [
        'updates',
        'body',
        `${n(roundTrip?.ms ?? 0)} ms round trip`,
        'on against off',
        'CPU per delivery',
        'on against off',
        'over fauxqs',
        'on against off',
      ],
      r.archive.bodies.map((body) => [
        String(body.updates),
        `${n(body.bodyBytes / 1024, 1)} KiB`,
        ...latencyCells(body.modelled),
        ...latencyCells(body.cpuPerDelivery),
        ...latencyCells(body.network),
      ]),
      ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    ),
    '',
    wrap(
      'The goal is, for every body, Meta’s acknowledgement with the archive on within 5 % of off and the CPU per ' +
        `delivery within 25 %, in the same pairs: ${goal.format(verdict.measured)}, ${verdict.note}, ` +
        `${verdict.met ? 'met' : '**not met**'}. The copy costs the SDK’s fixed work per request (command, signing, ` +
        'the answer’s checks) and, per byte of the body once more, its JSON serialisation, SigV4’s SHA-256 and the ' +
        'MD5 the SDK checks against the answer. Over fauxqs the two sends wait together, but the ' +
        'emulator, one process on loopback, handles both requests in turn, where SQS would serve them apart. ' +
        '[decisions.md](decisions.md#the-delivery-archive) says why the goal is judged on the modelled round trip.',
    ),
  ].join('\n');
}
