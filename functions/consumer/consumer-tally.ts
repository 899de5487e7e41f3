import {
  type ConsumerFieldMetricName,
  type ConsumerMetricName,
  ConsumerNumberMetric,
  type ConsumerNumberMetricName,
} from '../../contract/metric-names.ts';

export interface TallySnapshot {
  /** `Field` dimension value → metric → count. */
  readonly byField: ReadonlyMap<string, ReadonlyMap<ConsumerFieldMetricName, number>>;
  readonly plain: ReadonlyMap<ConsumerMetricName, number>;
  /** Milliseconds each record waited from its enqueue to its first handler call (`EventWaitTime`). */
  readonly waitsMs: readonly number[];
  /** Declared phone number id → metric → count (`PhoneNumberId` dimension). */
  readonly byNumber: ReadonlyMap<string, ReadonlyMap<ConsumerNumberMetricName, number>>;
  /** Declared phone number id → the waits of its records. */
  readonly waitsMsByNumber: ReadonlyMap<string, readonly number[]>;
  /** The handlers' own counts, by their dimension (`undefined`: none) → metric → count. */
  readonly own: ReadonlyMap<
    string,
    { readonly dimension?: OwnDimension; readonly counts: ReadonlyMap<string, number> }
  >;
}

/** The one dimension a handler's own count may carry. */
export interface OwnDimension {
  readonly name: string;
  readonly value: string;
}

const PER_NUMBER: ReadonlySet<string> = new Set(Object.values(ConsumerNumberMetric));

/**
 * Counts of one invocation, kept in memory and emitted once at its end, so metrics cost a handful of EMF
 * documents per invocation whatever the number of events.
 */
export class ConsumerTally {
  readonly #byField = new Map<string, Map<ConsumerFieldMetricName, number>>();
  readonly #plain = new Map<ConsumerMetricName, number>();
  readonly #waitsMs: number[] = [];
  readonly #byNumber = new Map<string, Map<ConsumerNumberMetricName, number>>();
  readonly #waitsMsByNumber = new Map<string, number[]>();
  readonly #declaredNumbers: ReadonlySet<string>;
  readonly #own = new Map<string, { dimension?: OwnDimension; counts: Map<string, number> }>();

  /** `declaredNumbers`: the subscriber's `numbers`, the only ones counted per number. */
  constructor(declaredNumbers: readonly string[] = []) {
    this.#declaredNumbers = new Set(declaredNumbers);
  }

  countForField(metric: ConsumerFieldMetricName, field: string, count = 1): void {
    increment(this.#byField, field, metric, count);
  }

  /** Counts an event's metric for its field and, when it is one per number and the number is declared, for it. */
  countForEvent(
    metric: ConsumerFieldMetricName,
    event: { readonly metricField: string; readonly phoneNumberId: string | undefined },
  ): void {
    this.countForField(metric, event.metricField);
    const number = this.#declared(event.phoneNumberId);
    if (number !== undefined && PER_NUMBER.has(metric)) {
      increment(this.#byNumber, number, metric as ConsumerNumberMetricName, 1);
    }
  }

  count(metric: ConsumerMetricName, count = 1): void {
    this.#plain.set(metric, (this.#plain.get(metric) ?? 0) + count);
  }

  /** A handler's own count (handler-metrics.ts checks it). */
  countOwn(name: string, dimension: OwnDimension | undefined, value: number): void {
    const row = dimension === undefined ? '' : `${dimension.name}\u0000${dimension.value}`;
    let entry = this.#own.get(row);
    if (entry === undefined) {
      entry = { ...(dimension === undefined ? {} : { dimension: { ...dimension } }), counts: new Map() };
      this.#own.set(row, entry);
    }
    entry.counts.set(name, (entry.counts.get(name) ?? 0) + value);
  }

  /** A record's wait; also its number's, when `phoneNumberId` is declared. */
  observeWait(milliseconds: number, phoneNumberId?: string): void {
    this.#waitsMs.push(milliseconds);
    const number = this.#declared(phoneNumberId);
    if (number === undefined) return;
    const waits = this.#waitsMsByNumber.get(number);
    if (waits === undefined) this.#waitsMsByNumber.set(number, [milliseconds]);
    else waits.push(milliseconds);
  }

  snapshot(): TallySnapshot {
    return {
      byField: this.#byField,
      plain: this.#plain,
      waitsMs: this.#waitsMs,
      byNumber: this.#byNumber,
      waitsMsByNumber: this.#waitsMsByNumber,
      own: this.#own,
    };
  }

  #declared(phoneNumberId: string | undefined): string | undefined {
    return phoneNumberId !== undefined && this.#declaredNumbers.has(phoneNumberId)
      ? phoneNumberId
      : undefined;
  }

  /** Flat view for tests and summaries: `Metric` or `Metric/Field` → count. */
  toRecord(): Record<string, number> {
    const flat: Record<string, number> = {};
    for (const [field, counts] of this.#byField) {
      for (const [metric, count] of counts) flat[`${metric}/${field}`] = count;
    }
    for (const [metric, count] of this.#plain) flat[metric] = count;
    for (const [number, counts] of this.#byNumber) {
      for (const [metric, count] of counts) flat[`${metric}/number ${number}`] = count;
    }
    for (const { dimension, counts } of this.#own.values()) {
      for (const [metric, count] of counts) {
        flat[dimension === undefined ? metric : `${metric}/${dimension.name} ${dimension.value}`] = count;
      }
    }
    return flat;
  }
}

function increment<Metric extends string>(
  table: Map<string, Map<Metric, number>>,
  row: string,
  metric: Metric,
  count: number,
): void {
  let counts = table.get(row);
  if (counts === undefined) {
    counts = new Map();
    table.set(row, counts);
  }
  counts.set(metric, (counts.get(metric) ?? 0) + count);
}
