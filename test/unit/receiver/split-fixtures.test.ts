/** Every webhook fixture, split at a range of limits, keeps its events in order (escaped names, big ids…). */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import { splitDelivery } from '../../../functions/receiver/split-delivery.ts';
import { keysOfEnvelope } from '../../support/webhooks/event-keys.ts';

const directory = new URL('../../fixtures/webhooks/', import.meta.url);
const envelopes = readdirSync(directory)
  .filter((name) => name.endsWith('.json'))
  .map((name) => ({ name, text: readFileSync(new URL(name, directory), 'utf8') }))
  .filter(({ text }) => extractEvents(text).ok);

describe('splitDelivery on the webhook fixtures', () => {
  it('has fixtures to split', () => {
    expect(envelopes.length).toBeGreaterThan(20);
  });

  it.each(envelopes)('$name keeps its events in order at every limit', ({ text }) => {
    const bytes = Buffer.byteLength(text);
    for (const maxBytes of [bytes, Math.ceil(bytes / 2), Math.ceil(bytes / 3), 700, 400]) {
      const { parts, oversized } = splitDelivery(text, maxBytes);
      for (const part of parts) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(maxBytes);
      const fromParts = parts.flatMap(keysOfEnvelope);
      if (oversized.length === 0) expect(fromParts).toEqual(keysOfEnvelope(text));
      else
        expect([...fromParts, ...oversized.flatMap(keysOfEnvelope)].sort()).toEqual(
          keysOfEnvelope(text).sort(),
        );
    }
  });
});
