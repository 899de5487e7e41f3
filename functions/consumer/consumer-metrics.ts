import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { FIELD_DIMENSION } from '../../contract/metric-names.ts';
import type { TallySnapshot } from './consumer-tally.ts';

/**
 * Emits one invocation's tally as CloudWatch EMF. An EMF document gives each dimension one value, so the
 * `Field`-dimensioned metrics need one document per field seen, and the undimensioned ones one more:
 * at most (fields seen + 1) documents per invocation, never one per event. Metrics that stayed at zero are
 * not emitted (dashboards fill gaps with 0). `publishStoredMetrics` clears the added dimension each time.
 *
 * Synchronous from first `addMetric` to `publishStoredMetrics`, so invocations sharing one `Metrics`
 * instance (the local poller runs several in one process) cannot interleave their documents.
 */
export function publishTally(metrics: Metrics, tally: TallySnapshot): void {
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
}
