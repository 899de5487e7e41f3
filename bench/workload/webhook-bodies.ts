/**
 * WhatsApp Cloud API webhook bodies for the benchmarks, shaped like Meta's: a WABA entry, `messages` changes
 * with metadata, contacts and text messages, or delivery statuses with pricing. Non-ASCII characters are
 * written as `\uXXXX` escapes, as Meta sends them. Deterministic for a given random source.
 */

export const BENCH_WABA_ID = '102290129340398';
export const BENCH_PHONE_NUMBER_ID = '106540352242922';
export const BENCH_DISPLAY_PHONE_NUMBER = '15550783881';

const WORDS = [
  'hola',
  'pedido',
  'gracias',
  'olá',
  'entrega',
  'amanhã',
  'price',
  'color',
  'available',
  'ñandú',
  'café',
  'ticket',
  'refund',
  'size',
  'tomorrow',
  '👍',
  'order',
  'Straße',
];

export interface InboundTextMessage {
  readonly id: string;
  readonly from: string;
  readonly name: string;
  readonly text: string;
  readonly timestamp: string;
}

/** A wamid shaped like Meta's (`wamid.` + base64 of an opaque id), unique for a unique `serial`. */
export function benchWamid(serial: number, random: () => number): string {
  const bytes = Buffer.alloc(36);
  bytes.write('\u001c\u0018\u000b', 0, 'latin1');
  bytes.writeUInt32BE(serial, 3);
  for (let i = 7; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
  return `wamid.${bytes.toString('base64')}`;
}

export function inboundTextMessage(serial: number, random: () => number): InboundTextMessage {
  const wordCount = 3 + Math.floor(random() * 25);
  const words = Array.from({ length: wordCount }, () => WORDS[Math.floor(random() * WORDS.length)]);
  return {
    id: benchWamid(serial, random),
    from: `1650555${String(serial % 10_000).padStart(4, '0')}`,
    name: `Customer ${serial}`,
    text: words.join(' '),
    timestamp: String(1_749_416_383 + serial),
  };
}

/** The `value` of a `messages` change holding one inbound text message. */
export function messageValue(message: InboundTextMessage): object {
  return {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: BENCH_DISPLAY_PHONE_NUMBER, phone_number_id: BENCH_PHONE_NUMBER_ID },
    contacts: [{ profile: { name: message.name }, wa_id: message.from }],
    messages: [
      {
        from: message.from,
        id: message.id,
        timestamp: message.timestamp,
        type: 'text',
        text: { body: message.text },
      },
    ],
  };
}

/** The `value` of a `messages` change holding several inbound messages (a batched delivery). */
export function messagesValue(messages: readonly InboundTextMessage[]): object {
  return {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: BENCH_DISPLAY_PHONE_NUMBER, phone_number_id: BENCH_PHONE_NUMBER_ID },
    contacts: messages.map((message) => ({ profile: { name: message.name }, wa_id: message.from })),
    messages: messages.map((message) => ({
      from: message.from,
      id: message.id,
      timestamp: message.timestamp,
      type: 'text',
      text: { body: message.text },
    })),
  };
}

/** One delivery carrying several messages, one change each. */
export function multiMessageBody(messages: readonly InboundTextMessage[]): string {
  return metaJson(envelope(messages.map((message) => ({ value: messageValue(message), field: 'messages' }))));
}

/** The `value` of a `messages` change holding one delivery status of an outbound message. */
export function statusValue(serial: number, random: () => number): object {
  const statuses = ['sent', 'delivered', 'read'];
  return {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: BENCH_DISPLAY_PHONE_NUMBER, phone_number_id: BENCH_PHONE_NUMBER_ID },
    statuses: [
      {
        id: benchWamid(serial, random),
        status: statuses[serial % statuses.length],
        timestamp: String(1_750_263_773 + serial),
        recipient_id: `1650555${String(serial % 10_000).padStart(4, '0')}`,
        conversation: { id: `c${serial.toString(16).padStart(31, '0')}`, origin: { type: 'utility' } },
        pricing: { billable: true, pricing_model: 'PMP', category: 'utility' },
      },
    ],
  };
}

/** Serialises like Meta: compact JSON, non-ASCII escaped. */
export function metaJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export function envelope(changes: readonly object[], entry: Record<string, unknown> = {}): object {
  return { object: 'whatsapp_business_account', entry: [{ id: BENCH_WABA_ID, ...entry, changes }] };
}

/** One delivery with one inbound message: the shape of nearly every live `messages` webhook. */
export function singleMessageBody(message: InboundTextMessage): string {
  return metaJson(envelope([{ value: messageValue(message), field: 'messages' }]));
}

/**
 * The same message in other bytes: keys in another order, an entry `time`, indented. A Meta retry of a
 * re-batched delivery looks like this: a different body (so a body hash differs), the same event.
 */
export function reserializedMessageBody(message: InboundTextMessage): string {
  const value = messageValue(message) as Record<string, unknown>;
  const reordered = Object.fromEntries(Object.entries(value).reverse());
  return JSON.stringify(
    {
      entry: [{ changes: [{ field: 'messages', value: reordered }], time: 1_749_416_400, id: BENCH_WABA_ID }],
      object: 'whatsapp_business_account',
    },
    null,
    1,
  );
}

/**
 * A batched delivery of `updates` events (one change each), alternating inbound messages and statuses, as
 * Meta sends up to 1000 updates in one POST. 1000 updates come to about 0.45 MB, so the receiver splits it.
 */
export function batchedBody(updates: number, random: () => number, firstSerial = 0): string {
  const changes = Array.from({ length: updates }, (_, i) => {
    const serial = firstSerial + i;
    const value =
      i % 2 === 0 ? messageValue(inboundTextMessage(serial, random)) : statusValue(serial, random);
    return { value, field: 'messages' };
  });
  return metaJson(envelope(changes));
}
