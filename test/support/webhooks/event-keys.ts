/** The event keys of a body as the extractor derives them (the code under test), for tests to compare. */
import { extractEvents } from '../../../functions/events/extract-events.ts';

/** The keys in walk order; none for a body the receiver would quarantine. */
export function keysOfBody(body: string | Uint8Array): string[] {
  const extraction = extractEvents(body);
  return extraction.ok ? extraction.events.map((event) => event.key) : [];
}

/** The keys in walk order of a body that must be a webhook envelope: anything else fails the test. */
export function keysOfEnvelope(body: string | Uint8Array): string[] {
  const extraction = extractEvents(body);
  if (!extraction.ok) throw new Error(`Not a webhook envelope (${extraction.reason}): ${extraction.detail}`);
  return extraction.events.map((event) => event.key);
}
