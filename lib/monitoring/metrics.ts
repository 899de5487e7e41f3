/**
 * CloudWatch metric objects for the custom metrics of docs/design.md §5, and the metric-math expressions built on
 * them and on the queues' metrics. Names and dimensions come only from `contract/metric-names.ts`,
 * the module the handlers emit with, so the two cannot drift apart. This module builds `Metric`/
 * `MathExpression` objects and nothing else; alarms live in `alarms.ts`, widgets in `webhook-dashboard.ts`.
 */
import { Duration } from 'aws-cdk-lib';
import { type IMetric, MathExpression, Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import { type ITableV2, Operation } from 'aws-cdk-lib/aws-dynamodb';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { LANE_DIMENSION, type LaneName } from '../../contract/lanes.ts';
import {
  ANSWER_CLASS_DIMENSION,
  type AnswerClass,
  ConsumerFieldMetric,
  type ConsumerFieldMetricName,
  ConsumerLaneMetric,
  type ConsumerLaneMetricName,
  type ConsumerMetricName,
  type ConsumerNumberMetricName,
  FIELD_DIMENSION,
  FORWARD_ANSWERS_METRIC,
  MANAGEMENT_FIELDS,
  MESSAGES_FIELD_DIMENSIONS,
  METRICS_NAMESPACE,
  PHONE_NUMBER_DIMENSION,
  type ReceiverMetricName,
  SERVICE_DIMENSION,
  SERVICE_NAME,
  SQS_DEDUPLICATED_SENDS_METRIC,
  SUBSCRIBER_DIMENSION,
} from '../../contract/metric-names.ts';

/** Every known value of the `Field` dimension: the three kinds of `messages`, then the management fields. */
export const ALL_FIELD_DIMENSIONS: readonly string[] = [...MESSAGES_FIELD_DIMENSIONS, ...MANAGEMENT_FIELDS];

/**
 * Powertools adds `service` to every metric it emits, so every query names it too (CloudWatch matches the
 * exact dimension set). Both functions run with POWERTOOLS_SERVICE_NAME = SERVICE_NAME.
 */
const SERVICE = { [SERVICE_DIMENSION]: SERVICE_NAME } as const;

export interface MetricWindow {
  readonly period: Duration;
}

/**
 * A window on one subscriber's consumer metrics: each consumer emits with `Subscriber = <name>` as a default
 * dimension, so every query names it (CloudWatch matches the exact dimension set).
 */
export interface ConsumerMetricWindow extends MetricWindow {
  readonly subscriber: string;
}

function consumerDimensions(subscriber: string): Record<string, string> {
  return { ...SERVICE, [SUBSCRIBER_DIMENSION]: subscriber };
}

/** One subscriber's consumer count for one field, summed over the period. */
export function consumerFieldMetric(
  name: ConsumerFieldMetricName,
  field: string,
  window: ConsumerMetricWindow,
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { ...consumerDimensions(window.subscriber), [FIELD_DIMENSION]: field },
    statistic: Stats.SUM,
    period: window.period,
    label: `${field} ${name}`,
  });
}

/** One subscriber's consumer count without a `Field`, summed over the period. */
export function consumerMetric(
  name: ConsumerMetricName,
  window: ConsumerMetricWindow & { readonly label?: string },
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: consumerDimensions(window.subscriber),
    statistic: Stats.SUM,
    period: window.period,
    label: window.label ?? name,
  });
}

/**
 * One subscriber's per-lane consumer metric (`EventWaitTime`: one value per record, so percentiles apply),
 * with `Lane` next to `Subscriber` and `service`.
 */
export function consumerLaneMetric(
  name: ConsumerLaneMetricName,
  lane: LaneName,
  window: ConsumerMetricWindow & { readonly statistic: string; readonly label?: string },
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { ...consumerDimensions(window.subscriber), [LANE_DIMENSION]: lane },
    statistic: window.statistic,
    period: window.period,
    label: window.label ?? `${lane} lane ${name} (${window.statistic})`,
  });
}

