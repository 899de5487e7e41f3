/**
 * The pipeline's alarms: what each watches, its threshold (props with defaults in `lib/defaults.ts`
 * `ALARM_DEFAULTS`) and what an operator should do when it fires (its description, repeated in
 * docs/deploy.md). Metric objects come from `metrics.ts` and from the constructs themselves; the dashboard
 * (`webhook-dashboard.ts`) shows these alarms and the same metrics.
 *
 * The receiver, API, claim-table and quarantine alarms exist once (`createPipelineAlarms`); the queue, DLQ,
 * consumer and handler alarms exist once per subscriber (`createSubscriberAlarms`), on its own resources and
 * on its metrics' `Subscriber` dimension, with its message lane's DLQ, consumer and wait alarms when it has one.
 *
 * Every alarm treats missing data as not breaching: no traffic is not an incident.
 */

import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IMetric, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ConsumerLaneMetric, ConsumerMetric, ReceiverMetric } from '../../contract/metric-names.ts';
import { withoutUndefined } from '../../contract/settings.ts';
import { ALARM_DEFAULTS } from '../defaults.ts';
import type { FrontDoorMetrics } from './front-door-metrics.ts';
import {
  claimTableSystemErrors,
  claimTableThrottledWrites,
  combinedDuplicateRatePercent,
  combinedHandlerErrorRatePercent,
  consumerLaneMetric,
  consumerMetric,
  dynamoDbAccountUserErrors,
  MAX_ALARM_FIELDS,
  queueDepthGrowth,
  receiverMetric,
} from './metrics.ts';

