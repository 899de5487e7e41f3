/**
 * The forward subscriber's bodies (functions/forward/forward-bodies.ts): over every fixture, each event's `meta`
 * body is Meta's envelope holding that event alone, in ASCII bytes, and yields back exactly its key; a whole
 * delivery part's body yields back its keys in order; and a real consumer library (whatsapp-api-js 6.3, which
 * reads `entry[0].changes[0]` and escapes non-ASCII before it hashes) verifies and parses what we sign.
 */
import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WhatsAppAPI } from 'whatsapp-api-js';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import type { WebhookEvent } from '../../../functions/events/types.ts';
import { asciiJson, eventBody, metaEnvelope } from '../../../functions/forward/forward-bodies.ts';
import { messagesBody, textMessage } from './messages-body.ts';

const FIXTURES = new URL('../../fixtures/webhooks/', import.meta.url);
const fixtures = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.json'))
  .map((name) => ({ name, body: readFileSync(new URL(name, FIXTURES), 'utf8') }));

function eventsOf(body: string): WebhookEvent[] {
  const extraction = extractEvents(body);
  return extraction.ok ? extraction.events : [];
}

const withEvents = fixtures.filter(({ body }) => eventsOf(body).length > 0);

describe('the meta body', () => {
  it('covers the fixtures of every field', () => {
    expect(withEvents.length).toBeGreaterThan(50);
  });

  it.each(withEvents)(
    'holds each event of $name alone, in ASCII, and yields back exactly its key',
    ({ body }) => {
      const events = eventsOf(body);
      const again = eventsOf(body);
      events.forEach((event, index) => {
        const forwarded = asciiJson(metaEnvelope([event]));
        expect(forwarded).toMatch(/^[\0-~]*$/);
        expect(eventsOf(forwarded).map(({ key }) => key)).toEqual([event.key]);
        // A redelivery parses the same bytes again: the same body, byte for byte.
        expect(asciiJson(metaEnvelope([again[index] as WebhookEvent]))).toBe(forwarded);
      });
    },
  );

  it.each(withEvents)('holds all the events of $name together, in order, with batch', ({ body }) => {
    const events = eventsOf(body);
    expect(eventsOf(asciiJson(metaEnvelope(events))).map(({ key }) => key)).toEqual(
      events.map(({ key }) => key),
    );
  });

  it("keeps a message's metadata and the contact that names its sender, and no other message's", () => {
    const body = messagesBody(
      [
        { profile: { name: 'Ana' }, wa_id: '15551230001' },
        { profile: { name: 'Bo' }, user_id: 'US.200', wa_id: '15551230002' },
      ],
      [
        textMessage('wamid.A', '15551230001', 'a'),
        { from_user_id: 'US.200', id: 'wamid.B', timestamp: '2', type: 'text', text: { body: 'b' } },
      ],
    );
    const events = eventsOf(body);
    const [first, second] = events;
    const value = (event: WebhookEvent | undefined) =>
      JSON.parse(asciiJson(metaEnvelope(event === undefined ? [] : [event]))).entry[0].changes[0].value;
    expect(value(first)).toEqual({
      messaging_product: 'whatsapp',
      metadata: { display_phone_number: '15550001111', phone_number_id: 'PNID' },
      contacts: [{ profile: { name: 'Ana' }, wa_id: '15551230001' }],
      messages: [{ from: '15551230001', id: 'wamid.A', timestamp: '1', type: 'text', text: { body: 'a' } }],
    });
    expect(value(second).contacts).toEqual([
      { profile: { name: 'Bo' }, user_id: 'US.200', wa_id: '15551230002' },
    ]);
  });

  it("groups a part's events as Meta does: one entry per WABA, each change with its own metadata", () => {
    const value = (phone: string, messages: object[]) => ({
      messaging_product: 'whatsapp',
      metadata: { display_phone_number: phone, phone_number_id: `PNID-${phone}` },
      contacts: messages.map((message) => ({ wa_id: (message as { from: string }).from })),
      messages,
    });
    const entry = (id: string, phone: string, messages: object[]) => ({
      id,
      changes: [{ field: 'messages', value: value(phone, messages) }],
    });
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        entry('WABA-1', '111', [textMessage('wamid.A', '15551230001', 'a')]),
        entry('WABA-2', '222', [textMessage('wamid.B', '15551230002', 'b')]),
        entry('WABA-1', '333', [textMessage('wamid.C', '15551230003', 'c')]),
        { ...entry('WABA-1', '444', [textMessage('wamid.D', '15551230004', 'd')]), time: 1749416383 },
      ],
    });
    const forwarded = JSON.parse(asciiJson(metaEnvelope(eventsOf(body))));
    expect(
      forwarded.entry.map(
        (e: { id: string; changes: { value: { metadata: { display_phone_number: string } } }[] }) => [
          e.id,
          e.changes.map(({ value }) => value.metadata.display_phone_number),
        ],
      ),
    ).toEqual([
      ['WABA-1', ['111', '333']],
      ['WABA-2', ['222']],
      // An entry with a time of its own stays apart: some keys read it.
      ['WABA-1', ['444']],
    ]);
    expect(forwarded.entry[0].changes[1].value.contacts).toEqual([{ wa_id: '15551230003' }]);
    expect(
      eventsOf(asciiJson(forwarded))
        .map(({ key }) => key)
        .sort(),
    ).toEqual(
      eventsOf(body)
        .map(({ key }) => key)
        .sort(),
    );
  });

  it('writes non-ASCII text as lowercase \\u escapes and keeps number lexemes', () => {
    expect(asciiJson({ text: 'olá 😀\u007f' })).toBe('{"text":"ol\\u00e1 \\ud83d\\ude00\\u007f"}');
    const body = readFileSync(new URL('large-template-id.json', FIXTURES), 'utf8');
    const events = eventsOf(body);
    const template = body.match(/\d{17,}/)?.[0];
    expect(template).toBeDefined();
    expect(asciiJson(metaEnvelope(events))).toContain(template);
  });
});

