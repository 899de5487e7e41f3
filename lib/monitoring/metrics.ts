/**
 * CloudWatch metric objects for the custom metrics of DESIGN §5. Names and dimensions come only from
 * `functions/commons/metric-names.ts`, the module the handlers emit with, so the two cannot drift apart.
 * This module builds `Metric`/`MathExpression` objects and nothing else; widgets and alarms live in
 * `dashboard.ts`.
 */
import type { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import {
  ConsumerFieldMetric,
  type ConsumerMetric,
  FIELD_DIMENSION,
  MANAGEMENT_FIELDS,
  MESSAGES_FIELD_DIMENSIONS,
  METRICS_NAMESPACE,
  type ReceiverMetric,
  SERVICE_DIMENSION,
  SERVICE_NAME,
} from '../../functions/commons/metric-names.ts';

export type ConsumerFieldMetricName = (typeof ConsumerFieldMetric)[keyof typeof ConsumerFieldMetric];
export type ConsumerMetricName = (typeof ConsumerMetric)[keyof typeof ConsumerMetric];
export type ReceiverMetricName = (typeof ReceiverMetric)[keyof typeof ReceiverMetric];

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

/** A consumer count for one field, summed over the period. */
export function consumerFieldMetric(
  name: ConsumerFieldMetricName,
  field: string,
  window: MetricWindow,
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { ...SERVICE, [FIELD_DIMENSION]: field },
    statistic: Stats.SUM,
    period: window.period,
    label: `${field} ${name}`,
  });
}

/** A consumer count without a dimension of its own, summed over the period. */
export function consumerMetric(name: ConsumerMetricName, window: MetricWindow): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: SERVICE,
    statistic: Stats.SUM,
    period: window.period,
    label: name,
  });
}

/** A receiver metric (no dimension of its own); `EventsPerDelivery` is a distribution, so the statistic is a parameter. */
export function receiverMetric(
  name: ReceiverMetricName,
  window: MetricWindow & { readonly statistic?: string },
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: SERVICE,
    statistic: window.statistic ?? Stats.SUM,
    period: window.period,
    label: window.statistic && window.statistic !== Stats.SUM ? `${name} (${window.statistic})` : name,
  });
}

/** Metric-math ids must start with a lower-case letter and hold only letters, digits and `_`. */
function metricId(prefix: string, field: string): string {
  return `${prefix}_${field.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/**
 * 100 × duplicates / (fresh + duplicates) for one field (DESIGN §5). `FILL(…, 0)` turns a period in which only
 * one of the two counts was emitted into a real 0 instead of a gap; a period with no events at all stays
 * empty (the division is undefined, not 0 %).
 */
export function duplicateRatePercent(field: string, window: MetricWindow): MathExpression {
  const fresh = metricId('fresh', field);
  const duplicate = metricId('dup', field);
  return new MathExpression({
    expression: `100 * FILL(${duplicate}, 0) / (FILL(${fresh}, 0) + FILL(${duplicate}, 0))`,
    usingMetrics: {
      [fresh]: consumerFieldMetric(ConsumerFieldMetric.EventsFresh, field, window),
      [duplicate]: consumerFieldMetric(ConsumerFieldMetric.EventsDuplicate, field, window),
    },
    label: `${field} duplicate %`,
    period: window.period,
  });
}

/**
 * The duplicate rate over several fields together, for an alarm. A period with fewer than `minimumEvents`
 * events reads 0 so that one retried webhook on a quiet night (1 of 1 = 100 %) does not page anyone.
 * CloudWatch allows at most 10 metrics in an alarm, hence at most 5 fields.
 */
export function combinedDuplicateRatePercent(
  fields: readonly string[],
  window: MetricWindow & { readonly minimumEvents: number },
): MathExpression {
  if (fields.length === 0 || fields.length > MAX_ALARM_FIELDS) {
    throw new Error(
      `The duplicate-rate alarm needs 1 to ${MAX_ALARM_FIELDS} fields (CloudWatch allows 10 metrics per alarm), got ${fields.length}.`,
    );
  }
  const usingMetrics: Record<string, Metric> = {};
  const freshIds: string[] = [];
  const duplicateIds: string[] = [];
  for (const field of fields) {
    const fresh = metricId('fresh', field);
    const duplicate = metricId('dup', field);
    usingMetrics[fresh] = consumerFieldMetric(ConsumerFieldMetric.EventsFresh, field, window);
    usingMetrics[duplicate] = consumerFieldMetric(ConsumerFieldMetric.EventsDuplicate, field, window);
    freshIds.push(`FILL(${fresh}, 0)`);
    duplicateIds.push(`FILL(${duplicate}, 0)`);
  }
  const duplicates = `(${duplicateIds.join(' + ')})`;
  const total = `(${[...freshIds, ...duplicateIds].join(' + ')})`;
  return new MathExpression({
    expression: `IF(${total} >= ${window.minimumEvents}, 100 * ${duplicates} / ${total}, 0)`,
    usingMetrics,
    label: `Duplicate % (${fields.join(', ')})`,
    period: window.period,
  });
}

export const MAX_ALARM_FIELDS = 5;

/**
 * One line per field that reported the metric in the visible range (a CloudWatch SEARCH). Used for the
 * sparse per-field counts (in-flight duplicates, takeovers, handler errors, releases, unknown fields): a
 * fixed list would draw 23 flat lines to show one spike, and `UnknownField` carries field names that by
 * definition are in no list. The schema `{Namespace,Field,service}` matches exactly the dimension set the
 * consumer emits.
 */
export function perFieldSearch(name: ConsumerFieldMetricName, window: MetricWindow): MathExpression {
  const seconds = window.period.toSeconds();
  return new MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},${FIELD_DIMENSION},${SERVICE_DIMENSION}} MetricName="${name}" ${SERVICE_DIMENSION}="${SERVICE_NAME}"', 'Sum', ${seconds})`,
    label: `\${PROP('Dim.${FIELD_DIMENSION}')} ${name}`,
    period: window.period,
  });
}
