import type { ConsumerFieldMetricName, ConsumerMetricName } from '../../contract/metric-names.ts';

export interface TallySnapshot {
  /** `Field` dimension value → metric → count. */
  readonly byField: ReadonlyMap<string, ReadonlyMap<ConsumerFieldMetricName, number>>;
  readonly plain: ReadonlyMap<ConsumerMetricName, number>;
  /** Milliseconds each record waited from its enqueue to its first handler call (`EventWaitTime`). */
  readonly waitsMs: readonly number[];
}

/**
 * Counts of one invocation, kept in memory and emitted once at its end, so metrics cost a handful of EMF
 * documents per invocation whatever the number of events.
 */
export class ConsumerTally {
  readonly #byField = new Map<string, Map<ConsumerFieldMetricName, number>>();
  readonly #plain = new Map<ConsumerMetricName, number>();
  readonly #waitsMs: number[] = [];

  countForField(metric: ConsumerFieldMetricName, field: string, count = 1): void {
    let counts = this.#byField.get(field);
    if (counts === undefined) {
      counts = new Map();
      this.#byField.set(field, counts);
    }
    counts.set(metric, (counts.get(metric) ?? 0) + count);
  }

  count(metric: ConsumerMetricName, count = 1): void {
    this.#plain.set(metric, (this.#plain.get(metric) ?? 0) + count);
  }

  observeWait(milliseconds: number): void {
    this.#waitsMs.push(milliseconds);
  }

  snapshot(): TallySnapshot {
    return { byField: this.#byField, plain: this.#plain, waitsMs: this.#waitsMs };
  }

  /** Flat view for tests and summaries: `Metric` or `Metric/Field` → count. */
  toRecord(): Record<string, number> {
    const flat: Record<string, number> = {};
    for (const [field, counts] of this.#byField) {
      for (const [metric, count] of counts) flat[`${metric}/${field}`] = count;
    }
    for (const [metric, count] of this.#plain) flat[metric] = count;
    return flat;
  }
}