/** Alarm thresholds. Counts are per `period` unless the prop says otherwise. */
export interface WebhookAlarmThresholds {
  /**
   * Period over which the custom metrics, Lambda and DynamoDB metrics, API errors and rates are summed.
   * @default Duration.minutes(5)
   * @example
   * ```typescript
   * import { App, Duration, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { period: Duration.minutes(1) },
   * });
   * ```
   */
  readonly period?: Duration;
  /**
   * Alarm while a subscriber's dead-letter queue (records that failed) or the quarantine queue (bodies that
   * cannot be processed as they are) holds at least this many messages.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { deadLetterQueueMessages: 10 },
   * });
   * ```
   */
  readonly deadLetterQueueMessages?: number;
  /**
   * Alarm when a subscriber's dead-letter queue or the quarantine queue grew by at least this many messages
   * within one minute. Unlike `deadLetterQueueMessages`, which stays in alarm while anything waits there, this
   * one returns to OK after a quiet minute, so each new arrival notifies again.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { deadLetterQueueArrivals: 5 },
   * });
   * ```
   */
  readonly deadLetterQueueArrivals?: number;
  /**
   * Alarm when the oldest message of the delivery queue is older than this, in seconds: the consumer is
   * failing or cannot keep up.
   * @default 300
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { oldestMessageAgeSeconds: 900 }, // a backlog of 15 minutes is acceptable
   * });
   * ```
   */
  readonly oldestMessageAgeSeconds?: number;
  /**
   * Consecutive one-minute periods above `oldestMessageAgeSeconds` before the alarm fires.
   * @default 3
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { oldestMessageAgeEvaluationPeriods: 5 },
   * });
   * ```
   */
  readonly oldestMessageAgeEvaluationPeriods?: number;
  /**
   * Alarm when duplicates exceed this percentage of events. A rising rate is the early sign that Meta is
   * retrying because acknowledgements are slow.
   * @default 10
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { duplicateRatePercent: 20 },
   * });
   * ```
   */
  readonly duplicateRatePercent?: number;
  /**
   * Consecutive periods above `duplicateRatePercent` before the alarm fires.
   * @default 3
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { duplicateRateEvaluationPeriods: 6 },
   * });
   * ```
   */
  readonly duplicateRateEvaluationPeriods?: number;
  /**
   * Periods with fewer events than this (over the alarm's fields) count as 0 %, so a single retry on a
   * quiet night does not read as 100 %.
   * @default 50
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { duplicateRateMinimumEvents: 200 },
   * });
   * ```
   */
  readonly duplicateRateMinimumEvents?: number;
  /**
   * `Field` dimension values whose combined duplicate rate is alarmed on (at most 5: CloudWatch allows 10
   * metrics per alarm).
   * @default ['message', 'status', 'error']
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { duplicateRateFields: ['message', 'status'] },
   * });
   * ```
   */
  readonly duplicateRateFields?: readonly string[];
  /**
   * Alarm when the webhook (the HTTP API, or the function URL) answers at least this many 5xx in one period
   * (each one makes Meta retry).
   * @default 5
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { apiServerErrors: 20 },
   * });
   * ```
   */
  readonly apiServerErrors?: number;
  /**
   * Alarm when at least this many requests are rejected for a bad or missing signature in one period: a
   * rotated app secret not yet in the secret, no app secret stored yet, or someone probing the URL.
   * @default 100
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { signatureRejections: 10 },
   * });
   * ```
   */
  readonly signatureRejections?: number;
  /**
   * Alarm when at least this many consumer invocations fail as a whole (crash, timeout) in one period. The
   * consumer reports failed records individually, so any failed invocation is a bug or a timeout.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { consumerErrors: 3 },
   * });
   * ```
   */
  readonly consumerErrors?: number;
  /**
   * Alarm when the consumer is throttled at least this many times in one period.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { consumerThrottles: 5 },
   * });
   * ```
   */
  readonly consumerThrottles?: number;
  /**
   * Alarm when at least this many receiver invocations fail as a whole (crash, timeout) in one period.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { receiverErrors: 3 },
   * });
   * ```
   */
  readonly receiverErrors?: number;
  /**
   * Alarm when the receiver is throttled at least this many times in one period.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { receiverThrottles: 5 },
   * });
   * ```
   */
  readonly receiverThrottles?: number;
  /**
   * Alarm when at least this many side effects ran but could not be marked done (`CompletionFailures`) in
   * one period: a later retry of such an event may run its effect a second time.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { completionFailures: 2 },
   * });
   * ```
   */
  readonly completionFailures?: number;
  /**
   * Alarm when handler errors exceed this percentage of fresh events.
   * @default 5
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { handlerErrorRatePercent: 10 },
   * });
   * ```
   */
  readonly handlerErrorRatePercent?: number;
  /**
   * Consecutive periods above `handlerErrorRatePercent` before the alarm fires.
   * @default 2
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { handlerErrorRateEvaluationPeriods: 3 },
   * });
   * ```
   */
  readonly handlerErrorRateEvaluationPeriods?: number;
  /**
   * Periods with fewer fresh events than this (over the alarm's fields) count as 0 %.
   * @default 20
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { handlerErrorRateMinimumEvents: 100 },
   * });
   * ```
   */
  readonly handlerErrorRateMinimumEvents?: number;
  /**
   * `Field` dimension values whose combined handler error rate is alarmed on (at most 5).
   * @default ['message', 'status', 'error']
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { handlerErrorRateFields: ['message'] }, // only inbound messages
   * });
   * ```
   */
  readonly handlerErrorRateFields?: readonly string[];
  /**
   * Alarm when at least this many claims fail (DynamoDB errors after the SDK's retries, not duplicates) in
   * each of `claimFailuresEvaluationPeriods` consecutive periods.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { claimFailures: 5 },
   * });
   * ```
   */
  readonly claimFailures?: number;
  /**
   * Consecutive periods with `claimFailures` before the alarm fires.
   * @default 2
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { claimFailuresEvaluationPeriods: 3 },
   * });
   * ```
   */
  readonly claimFailuresEvaluationPeriods?: number;
  /**
   * Alarm when at least this many claim-table writes (PutItem, UpdateItem, DeleteItem) are throttled in one
   * period. Failed conditions (duplicates) are not throttles and never count.
   * @default 10
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { claimTableThrottledRequests: 50 },
   * });
   * ```
   */
  readonly claimTableThrottledRequests?: number;
  /**
   * Alarm when the claim table's writes meet at least this many DynamoDB internal errors (HTTP 500) in one
   * period.
   * @default 5
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { claimTableSystemErrors: 10 },
   * });
   * ```
   */
  readonly claimTableSystemErrors?: number;
  /**
   * Alarm when DynamoDB answers at least this many HTTP 400s in one period. CloudWatch publishes
   * `UserErrors` for the whole account and Region, not per table, so in a shared account other
   * applications' mistakes would fire it: opt in only where this pipeline owns the account. Failed
   * conditions (duplicates) and throttles are not counted in it.
   * @default - no alarm
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { dynamoDbAccountUserErrors: 1 }, // this account runs nothing else
   * });
   * ```
   */
  readonly dynamoDbAccountUserErrors?: number;
  /**
   * Alarm when the p99 of the message lane's `EventWaitTime` (from the receiver's enqueue to the record's
   * first handler call, in ms) is above this in `messageEventWaitTimeEvaluationPeriods` one-minute periods in
   * a row: people are waiting for replies. Each subscriber with a message lane has one.
   * @default 5000
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { messageEventWaitTimeP99Ms: 2_000 },
   * });
   * ```
   */
  readonly messageEventWaitTimeP99Ms?: number;
  /**
   * Consecutive one-minute periods above `messageEventWaitTimeP99Ms` before the alarm fires.
   * @default 3
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { messageEventWaitTimeEvaluationPeriods: 5 },
   * });
   * ```
   */
  readonly messageEventWaitTimeEvaluationPeriods?: number;
  /**
   * Alarm when the oldest message of a message lane's queue is older than this, in seconds, in
   * `messageOldestMessageAgeEvaluationPeriods` one-minute periods in a row: replies stall even when no record
   * reaches a handler to report its wait (a paused, failing or throttled message consumer).
   * @default 60
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { messageOldestMessageAgeSeconds: 120 },
   * });
   * ```
   */
  readonly messageOldestMessageAgeSeconds?: number;
  /**
   * Consecutive one-minute periods above `messageOldestMessageAgeSeconds` before the alarm fires.
   * @default 3
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { messageOldestMessageAgeEvaluationPeriods: 5 },
   * });
   * ```
   */
  readonly messageOldestMessageAgeEvaluationPeriods?: number;
  /**
   * Alarm when at least this many failed records of a subscriber could not be given their backoff
   * (`RedeliveriesNotScheduled`: ChangeMessageVisibility refused or failed) in one period: they come back
   * after the visibility timeout instead, sooner, spending their receives towards the DLQ faster.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { redeliveriesNotScheduled: 10 },
   * });
   * ```
   */
  readonly redeliveriesNotScheduled?: number;
}

