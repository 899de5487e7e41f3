/**
 * A subscriber's selection at its consumer (docs/design.md §7): its `fields`, `numbers` and `wabas`. The
 * receiver already keeps away the deliveries that hold nothing the subscriber wants; a delivery it does get
 * may still carry events of other fields, numbers or accounts. Those are set aside here, before the claim
 * pass: they cost no DynamoDB request, never reach a handler, and are only counted (`EventsFilteredOut`).
 */
import { type EventSelection, wantsEvent } from '../../contract/event-origin.ts';
import type { EventExtraction } from '../events/types.ts';

/** The events (and unknown fields) of a body that the subscriber does not want, by `Field` dimension. */
export interface FilteredOut {
  readonly field: string;
  /** The value of the `Field` metric dimension: `message`, `status`, `error` or the field itself. */
  readonly metricField: string;
}

export interface SelectedEvents {
  /** The extraction with only the wanted events, id-less items and unknown fields left. */
  readonly extraction: EventExtraction;
  readonly filteredOut: readonly FilteredOut[];
}

/**
 * Keeps what `selection` wants (no list: everything). An id-less item of another number is no concern of this
 * subscriber's: the subscriber that wants it quarantines its record. An unusable body, and the malformed parts
 * of a usable one, are kept as they are: nobody can tell whose they were.
 */
export function selectEvents(extraction: EventExtraction, selection: EventSelection): SelectedEvents {
  const { fields, numbers, wabas } = selection;
  if ((fields === undefined && numbers === undefined && wabas === undefined) || !extraction.ok) {
    return { extraction, filteredOut: [] };
  }
  const filteredOut: FilteredOut[] = [];
  const keep = <T extends Parameters<typeof wantsEvent>[1]>(item: T, metricField: string): boolean => {
    if (wantsEvent(selection, item)) return true;
    filteredOut.push({ field: item.field, metricField });
    return false;
  };
  const events = extraction.events.filter((event) => keep(event, event.metricField));
  const unkeyed = extraction.unkeyed.filter((item) => keep(item, item.metricField));
  const unknownFields = extraction.unknownFields.filter((unknown) => keep(unknown, unknown.field));
  return { extraction: { ...extraction, events, unkeyed, unknownFields }, filteredOut };
}
