/** The origins (field, number, account) an extraction holds: what the receiver routes a body or a part on. */
import type { EventOrigin } from '../../contract/event-origin.ts';
import type { EventExtraction } from './types.ts';

/** Everything a consumer would see of an extraction (events, id-less items, unknown fields, malformed parts). */
export function distinctOrigins(extraction: EventExtraction & { ok: true }): EventOrigin[] {
  const seen = new Map<string, EventOrigin>();
  const { events, unkeyed, unknownFields, malformed } = extraction;
  for (const { field, phoneNumberId, wabaId } of [...events, ...unkeyed, ...unknownFields, ...malformed]) {
    const id = `${field}\u0000${phoneNumberId ?? ''}\u0000${wabaId ?? ''}`;
    if (!seen.has(id)) seen.set(id, { field, phoneNumberId, wabaId });
  }
  return [...seen.values()];
}