/** What the pipeline-wide alarms watch: the receiver's side, the claim table and the quarantine queue. */
export interface PipelineAlarmSources {
  readonly frontDoor: FrontDoorMetrics;
  readonly receiverFunction: IFunction;
  readonly claimTable: ITableV2;
  readonly quarantineQueue: IQueue;
}

/** What one subscriber's alarms watch. */
export interface SubscriberAlarmSources {
  /** The subscriber's name: its metrics' `Subscriber` dimension. */
  readonly name: string;
  readonly consumerFunction: IFunction;
  readonly deliveryQueue: IQueue;
  readonly deadLetterQueue: IQueue;
  /** `undefined`: the subscriber has no message lane. */
  readonly messageLane: MessageLaneAlarmSources | undefined;
}

/** What a subscriber's message lane alarms watch. */
export interface MessageLaneAlarmSources {
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  readonly consumerFunction: IFunction;
}

/** The alarms of the whole pipeline, once whatever the number of subscribers. */
export interface PipelineAlarms {
  readonly apiServerErrors: Alarm;
  readonly signatureRejections: Alarm;
  readonly receiverErrors: Alarm;
  readonly receiverThrottles: Alarm;
  readonly claimTableThrottledRequests: Alarm;
  readonly claimTableSystemErrors: Alarm;
  readonly quarantineQueueNotEmpty: Alarm;
  readonly quarantineQueueArrivals: Alarm;
  /** Only when `dynamoDbAccountUserErrors` is set. */
  readonly dynamoDbAccountUserErrors?: Alarm;
}

/** The alarms of one subscriber: its queue, its DLQ, its consumer and its handlers. */
export interface SubscriberAlarms {
  readonly deadLetterQueueNotEmpty: Alarm;
  readonly deadLetterQueueArrivals: Alarm;
  readonly oldestMessageAge: Alarm;
  readonly duplicateRate: Alarm;
  readonly consumerErrors: Alarm;
  readonly consumerThrottles: Alarm;
  readonly completionFailures: Alarm;
  readonly handlerErrorRate: Alarm;
  readonly claimFailures: Alarm;
  /** Both lanes' consumers: the metric has no `Lane` dimension. */
  readonly redeliveriesNotScheduled: Alarm;
  /** The message lane's alarms, only for a subscriber that has the lane. */
  readonly messageDeadLetterQueueNotEmpty?: Alarm;
  readonly messageDeadLetterQueueArrivals?: Alarm;
  readonly messageConsumerErrors?: Alarm;
  readonly messageConsumerThrottles?: Alarm;
  readonly messageEventWaitTime?: Alarm;
  readonly messageOldestMessageAge?: Alarm;
}

