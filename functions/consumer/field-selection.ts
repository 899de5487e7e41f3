/**
 * A subscriber's field filter at its consumer (docs/design.md §7). The receiver already keeps away the
 * deliveries that hold none of a subscriber's fields; a delivery it does get may still carry events of other
 * fields. Those are set aside here, before the claim pass: they cost no DynamoDB request, never reach a
 * handler, and are only counted (`EventsFilteredOut`).
 */
import { wantsField } from '../../contract/subscribers.ts';
import type { EventExtraction } from '../events/types.ts';

/** The events (and unknown fields) of a body that the subscriber does not want, by `Field` dimension. */
export interface FilteredOut {
  readonly field: string;
  /** The value of the `Field` metric dimension: `message`, `status`, `error` or the field itself. */
  readonly metricField: string;
}

export interface FieldSelection {
  /** The extraction with only the wanted events and unknown fields left. */
  readonly extraction: EventExtraction;
  readonly filteredOut: readonly FilteredOut[];
}

/**
 * Keeps the events of `fields` (`undefined`: every field). An unusable body is returned as it is: it is
 * quarantined whatever the fields, as nobody can tell which fields it held.
 */
export function selectFields(
  extraction: EventExtraction,
  fields: readonly string[] | undefined,
): FieldSelection {
  if (fields === undefined || !extraction.ok) return { extraction, filteredOut: [] };
  const filteredOut: FilteredOut[] = [];
  const events = extraction.events.filter((event) => {
    if (wantsField(fields, event.field)) return true;
    filteredOut.push({ field: event.field, metricField: event.metricField });
    return false;
  });
  const unknownFields = extraction.unknownFields.filter((unknown) => {
    if (wantsField(fields, unknown.field)) return true;
    filteredOut.push({ field: unknown.field, metricField: unknown.field });
    return false;
  });
  return { extraction: { ...extraction, events, unknownFields }, filteredOut };
}