/** A forward subscriber's answers of one class (`ForwardAnswers`, `AnswerClass`), summed over the period. */
export function forwardAnswersMetric(answerClass: AnswerClass, window: ConsumerMetricWindow): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: FORWARD_ANSWERS_METRIC,
    dimensionsMap: { ...consumerDimensions(window.subscriber), [ANSWER_CLASS_DIMENSION]: answerClass },
    statistic: Stats.SUM,
    period: window.period,
    label: answerClass,
  });
}

/** One declared number's count at one subscriber's consumers (`PhoneNumberId`, summed over fields). */
export function consumerNumberMetric(
  name: ConsumerNumberMetricName,
  phoneNumberId: string,
  window: ConsumerMetricWindow,
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { ...consumerDimensions(window.subscriber), [PHONE_NUMBER_DIMENSION]: phoneNumberId },
    statistic: Stats.SUM,
    period: window.period,
    label: name,
  });
}

/** One declared number's `EventWaitTime` in one lane, at the given statistic (a percentile). */
export function consumerNumberWaitMetric(
  lane: LaneName,
  phoneNumberId: string,
  window: ConsumerMetricWindow & { readonly statistic: string },
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: ConsumerLaneMetric.EventWaitTime,
    dimensionsMap: {
      ...consumerDimensions(window.subscriber),
      [LANE_DIMENSION]: lane,
      [PHONE_NUMBER_DIMENSION]: phoneNumberId,
    },
    statistic: window.statistic,
    period: window.period,
    label: `${lane} lane wait ${window.statistic} (ms)`,
  });
}

/** A receiver metric (no dimension of its own); `EventsPerDelivery` is a distribution, so the statistic is a parameter. */
export function receiverMetric(
  name: ReceiverMetricName,
  window: MetricWindow & { readonly statistic?: string; readonly label?: string },
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: SERVICE,
    statistic: window.statistic ?? Stats.SUM,
    period: window.period,
    label:
      window.label ??
      (window.statistic && window.statistic !== Stats.SUM ? `${name} (${window.statistic})` : name),
  });
}