/** The pipeline's alarms with those of its first subscriber: every alarm of a single-subscriber pipeline. */
export type WebhookAlarms = PipelineAlarms & SubscriberAlarms;

export type ResolvedThresholds = Required<Omit<WebhookAlarmThresholds, 'dynamoDbAccountUserErrors'>> & {
  readonly dynamoDbAccountUserErrors: number | undefined;
};

type CountAlarm = (
  id: string,
  alarmDescription: string,
  metric: IMetric,
  threshold: number,
  evaluationPeriods?: number,
) => Alarm;

/** An alarm at `>= threshold` over `evaluationPeriods` periods, not breaching on missing data. */
function countAlarmIn(scope: Construct): CountAlarm {
  return (id, alarmDescription, metric, threshold, evaluationPeriods = 1) =>
    new Alarm(scope, id, {
      alarmDescription,
      metric,
      threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
}

/** The receiver, front door, claim-table and quarantine alarms, created once in `scope`. */
export function createPipelineAlarms(
  scope: Construct,
  sources: PipelineAlarmSources,
  t: ResolvedThresholds,
): PipelineAlarms {
  const window = { period: t.period };
  const sum = { period: t.period, statistic: Stats.SUM };
  const count = countAlarmIn(scope);
  return {
    apiServerErrors: count(
      'ApiServerErrors',
      'The webhook answered 5xx (enqueue failures, secrets unreadable, receiver errors); Meta will retry these deliveries. Check the receiver logs for the step that failed.',
      sources.frontDoor.serverErrors(sum),
      t.apiServerErrors,
    ),
    signatureRejections: count(
      'SignatureRejections',
      'Many requests failed signature verification: an app secret rotated in Meta but not in the secret, no app secret stored yet, or someone probing the URL. The receiver logs say which (no app secret configured / bad signature).',
      receiverMetric(ReceiverMetric.SignatureRejected, window),
      t.signatureRejections,
    ),
    receiverErrors: count(
      'ReceiverErrors',
      `Receiver invocations failed as a whole (crash or timeout): ${sources.frontDoor.answeredBy} answered 5xx and Meta will retry. Check the receiver logs and its duration against its timeout.`,
      sources.receiverFunction.metricErrors(sum),
      t.receiverErrors,
    ),
    receiverThrottles: count(
      'ReceiverThrottles',
      sources.frontDoor.throttleAdvice,
      sources.receiverFunction.metricThrottles(sum),
      t.receiverThrottles,
    ),
    claimTableThrottledRequests: count(
      'ClaimTableThrottledRequests',
      'DynamoDB throttled writes to the claim table (on-demand tables throttle above twice their previous peak or on a hot partition). Writes are retried; sustained throttling slows the consumers and ends in ClaimFailures.',
      claimTableThrottledWrites(sources.claimTable, window),
      t.claimTableThrottledRequests,
    ),
    claimTableSystemErrors: count(
      'ClaimTableSystemErrors',
      'DynamoDB answered internal errors (HTTP 500) to claim-table writes. The SDK retries them; if ClaimFailures follows, check the AWS Health Dashboard for DynamoDB in this Region.',
      claimTableSystemErrors(sources.claimTable, window),
      t.claimTableSystemErrors,
    ),
    quarantineQueueNotEmpty: count(
      'QuarantineQueueNotEmpty',
      'Bodies wait in the quarantine queue: the receiver or a consumer could not process them as they are (invalid JSON, not a WhatsApp envelope, too large), each with a reason attribute. Read them, fix the cause, then requeue them as fresh deliveries or delete them.',
      sources.quarantineQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: Stats.MAXIMUM,
      }),
      t.deadLetterQueueMessages,
    ),
    quarantineQueueArrivals: count(
      'QuarantineQueueArrivals',
      'New bodies reached the quarantine queue in the last minute (it may already have held some). Same steps as QuarantineQueueNotEmpty; the DeliveriesQuarantined (receiver) and Quarantined (consumer) metrics say which side sent them.',
      queueDepthGrowth(sources.quarantineQueue, 'Quarantine growth in one minute'),
      t.deadLetterQueueArrivals,
    ),
    ...(t.dynamoDbAccountUserErrors === undefined
      ? {}
      : {
          dynamoDbAccountUserErrors: count(
            'DynamoDbAccountUserErrors',
            'DynamoDB answered HTTP 400s in this account and Region (UserErrors has no per-table dimension). For this pipeline: access denied, a missing table or an invalid request; check ClaimFailures and the consumer logs.',
            dynamoDbAccountUserErrors(sources.claimTable, window),
            t.dynamoDbAccountUserErrors,
          ),
        }),
  };
}

