import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PHONE_NUMBER_ID, privateMessagesBody, WABA_ID } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { MAX_LOSSLESS_NESTING } from '../../../functions/events/parse-json.ts';
import { escapeForQueue, readDelivery } from '../../../functions/receiver/read-delivery.ts';

describe('readDelivery', () => {
  const body = privateMessagesBody(3, { textRepeat: 2 });

  it('reads bytes and text alike: the text unchanged, its UTF-8 size, the event count', () => {
    const expected = {
      ok: true,
      text: body,
      bytes: Buffer.byteLength(body),
      events: 3,
      inboundMessages: 3,
      eventFields: ['messages'],
      eventOrigins: [{ field: 'messages', phoneNumberId: PHONE_NUMBER_ID, wabaId: WABA_ID }],
      unknownFields: [],
      malformedParts: 0,
    };
    expect(readDelivery(Buffer.from(body))).toEqual(expected);
    expect(readDelivery(body)).toEqual(expected);
    expect(Buffer.byteLength(body)).toBeGreaterThan(body.length);
  });

  it('measures the escaped text when characters SQS refuses were escaped', () => {
    const raw = body.replace('wamid.', 'wamid.\uFFFF');
    const reading = readDelivery(Buffer.from(raw));
    expect(reading).toMatchObject({ ok: true, events: 3 });
    if (reading.ok) expect(reading.bytes).toBe(Buffer.byteLength(reading.text));
    if (reading.ok) expect(reading.bytes).toBe(Buffer.byteLength(raw) + 3); // 3 UTF-8 bytes become 6 ASCII
  });

  it.each([
    ['truncated JSON', Buffer.from(body.slice(0, -1)), 'invalid-json'],
    ['bytes that are not UTF-8', Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), 'invalid-json'],
    [
      'a BOM before the JSON',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]),
      'invalid-json',
    ],
    ['an empty body', Buffer.alloc(0), 'invalid-json'],
    ['another object', Buffer.from('{"object":"page","entry":[]}'), 'not-whatsapp-envelope'],
    ['an array', Buffer.from('[]'), 'not-whatsapp-envelope'],
  ])('rejects %s', (_, raw, reason) => {
    expect(readDelivery(raw)).toMatchObject({ ok: false, reason });
  });

  it('never puts body content in the rejection detail', () => {
    const reading = readDelivery('{"object":"whatsapp_business_account","entry":[secret text');
    expect(reading).toMatchObject({ ok: false, reason: 'invalid-json' });
    expect(JSON.stringify(reading)).not.toContain('secret');
  });

  it('lists the fields of its events once each, in the order first seen (what subscribers are routed on)', () => {
    const reading = readDelivery(
      readFileSync(new URL('../../fixtures/webhooks/account_update.json', import.meta.url)),
    );
    expect(reading).toMatchObject({
      ok: true,
      events: 2,
      inboundMessages: 0,
      eventFields: ['account_update'],
    });
    const mixed = JSON.parse(body);
    mixed.entry.push({
      id: '2',
      time: 3,
      changes: [
        { field: 'account_update', value: { phone_number: '1', event: 'PARTNER_ADDED' } },
        { field: 'future_field', value: {} },
      ],
    });
    expect(readDelivery(JSON.stringify(mixed))).toMatchObject({
      events: 4,
      inboundMessages: 3,
      eventFields: ['messages', 'account_update'],
      unknownFields: ['future_field'],
    });
  });

  it('refuses JSON nested deeper than the lossless parser takes, whatever its numbers, and takes the limit itself', () => {
    // V8 parses any depth; the consumer's lossless parser, and so any later read of a part, takes 1000 levels.
    const nestedIn = (depth: number, inner: string) =>
      `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"metadata":{},"messages":[{"id":"wamid.a","from":"1"}],"x":${'['.repeat(depth)}${inner}${']'.repeat(depth)}}}]}]}`;
    const levelsAround = 6; // the envelope, its entry array, the entry, its changes, the change, its value
    for (const inner of ['1', '12345678901234567890']) {
      expect(readDelivery(nestedIn(MAX_LOSSLESS_NESTING - levelsAround + 1, inner))).toMatchObject({
        ok: false,
        reason: 'invalid-json',
      });
      expect(readDelivery(nestedIn(MAX_LOSSLESS_NESTING - levelsAround, inner))).toMatchObject({ ok: true });
    }
  });

  it('lists unknown fields and counts malformed parts', () => {
    const reading = readDelivery(
      JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [{ id: '1', time: 2, changes: [{ field: 'future_field', value: {} }, 'not a change'] }],
      }),
    );
    expect(reading).toMatchObject({
      ok: true,
      events: 0,
      eventFields: [],
      unknownFields: ['future_field'],
      malformedParts: 1,
    });
  });
});

describe('escapeForQueue', () => {
  it('escapes only U+FFFE and U+FFFF and returns other text as the same string', () => {
    expect(escapeForQueue('{"a":"\uFFFE-\uFFFF-\uFFFD-é"}')).toBe('{"a":"\\ufffe-\\uffff-\uFFFD-é"}');
    const plain = '{"a":"é😀"}';
    expect(escapeForQueue(plain)).toBe(plain);
  });
});
