/**
 * Reads CloudWatch Embedded Metric Format documents (what Powertools Metrics prints, one JSON line each)
 * back into metric points, so the local stack can chart the very metrics the handlers emit in AWS.
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 */

export interface MetricPoint {
  readonly namespace: string;
  readonly name: string;
  /** The sum of the values (EMF allows an array of values for one metric). */
  readonly value: number;
  /** Each value, for metrics read as a distribution (`EventWaitTime`); `[value]` when absent. */
  readonly values?: readonly number[];
  /** Dimension name → value, for the dimension set the metric was declared with. */
  readonly dimensions: Readonly<Record<string, string>>;
  /** Epoch ms. */
  readonly timestamp: number;
}

interface EmfDirective {
  Namespace?: unknown;
  Dimensions?: unknown;
  Metrics?: unknown;
}

/** The metric points of one EMF document, or undefined when `document` is not one. */
export function parseEmf(document: unknown): MetricPoint[] | undefined {
  if (typeof document !== 'object' || document === null) return undefined;
  const root = document as Record<string, unknown>;
  const aws = root._aws as { Timestamp?: unknown; CloudWatchMetrics?: unknown } | undefined;
  if (typeof aws !== 'object' || aws === null || !Array.isArray(aws.CloudWatchMetrics)) return undefined;
  const timestamp = typeof aws.Timestamp === 'number' ? aws.Timestamp : Date.now();
  const points: MetricPoint[] = [];
  for (const directive of aws.CloudWatchMetrics as EmfDirective[]) {
    const namespace = typeof directive.Namespace === 'string' ? directive.Namespace : '';
    const dimensionNames = Array.isArray(directive.Dimensions)
      ? [
          ...new Set(
            (directive.Dimensions as unknown[]).flat().filter((d): d is string => typeof d === 'string'),
          ),
        ]
      : [];
    const dimensions: Record<string, string> = {};
    for (const name of dimensionNames) {
      if (root[name] !== undefined) dimensions[name] = String(root[name]);
    }
    for (const metric of Array.isArray(directive.Metrics) ? directive.Metrics : []) {
      const name = (metric as { Name?: unknown }).Name;
      if (typeof name !== 'string') continue;
      const raw = root[name];
      const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is number => typeof v === 'number');
      if (values.length === 0) continue;
      points.push({
        namespace,
        name,
        value: values.reduce((a, b) => a + b, 0),
        values,
        dimensions,
        timestamp,
      });
    }
  }
  return points;
}

/** Parses one line of output as JSON when it looks like an object; undefined otherwise. */
export function parseJsonLine(line: string): unknown {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}
