/**
 * Handlers' own counts (`context.metrics`, handler-api.ts `HandlerMetrics`): checked here, kept in the
 * invocation's tally, emitted with the consumer's metrics at its end (consumer-metrics.ts).
 */

import { LANE_DIMENSION } from '../../contract/lanes.ts';
import {
  ConsumerFieldMetric,
  ConsumerLaneMetric,
  ConsumerMetric,
  FIELD_DIMENSION,
  PHONE_NUMBER_DIMENSION,
  ReceiverMetric,
  SERVICE_DIMENSION,
  SUBSCRIBER_DIMENSION,
} from '../../contract/metric-names.ts';
import type { ConsumerTally } from './consumer-tally.ts';
import type { HandlerMetrics } from './handler-api.ts';

/** A name or dimension that CloudWatch would refuse, or that would mix with this project's own metrics. */
export class InvalidMetricError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidMetricError';
  }
}

const NAME = /^[A-Za-z][A-Za-z0-9]{0,63}$/;
const OWN_NAMES: ReadonlySet<string> = new Set([
  ...Object.values(ConsumerFieldMetric),
  ...Object.values(ConsumerMetric),
  ...Object.values(ConsumerLaneMetric),
  ...Object.values(ReceiverMetric),
]);
const OWN_DIMENSIONS: ReadonlySet<string> = new Set([
  SERVICE_DIMENSION,
  SUBSCRIBER_DIMENSION,
  FIELD_DIMENSION,
  LANE_DIMENSION,
  PHONE_NUMBER_DIMENSION,
]);
/** CloudWatch takes dimension values of up to 1,024 characters; a count per value wants far fewer. */
const MAX_DIMENSION_VALUE = 256;

/** The `metrics` of a handler's context, counting into `tally`. */
export function handlerMetricsOf(tally: ConsumerTally): HandlerMetrics {
  return {
    count(name, dimension, value = 1) {
      if (!NAME.test(name) || OWN_NAMES.has(name)) {
        throw new InvalidMetricError(
          `Metric name "${name}": letters and digits, starting with a letter, at most 64, and none of this project's own.`,
        );
      }
      if (
        dimension !== undefined &&
        (!NAME.test(dimension.name) ||
          OWN_DIMENSIONS.has(dimension.name) ||
          dimension.value === '' ||
          dimension.value.length > MAX_DIMENSION_VALUE)
      ) {
        throw new InvalidMetricError(
          `Dimension of ${name}: a name of letters and digits (not ${[...OWN_DIMENSIONS].join(', ')}) and a value of 1 to ${MAX_DIMENSION_VALUE} characters.`,
        );
      }
      if (!Number.isFinite(value))
        throw new InvalidMetricError(`Metric ${name}: the value must be a number.`);
      tally.countOwn(name, dimension, value);
    },
  };
}