/** Metric-math ids must start with a lower-case letter and hold only letters, digits and `_`. */
function metricId(prefix: string, field: string): string {
  return `${prefix}_${field.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/**
 * 100 × duplicates / (fresh + duplicates) for one field (docs/design.md §5). `FILL(…, 0)` turns a period in which only
 * one of the two counts was emitted into a real 0 instead of a gap; a period with no events at all stays
 * empty (the division is undefined, not 0 %). With `absorbedByQueue` (the message lane's FIFO queue's
 * `NumberOfDeduplicatedSentMessages`), the repeats the queue absorbed before any claim saw them count as
 * duplicates too.
 */
export function duplicateRatePercent(
  field: string,
  window: ConsumerMetricWindow,
  absorbedByQueue?: IMetric,
): MathExpression {
  const fresh = metricId('fresh', field);
  const duplicate = metricId('dup', field);
  const absorbed = metricId('absorbed', field);
  const duplicates =
    absorbedByQueue === undefined
      ? `FILL(${duplicate}, 0)`
      : `(FILL(${duplicate}, 0) + FILL(${absorbed}, 0))`;
  return new MathExpression({
    expression: `100 * ${duplicates} / (FILL(${fresh}, 0) + ${duplicates})`,
    usingMetrics: {
      [fresh]: consumerFieldMetric(ConsumerFieldMetric.EventsFresh, field, window),
      [duplicate]: consumerFieldMetric(ConsumerFieldMetric.EventsDuplicate, field, window),
      ...(absorbedByQueue !== undefined && { [absorbed]: absorbedByQueue }),
    },
    label: absorbedByQueue === undefined ? `${field} duplicate %` : `${field} duplicate % (claims and queue)`,
    period: window.period,
  });
}

/**
 * Sends the message lane's FIFO queue accepted and did not enqueue: repeats of an event within its 5-minute
 * deduplication window, absorbed before any claim saw them (SQS's own metric).
 */
export function absorbedByFifoQueue(queue: IQueue, window: MetricWindow): IMetric {
  return queue.metric(SQS_DEDUPLICATED_SENDS_METRIC, {
    statistic: Stats.SUM,
    period: window.period,
    label: 'message: absorbed by the FIFO queue',
  });
}

/**
 * The duplicate rate over several fields together, for an alarm. A period with fewer than `minimumEvents`
 * events reads 0 so that one retried webhook on a quiet night (1 of 1 = 100 %) does not page anyone.
 * CloudWatch allows at most 10 metrics in an alarm, hence at most 5 fields.
 */
export function combinedDuplicateRatePercent(
  fields: readonly string[],
  window: ConsumerMetricWindow & { readonly minimumEvents: number },
): MathExpression {
  return combinedFieldRatePercent({
    part: ConsumerFieldMetric.EventsDuplicate,
    whole: [ConsumerFieldMetric.EventsFresh, ConsumerFieldMetric.EventsDuplicate],
    fields,
    window,
    label: `Duplicate % (${fields.join(', ')})`,
  });
}

/**
 * 100 × handler errors / fresh events over several fields together, for an alarm. Every fresh claim counts
 * in `EventsFresh`, whether its handler then succeeded or threw, so the ratio is the share of attempts that
 * failed. Below `minimumEvents` fresh events the period reads 0, as for the duplicate rate.
 */
export function combinedHandlerErrorRatePercent(
  fields: readonly string[],
  window: ConsumerMetricWindow & { readonly minimumEvents: number },
): MathExpression {
  return combinedFieldRatePercent({
    part: ConsumerFieldMetric.HandlerErrors,
    whole: [ConsumerFieldMetric.EventsFresh],
    fields,
    window,
    label: `Handler error % (${fields.join(', ')})`,
  });
}

/** Metric-math id prefixes of the per-field counts that the combined rates read. */
const RATE_ID_PREFIX: Partial<Record<ConsumerFieldMetricName, string>> = {
  [ConsumerFieldMetric.EventsFresh]: 'fresh',
  [ConsumerFieldMetric.EventsDuplicate]: 'dup',
  [ConsumerFieldMetric.HandlerErrors]: 'herr',
};

/** `IF(Σ whole >= minimumEvents, 100 × Σ part / Σ whole, 0)`, each metric fetched once per field. */
function combinedFieldRatePercent(rate: {
  readonly part: ConsumerFieldMetricName;
  readonly whole: readonly ConsumerFieldMetricName[];
  readonly fields: readonly string[];
  readonly window: ConsumerMetricWindow & { readonly minimumEvents: number };
  readonly label: string;
}): MathExpression {
  const { fields, window } = rate;
  if (fields.length === 0 || fields.length > MAX_ALARM_FIELDS) {
    throw new Error(
      `A combined rate alarm needs 1 to ${MAX_ALARM_FIELDS} fields (CloudWatch allows 10 metrics per alarm), got ${fields.length}.`,
    );
  }
  const usingMetrics: Record<string, Metric> = {};
  const filled = (name: ConsumerFieldMetricName): string[] =>
    fields.map((field) => {
      const id = metricId(RATE_ID_PREFIX[name] ?? name.toLowerCase(), field);
      usingMetrics[id] = consumerFieldMetric(name, field, window);
      return `FILL(${id}, 0)`;
    });
  const part = `(${filled(rate.part).join(' + ')})`;
  const whole = `(${rate.whole.flatMap(filled).join(' + ')})`;
  return new MathExpression({
    expression: `IF(${whole} >= ${window.minimumEvents}, 100 * ${part} / ${whole}, 0)`,
    usingMetrics,
    label: rate.label,
    period: window.period,
  });
}

export const MAX_ALARM_FIELDS = 5;

/**
 * How much a queue's visible depth grew since the previous minute. Alarming on `> 0` turns every arrival
 * into its own OK → ALARM transition (the next quiet minute reads 0), so a queue that is already non-empty
 * still notifies when more messages come. Depth, not `NumberOfMessagesSent`: SQS does not count messages
 * its redrive policy moves into a dead-letter queue as sent, only those sent by a client.
 */
export function queueDepthGrowth(queue: IQueue, label: string): MathExpression {
  const oneMinute = Duration.minutes(1);
  return new MathExpression({
    expression: 'DIFF(visible)',
    usingMetrics: {
      visible: queue.metricApproximateNumberOfMessagesVisible({
        period: oneMinute,
        statistic: Stats.MAXIMUM,
      }),
    },
    label,
    period: oneMinute,
  });
}

/**
 * One line per field that reported the metric in the visible range (a CloudWatch SEARCH), for one
 * subscriber. Used for the per-field counts: a fixed list would draw a flat line per known field to show one
 * spike, and `UnknownField` carries field names that by definition are in no list. The schema
 * `{Namespace,Field,Subscriber,service}` matches exactly the dimension set the consumer emits.
 */
export function perFieldSearch(name: ConsumerFieldMetricName, window: ConsumerMetricWindow): MathExpression {
  return new MathExpression({
    expression: fieldSearchExpression(name, window, `${SUBSCRIBER_DIMENSION}="${window.subscriber}"`),
    label: `\${PROP('Dim.${FIELD_DIMENSION}')} ${name}`,
    period: window.period,
  });
}

/**
 * The same SEARCH over every subscriber at once, one line per subscriber and field that reported: for the
 * rare counts (in-flight duplicates, takeovers, unknown fields) that the dashboard shows once for the
 * pipeline rather than in every subscriber's row.
 */
export function perSubscriberAndFieldSearch(
  name: ConsumerFieldMetricName,
  window: MetricWindow,
): MathExpression {
  return new MathExpression({
    expression: fieldSearchExpression(name, window),
    label: `\${PROP('Dim.${SUBSCRIBER_DIMENSION}')} \${PROP('Dim.${FIELD_DIMENSION}')} ${name}`,
    period: window.period,
  });
}

function fieldSearchExpression(name: string, window: MetricWindow, extraTerm?: string): string {
  const schema = `{${METRICS_NAMESPACE},${FIELD_DIMENSION},${SUBSCRIBER_DIMENSION},${SERVICE_DIMENSION}}`;
  const terms = [
    `MetricName="${name}"`,
    `${SERVICE_DIMENSION}="${SERVICE_NAME}"`,
    ...(extraTerm ? [extraTerm] : []),
  ];
  return `SEARCH('${schema} ${terms.join(' ')}', 'Sum', ${window.period.toSeconds()})`;
}

/** The writes the consumer makes to the claim table: claim (Put), complete and ledger (Update), release (Delete). */
const CLAIM_TABLE_WRITES = [Operation.PUT_ITEM, Operation.UPDATE_ITEM, Operation.DELETE_ITEM];

/**
 * A per-operation DynamoDB metric summed over the consumer's three writes. DynamoDB publishes
 * `ThrottledRequests` and `SystemErrors` per operation only, and only in periods where they happened, so
 * each operation is `FILL`ed with 0: a plain sum (as the table's own `…ForOperations` helpers build it) has
 * no value in a period where only one operation reported. The ids carry `idPrefix` so that two such sums
 * can share a graph.
 */
function sumOverClaimTableWrites(
  table: ITableV2,
  metricName: string,
  idPrefix: string,
  window: MetricWindow,
  label: string,
): MathExpression {
  const usingMetrics = Object.fromEntries(
    CLAIM_TABLE_WRITES.map((operation) => [
      `${idPrefix}_${operation.toLowerCase()}`,
      table.metric(metricName, {
        period: window.period,
        statistic: Stats.SUM,
        dimensionsMap: { TableName: table.tableName, Operation: operation },
      }),
    ]),
  );
  return new MathExpression({
    expression: Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics,
    label,
    period: window.period,
  });
}

/** Throttled claim-table writes. A failed condition (a duplicate) is not a throttle. */
export function claimTableThrottledWrites(table: ITableV2, window: MetricWindow): MathExpression {
  return sumOverClaimTableWrites(
    table,
    'ThrottledRequests',
    'throttled',
    window,
    'Claim table: throttled writes',
  );
}

/** DynamoDB internal errors (HTTP 500) on the claim table's writes. */
export function claimTableSystemErrors(table: ITableV2, window: MetricWindow): MathExpression {
  return sumOverClaimTableWrites(table, 'SystemErrors', 'system', window, 'Claim table: system errors (500)');
}

/**
 * DynamoDB HTTP 400s. CloudWatch publishes `UserErrors` for the whole account and Region, with no table
 * dimension; failed conditions and throttles are not in it.
 */
export function dynamoDbAccountUserErrors(table: ITableV2, window: MetricWindow): IMetric {
  return table.metricUserErrors({
    period: window.period,
    statistic: Stats.SUM,
    label: 'DynamoDB user errors (400), whole account and Region',
  });
}
