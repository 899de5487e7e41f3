import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { LANE_DIMENSION, type LaneName } from '../../contract/lanes.ts';
import { ConsumerLaneMetric, FIELD_DIMENSION, PHONE_NUMBER_DIMENSION } from '../../contract/metric-names.ts';
import type { TallySnapshot } from './consumer-tally.ts';

/**
 * Emits one invocation's tally as CloudWatch EMF. An EMF document gives each dimension one value, so the
 * `Field`-dimensioned metrics need one document per field seen, and the undimensioned ones one more; a
 * subscriber with `numbers` adds two per declared number seen (its counts, its waits): never one per event
 * (the waits: every record's, with the `Lane` dimension). Metrics that stayed at zero are
 * not emitted (dashboards fill gaps with 0). `publishStoredMetrics` clears the added dimension each time.
 *
 * Synchronous from first `addMetric` to `publishStoredMetrics`, so invocations sharing one `Metrics`
 * instance (the local poller runs several in one process) cannot interleave their documents.
 */
export function publishTally(metrics: Metrics, tally: TallySnapshot, lane: LaneName = 'status'): void {
  for (const [field, counts] of tally.byField) {
    if (counts.size === 0) continue;
    metrics.addDimension(FIELD_DIMENSION, field);
    for (const [name, value] of counts) metrics.addMetric(name, MetricUnit.Count, value);
    metrics.publishStoredMetrics();
  }
  if (tally.plain.size > 0) {
    for (const [name, value] of tally.plain) metrics.addMetric(name, MetricUnit.Count, value);
    metrics.publishStoredMetrics();
  }
  for (const { dimension, counts } of tally.own.values()) {
    if (dimension !== undefined) metrics.addDimension(dimension.name, dimension.value);
    for (const [name, value] of counts) metrics.addMetric(name, MetricUnit.Count, value);
    metrics.publishStoredMetrics();
  }
  for (const [phoneNumberId, counts] of tally.byNumber) {
    metrics.addDimension(PHONE_NUMBER_DIMENSION, phoneNumberId);
    for (const [name, value] of counts) metrics.addMetric(name, MetricUnit.Count, value);
    metrics.publishStoredMetrics();
  }
  publishWaits(metrics, tally.waitsMs, { [LANE_DIMENSION]: lane });
  for (const [phoneNumberId, waits] of tally.waitsMsByNumber) {
    publishWaits(metrics, waits, { [LANE_DIMENSION]: lane, [PHONE_NUMBER_DIMENSION]: phoneNumberId });
  }
}

/**
 * One value per record, CloudWatch computes the percentiles from them. EMF takes 100 values per metric and
 * document, and Powertools publishes (dropping the added dimensions) when a metric reaches them.
 */
function publishWaits(
  metrics: Metrics,
  waitsMs: readonly number[],
  dimensions: Record<string, string>,
): void {
  for (let start = 0; start < waitsMs.length; start += EMF_MAX_VALUES - 1) {
    metrics.addDimensions(dimensions);
    for (const wait of waitsMs.slice(start, start + EMF_MAX_VALUES - 1)) {
      metrics.addMetric(ConsumerLaneMetric.EventWaitTime, MetricUnit.Milliseconds, wait);
    }
    metrics.publishStoredMetrics();
  }
}

const EMF_MAX_VALUES = 100;
