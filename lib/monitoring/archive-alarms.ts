/**
 * The delivery archive's alarms (docs/design.md, "Archive"): the archiver failing as a whole, its backlog
 * growing old, and messages it gave up on. None of them touches Meta's acknowledgement, which never waits for
 * the archiver; each means deliveries missing from S3 for now, to be caught up before they age out of the
 * archive queue (14 days).
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ARCHIVER_BATCHING_WINDOW_SECONDS } from '../../contract/archiver-settings.ts';
import type { ResolvedThresholds } from './alarms.ts';

export interface ArchiveAlarmSources {
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  readonly archiverFunction: IFunction;
}

export interface ArchiveAlarms {
  readonly archiverErrors: Alarm;
  readonly archiveBacklog: Alarm;
  readonly archiveDeadLetterQueueNotEmpty: Alarm;
}

/**
 * The oldest archive message may wait one batching window before its batch is even handed over; fifteen
 * windows (a quarter of an hour) is a stalled or failing archiver, not batching.
 */
export const ARCHIVE_BACKLOG_AGE_SECONDS = 15 * ARCHIVER_BATCHING_WINDOW_SECONDS;
const ARCHIVE_BACKLOG_EVALUATION_PERIODS = 3;

export function createArchiveAlarms(
  scope: Construct,
  sources: ArchiveAlarmSources,
  t: ResolvedThresholds,
): ArchiveAlarms {
  const alarm = (
    id: string,
    alarmDescription: string,
    props: Omit<
      ConstructorParameters<typeof Alarm>[2],
      'alarmDescription' | 'comparisonOperator' | 'treatMissingData'
    >,
  ) =>
    new Alarm(scope, id, {
      alarmDescription,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      ...props,
    });
  return {
    archiverErrors: alarm(
      'ArchiverErrors',
      'Archiver invocations failed as a whole (crash or timeout): their batches come back from the archive queue, and deliveries reach the archive late. Check the archiver logs (keys, counts, the S3 error name).',
      {
        metric: sources.archiverFunction.metricErrors({ period: t.period, statistic: Stats.SUM }),
        threshold: 1,
        evaluationPeriods: 1,
      },
    ),
    archiveBacklog: alarm(
      'ArchiveBacklog',
      `The archive queue's oldest message is older than ${ARCHIVE_BACKLOG_AGE_SECONDS} s: the archiver is failing, throttled or paused, and recent deliveries are not in S3 yet (replay cannot see them). The queue keeps them 14 days; check ArchiverErrors and the archiver logs.`,
      {
        metric: sources.queue.metricApproximateAgeOfOldestMessage({
          period: Duration.minutes(1),
          statistic: Stats.MAXIMUM,
        }),
        threshold: ARCHIVE_BACKLOG_AGE_SECONDS,
        evaluationPeriods: ARCHIVE_BACKLOG_EVALUATION_PERIODS,
      },
    ),
    archiveDeadLetterQueueNotEmpty: alarm(
      'ArchiveDeadLetterQueueNotEmpty',
      'Archive messages the archiver failed on five times wait in the archive DLQ: those deliveries are not in the archive. The archiver logs name each message and why (not ours, not written); redrive the DLQ to the archive queue once the cause is fixed.',
      {
        metric: sources.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: Stats.MAXIMUM,
        }),
        threshold: t.deadLetterQueueMessages,
        evaluationPeriods: 1,
      },
    ),
  };
}