describe('a consumer written for Meta, fed what we forward', () => {
  const secret = 'the-app-secret';
  const sign = (bytes: string) => `sha256=${createHmac('sha256', secret).update(bytes).digest('hex')}`;

  it('verifies the signature over emoji text and hands its handler each message of a two-message body', async () => {
    const body = messagesBody(
      [{ profile: { name: 'Zoë' }, wa_id: '15551230001' }],
      [textMessage('wamid.A', '15551230001', 'olá 😀'), textMessage('wamid.B', '15551230001', 'two', '2')],
    );
    const received: string[] = [];
    const api = new WhatsAppAPI({ token: 'unused', appSecret: secret, v: 'v24.0' });
    api.on.message = ({ message }) => {
      received.push(`${message.id} ${message.type === 'text' ? message.text.body : ''}`);
    };
    const events = eventsOf(body);
    for (const event of events) {
      const forwarded = asciiJson(metaEnvelope([event]));
      await api.post(JSON.parse(forwarded), forwarded, sign(forwarded));
    }
    expect(received).toEqual(['wamid.A olá 😀', 'wamid.B two']);

    // The control: raw UTF-8 bytes signed as they are fail that library's check.
    const raw = body.replace('wamid.B', 'wamid.C');
    await expect(api.post(JSON.parse(raw), raw, sign(raw))).rejects.toThrow();
  });
});

describe('the event body', () => {
  it('names the event by key, field and kind, with its payload and when the receiver took it', () => {
    const [event] = eventsOf(readFileSync(new URL('status-read.json', FIXTURES), 'utf8'));
    const body = eventBody(event as WebhookEvent, { receivedAt: '2026-12-03T10:00:00.000Z' });
    expect(body).toEqual({
      key: event?.key,
      field: 'messages',
      kind: 'status',
      receivedAt: '2026-12-03T10:00:00.000Z',
      event: event?.payload,
    });
    expect(eventBody(event as WebhookEvent, { receivedAt: 'x', conversation: 'PNID:US.1' })).toMatchObject({
      conversation: 'PNID:US.1',
    });
  });
});
