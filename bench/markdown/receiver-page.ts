/** The generated region of docs/receiver.md ("Performance"): the receiver part of bench/results.json. */
import { resolveSettings } from '../../contract/settings.ts';
import { markdownTable, n, times, wrap } from '../../tools/markdown/table.ts';
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

/** docs/receiver.md's "archive-overhead" region: the receiver with the archive on beside off. */
export function receiverArchiveRegion(r: ResultsFile): string {
  const goal = GOALS.find((candidate) => candidate.name === ARCHIVE_GOAL);
  const verdict = judgeGoals(r)[ARCHIVE_GOAL];
  if (r.archive === undefined || goal === undefined || verdict == null) {
    return wrap('Not measured yet: `npm run bench -- --only archive --merge` measures it.');
  }
  return [
    wrap(
      'With the archive on, the receiver sends one more SendMessageBatch, the copy of the body in base64, beside ' +
        'the subscriber’s send; the two handlers alternate in the same iterations, SQS answered in memory, medians:',
    ),
    '',
    markdownTable(
      ['updates', 'body', 'archive messages', 'archive off ms', 'archive on ms', 'on against off'],
      r.archive.bodies.map((body) => [
        String(body.updates),
        `${n(body.bodyBytes / 1024, 1)} KiB`,
        n(body.archiveMessages, 1),
        n(body.offMs, 3),
        n(body.onMs, 3),
        times(body.ratio, 3),
      ]),
      ['left', 'right', 'right', 'right', 'right', 'right'],
    ),
    '',
    wrap(
      `The goal is the archive on within 5 % of off for every body: ${goal.format(verdict.measured)}, ${verdict.met ? 'met' : '**not met**'}. ` +
        'In memory nothing overlaps: the figure is the processor time of the second request (base64, JSON, SigV4 and MD5 ' +
        'over the body once more). In Lambda the two sends wait for SQS at the same time, so the acknowledgement waits ' +
        'for the slower round trip plus that processor time, not for two round trips.',
    ),
  ].join('\n');
}