/**
 * One subscriber's alarms, created in `scope` (the monitoring construct itself for the `default` subscriber,
 * so that a single-subscriber stack keeps its alarms' ids; a child named after the subscriber otherwise).
 * Each description starts with the subscriber's name, which is what a notification shows first.
 */
export function createSubscriberAlarms(
  scope: Construct,
  sources: SubscriberAlarmSources,
  t: ResolvedThresholds,
): SubscriberAlarms {
  const subscriber = sources.name;
  const window = { period: t.period, subscriber };
  const sum = { period: t.period, statistic: Stats.SUM };
  const about = (text: string) => `Subscriber ${subscriber}: ${text}`;
  const count: CountAlarm = (id, description, ...rest) =>
    countAlarmIn(scope)(id, about(description), ...rest);
  return {
    deadLetterQueueNotEmpty: count(
      'DeadLetterQueueNotEmpty',
      'Records wait in the dead-letter queue: they failed maxReceiveCount times. Find the cause in the consumer logs, fix it, then redrive them (the claims turn already processed events into duplicates).',
      sources.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: Stats.MAXIMUM,
      }),
      t.deadLetterQueueMessages,
    ),
    deadLetterQueueArrivals: count(
      'DeadLetterQueueArrivals',
      'New records reached the dead-letter queue in the last minute (it may already have held some): another record gave up. Same steps as DeadLetterQueueNotEmpty; a steady stream means a systematic failure, so look at the consumer logs first.',
      queueDepthGrowth(sources.deadLetterQueue, 'DLQ growth in one minute'),
      t.deadLetterQueueArrivals,
    ),
    oldestMessageAge: new Alarm(scope, 'OldestMessageAge', {
      alarmDescription: about(
        'Deliveries wait too long in the queue: the consumer is failing, throttled or capped by maxConcurrency. Check the consumer errors and throttles; raise maxConcurrency if it is simply busy.',
      ),
      metric: sources.deliveryQueue.metricApproximateAgeOfOldestMessage({
        period: Duration.minutes(1),
        statistic: Stats.MAXIMUM,
      }),
      threshold: t.oldestMessageAgeSeconds,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: t.oldestMessageAgeEvaluationPeriods,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
    duplicateRate: new Alarm(scope, 'DuplicateRate', {
      alarmDescription: about(
        'Duplicate deliveries are rising: Meta retries when acknowledgements are slow or fail. Check receiver latency and 5xx.',
      ),
      metric: combinedDuplicateRatePercent(t.duplicateRateFields, {
        ...window,
        minimumEvents: t.duplicateRateMinimumEvents,
      }),
      threshold: t.duplicateRatePercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: t.duplicateRateEvaluationPeriods,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
    consumerErrors: count(
      'ConsumerErrors',
      'Consumer invocations failed as a whole (crash or timeout): their whole batch returns to the queue after the visibility timeout. Check the consumer logs and its duration against its timeout.',
      sources.consumerFunction.metricErrors(sum),
      t.consumerErrors,
    ),
    consumerThrottles: count(
      'ConsumerThrottles',
      'The consumer was throttled: the account or function concurrency is exhausted. Throttled batches are retried, but their receive counts grow towards the DLQ. Check the account concurrency and other functions.',
      sources.consumerFunction.metricThrottles(sum),
      t.consumerThrottles,
    ),
    completionFailures: count(
      'CompletionFailures',
      'A side effect ran but its claim could not be marked done: a later retry of the same event may run the effect a second time. Find the keys in the consumer logs ("Completing the claim failed after the side effect ran") and check them downstream.',
      consumerMetric(ConsumerMetric.CompletionFailures, window),
      t.completionFailures,
    ),
    handlerErrorRate: new Alarm(scope, 'HandlerErrorRate', {
      alarmDescription: about(
        'Its handlers are failing for a share of fresh events (claims released, records retried, then the DLQ). Check the consumer logs for the handler errors and the downstream system they call.',
      ),
      metric: combinedHandlerErrorRatePercent(t.handlerErrorRateFields, {
        ...window,
        minimumEvents: t.handlerErrorRateMinimumEvents,
      }),
      threshold: t.handlerErrorRatePercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: t.handlerErrorRateEvaluationPeriods,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
    claimFailures: count(
      'ClaimFailures',
      'Claims keep failing (DynamoDB errors after the SDK retries, not duplicates): no event of the affected records is processed, and they reach the DLQ after maxReceiveCount receives. Check the claim-table alarms, the consumer role and the table.',
      consumerMetric(ConsumerMetric.ClaimFailures, window),
      t.claimFailures,
      t.claimFailuresEvaluationPeriods,
    ),
    redeliveriesNotScheduled: count(
      'RedeliveriesNotScheduled',
      'Failed records could not be given their backoff (ChangeMessageVisibility refused or failed): they come back after the visibility timeout instead, sooner, and spend their receives towards the DLQ faster. Check the consumer role (sqs:ChangeMessageVisibility on its queue) and the consumer logs.',
      consumerMetric(ConsumerMetric.RedeliveriesNotScheduled, window),
      t.redeliveriesNotScheduled,
    ),
    ...(sources.messageLane === undefined
      ? {}
      : messageLaneAlarms(scope, { ...sources.messageLane, subscriber }, t)),
  };
}

/**
 * A subscriber's message lane alarms: its DLQ and its consumer like the status lane's, and the wait people
 * feel, the p99 of `EventWaitTime` on the lane.
 */
function messageLaneAlarms(
  scope: Construct,
  lane: MessageLaneAlarmSources & { readonly subscriber: string },
  t: ResolvedThresholds,
): Required<
  Pick<
    SubscriberAlarms,
    | 'messageDeadLetterQueueNotEmpty'
    | 'messageDeadLetterQueueArrivals'
    | 'messageConsumerErrors'
    | 'messageConsumerThrottles'
    | 'messageEventWaitTime'
    | 'messageOldestMessageAge'
  >
> {
  const about = (text: string) => `Subscriber ${lane.subscriber}: ${text}`;
  const count: CountAlarm = (id, description, ...rest) =>
    countAlarmIn(scope)(id, about(description), ...rest);
  const sum = { period: t.period, statistic: Stats.SUM };
  return {
    messageDeadLetterQueueNotEmpty: count(
      'MessageDeadLetterQueueNotEmpty',
      'Inbound messages wait in the message lane dead-letter queue: they failed the lane’s maxReceiveCount times, and their conversations moved on without them. Find the cause in the message consumer logs, fix it, then redrive them (the claims turn already processed events into duplicates).',
      lane.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: Stats.MAXIMUM,
      }),
      t.deadLetterQueueMessages,
    ),
    messageDeadLetterQueueArrivals: count(
      'MessageDeadLetterQueueArrivals',
      'New inbound messages reached the message lane dead-letter queue in the last minute: another message gave up and its conversation moved on. Same steps as MessageDeadLetterQueueNotEmpty.',
      queueDepthGrowth(lane.deadLetterQueue, 'Message DLQ growth in one minute'),
      t.deadLetterQueueArrivals,
    ),
    messageConsumerErrors: count(
      'MessageConsumerErrors',
      'Message lane consumer invocations failed as a whole (crash or timeout): their whole batch returns to the queue after the visibility timeout, and in an ordered lane its conversations wait for it. Check the message consumer logs and its duration against its timeout.',
      lane.consumerFunction.metricErrors(sum),
      t.consumerErrors,
    ),
    messageConsumerThrottles: count(
      'MessageConsumerThrottles',
      'The message lane consumer was throttled: the account or function concurrency is exhausted, and replies wait. Check the account concurrency and other functions.',
      lane.consumerFunction.metricThrottles(sum),
      t.consumerThrottles,
    ),
    messageEventWaitTime: new Alarm(scope, 'MessageEventWaitTime', {
      alarmDescription: about(
        'Inbound messages wait too long before their handler (p99 of EventWaitTime on the message lane): people wait for replies. Check the message consumer errors and throttles, its duration, held-back records (a failing message blocks its conversation when ordered), and raise the lane’s maxConcurrency if it is only busy.',
      ),
      metric: consumerLaneMetric(ConsumerLaneMetric.EventWaitTime, 'message', {
        subscriber: lane.subscriber,
        period: Duration.minutes(1),
        statistic: Stats.percentile(99),
      }),
      threshold: t.messageEventWaitTimeP99Ms,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: t.messageEventWaitTimeEvaluationPeriods,
      datapointsToAlarm: t.messageEventWaitTimeEvaluationPeriods,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
    messageOldestMessageAge: new Alarm(scope, 'MessageOldestMessageAge', {
      alarmDescription: about(
        'Inbound messages wait in the message lane queue without being handled: its consumer is paused, failing, throttled or capped by the lane’s maxConcurrency, or a failing message holds its conversation. Check the event source mapping is enabled, MessageConsumerErrors and MessageConsumerThrottles, and RecordsHeldBehindFailure.',
      ),
      metric: lane.queue.metricApproximateAgeOfOldestMessage({
        period: Duration.minutes(1),
        statistic: Stats.MAXIMUM,
      }),
      threshold: t.messageOldestMessageAgeSeconds,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: t.messageOldestMessageAgeEvaluationPeriods,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
  };
}

/** Fills defaults and refuses thresholds that would make an alarm meaningless or impossible to create. */
export function resolveThresholds(input: WebhookAlarmThresholds = {}): ResolvedThresholds {
  const t: ResolvedThresholds = {
    ...ALARM_DEFAULTS,
    ...withoutUndefined(input),
    dynamoDbAccountUserErrors: input.dynamoDbAccountUserErrors,
  };
  for (const name of ['duplicateRatePercent', 'handlerErrorRatePercent'] as const) {
    if (!(t[name] > 0 && t[name] < 100)) {
      throw new Error(`alarmThresholds.${name} must be between 0 and 100, got ${t[name]}.`);
    }
  }
  for (const name of ['duplicateRateFields', 'handlerErrorRateFields'] as const) {
    if (t[name].length === 0 || t[name].length > MAX_ALARM_FIELDS) {
      throw new Error(
        `alarmThresholds.${name} must name 1 to ${MAX_ALARM_FIELDS} fields (CloudWatch allows 10 metrics per alarm), got ${t[name].length}.`,
      );
    }
  }
  // A count alarm fires at `>= threshold`: below 1 it would be in alarm with no event at all.
  for (const name of [
    'deadLetterQueueMessages',
    'deadLetterQueueArrivals',
    'apiServerErrors',
    'signatureRejections',
    'consumerErrors',
    'consumerThrottles',
    'receiverErrors',
    'receiverThrottles',
    'completionFailures',
    'claimFailures',
    'claimTableThrottledRequests',
    'claimTableSystemErrors',
    'dynamoDbAccountUserErrors',
    'redeliveriesNotScheduled',
  ] as const) {
    const value = t[name];
    if (value !== undefined && !(value >= 1 && Number.isFinite(value))) {
      throw new Error(`alarmThresholds.${name} must be at least 1, or the alarm is always on; got ${value}.`);
    }
  }
  for (const name of [
    'oldestMessageAgeEvaluationPeriods',
    'duplicateRateEvaluationPeriods',
    'handlerErrorRateEvaluationPeriods',
    'claimFailuresEvaluationPeriods',
    'messageEventWaitTimeEvaluationPeriods',
    'messageOldestMessageAgeEvaluationPeriods',
  ] as const) {
    if (!(Number.isInteger(t[name]) && t[name] >= 1)) {
      throw new Error(
        `alarmThresholds.${name} must be a whole number of periods, at least 1; got ${t[name]}.`,
      );
    }
  }
  for (const name of ['duplicateRateMinimumEvents', 'handlerErrorRateMinimumEvents'] as const) {
    if (!(t[name] >= 0 && Number.isFinite(t[name]))) {
      throw new Error(`alarmThresholds.${name} must be a number >= 0; got ${t[name]}.`);
    }
  }
  if (!(t.messageEventWaitTimeP99Ms > 0 && Number.isFinite(t.messageEventWaitTimeP99Ms))) {
    throw new Error(
      `alarmThresholds.messageEventWaitTimeP99Ms must be a number of milliseconds above 0; got ${t.messageEventWaitTimeP99Ms}.`,
    );
  }
  return t;
}
