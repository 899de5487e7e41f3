import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { LANE_DIMENSION, type LaneName } from '../../contract/lanes.ts';
import { ConsumerLaneMetric, FIELD_DIMENSION } from '../../contract/metric-names.ts';
import type { TallySnapshot } from './consumer-tally.ts';

/**
 * Emits one invocation's tally as CloudWatch EMF. An EMF document gives each dimension one value, so the
 * `Field`-dimensioned metrics need one document per field seen, and the undimensioned ones one more:
 * at most (fields seen + 2) documents per invocation, never one per event (the last one: every record's wait,
 * with the `Lane` dimension). Metrics that stayed at zero are
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
  // One value per record, CloudWatch computes the lane's percentiles from them. EMF takes 100 values per
  // metric and document, and Powertools publishes (dropping the added dimension) when a metric reaches them.
  for (let start = 0; start < tally.waitsMs.length; start += EMF_MAX_VALUES - 1) {
    metrics.addDimension(LANE_DIMENSION, lane);
    for (const wait of tally.waitsMs.slice(start, start + EMF_MAX_VALUES - 1)) {
      metrics.addMetric(ConsumerLaneMetric.EventWaitTime, MetricUnit.Milliseconds, wait);
    }
    metrics.publishStoredMetrics();
  }
}

const EMF_MAX_VALUES = 100;
