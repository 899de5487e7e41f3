/**
 * The house's one builder of WhatsApp Cloud API webhook bodies, for every tool that plays Meta (the tests, the
 * benchmarks, the outage drill, the protocol checker, the capacity simulation), shaped like Meta's examples:
 * a WABA entry, `messages` changes with metadata, contacts and text messages, or delivery statuses with
 * pricing. They carry names, phone numbers and message texts, so that tests can check none of them leaks into
 * logs. The random builders are deterministic for a given random source.
 */
import { type CustomerIds, contactOf } from './customers.ts';

export const DISPLAY_PHONE_NUMBER = '15550783881';
export const PHONE_NUMBER_ID = '106540352242922';
export const WABA_ID = '102290129340398';

const DEFAULT_MESSAGE_TIMESTAMP = '1749416383';

/**
 * An inbound text message and its sender. Since 2026 Meta names a customer by a business-scoped user id
 * (BSUID) and sends the phone number only within 30 days of the last exchange: a message may carry `from`,
 * `from_user_id` or both, its contact `wa_id` only when the phone number came.
 */
export interface InboundMessage {
  readonly id: string;
  /** The customer's phone number: the message's `from` and the contact's `wa_id`, when Meta sent it. */
  readonly from?: string;
  /** The customer's BSUID: the message's `from_user_id` and the contact's `user_id`. */
  readonly userId?: string;
  /** The BSUID is only in the contact (its `user_id`), the message names the phone number alone. */
  readonly userIdInContactOnly?: boolean;
  /** The contact's `profile.username`. */
  readonly username?: string;
  readonly name: string;
  readonly text: string;
  readonly timestamp?: string;
}

export interface OutboundStatus {
  readonly id: string;
  readonly status: string;
  /** `recipient_id`: the customer's phone number (the group's id for a group send), when Meta sent it. */
  readonly recipientId?: string;
  /** `recipient_user_id`: the customer's BSUID (one-to-one sends, since 2026). */
  readonly recipientUserId?: string;
  readonly timestamp: string;
  /** `recipient_type: group`: one status per participant, besides the group's own. */
  readonly group?: boolean;
  /** `recipient_participant_id`: a group participant's phone number. */
  readonly recipientParticipantId?: string;
  /** `recipient_participant_user_id`: a group participant's BSUID (alone for a participant with a username). */
  readonly recipientParticipantUserId?: string;
  readonly conversationId?: string;
}

/** The business number a `messages` change is about. */
export interface NumberMetadata {
  readonly display_phone_number: string;
  readonly phone_number_id: string;
}

const METADATA: NumberMetadata = {
  display_phone_number: DISPLAY_PHONE_NUMBER,
  phone_number_id: PHONE_NUMBER_ID,
};

/** An inbound message's sender fields for a customer named by `ids` (customers.ts). */
export function senderNamedBy(ids: CustomerIds): Pick<InboundMessage, 'from' | 'userId' | 'username'> {
  return { from: ids.phone, userId: ids.bsuid, username: ids.username };
}

/** A one-to-one status's recipient fields for a customer named by `ids` (customers.ts). */
export function recipientNamedBy(ids: CustomerIds): Pick<OutboundStatus, 'recipientId' | 'recipientUserId'> {
  return { recipientId: ids.phone, recipientUserId: ids.bsuid };
}

/** The `value` of a `messages` change holding inbound text messages (several: a batched delivery). */
export function messagesValue(
  messages: readonly InboundMessage[],
  metadata: NumberMetadata = METADATA,
): Record<string, unknown> {
  return {
    messaging_product: 'whatsapp',
    metadata,
    contacts: contactsOf(messages),
    messages: messages.map((m) => ({
      ...(m.from !== undefined && { from: m.from }),
      ...(m.userId !== undefined && !m.userIdInContactOnly && { from_user_id: m.userId }),
      id: m.id,
      timestamp: m.timestamp ?? DEFAULT_MESSAGE_TIMESTAMP,
      type: 'text',
      text: { body: m.text },
    })),
  };
}

/**
 * One contact per sender, as Meta lists them: `wa_id` when one of the sender's messages carries the phone
 * number, `user_id` when it has a BSUID, `profile.username` when it has one.
 */
function contactsOf(messages: readonly InboundMessage[]): object[] {
  const phones = new Map<string, string | undefined>();
  const contacts = new Map<string, object>();
  for (const m of messages) {
    const sender = m.userId ?? m.from ?? m.id;
    const phone = m.from ?? phones.get(sender);
    phones.set(sender, phone);
    const ids = {
      ...(phone !== undefined && { phone }),
      ...(m.userId !== undefined && { bsuid: m.userId }),
      ...(m.username !== undefined && { username: m.username }),
    };
    contacts.set(sender, contactOf(ids, m.name));
  }
  return [...contacts.values()];
}

/** The `value` of a `messages` change holding delivery statuses of outbound messages. */
export function statusesValue(
  statuses: readonly OutboundStatus[],
  metadata: NumberMetadata = METADATA,
): Record<string, unknown> {
  return {
    messaging_product: 'whatsapp',
    metadata,
    statuses: statuses.map((s) => ({
      id: s.id,
      status: s.status,
      timestamp: s.timestamp,
      ...(s.recipientId !== undefined && { recipient_id: s.recipientId }),
      ...(s.recipientUserId !== undefined && { recipient_user_id: s.recipientUserId }),
      ...(s.group === true && { recipient_type: 'group' }),
      ...(s.recipientParticipantId === undefined
        ? {}
        : { recipient_participant_id: s.recipientParticipantId }),
      ...(s.recipientParticipantUserId !== undefined && {
        recipient_participant_user_id: s.recipientParticipantUserId,
      }),
      ...(s.conversationId === undefined
        ? {}
        : { conversation: { id: s.conversationId, origin: { type: 'utility' } } }),
      pricing: { billable: true, pricing_model: 'PMP', category: 'utility' },
    })),
  };
}

export function messagesChange(messages: readonly InboundMessage[], metadata?: NumberMetadata): object {
  return { field: 'messages', value: messagesValue(messages, metadata) };
}

export function statusesChange(statuses: readonly OutboundStatus[], metadata?: NumberMetadata): object {
  return { field: 'messages', value: statusesValue(statuses, metadata) };
}

/** The whole webhook payload: one WABA entry (`id` WABA_ID unless `entry` names another) holding `changes`. */
export function webhookPayload(changes: readonly object[], entry: Record<string, unknown> = {}): object {
  return { object: 'whatsapp_business_account', entry: [{ id: WABA_ID, ...entry, changes }] };
}

export function envelope(changes: readonly object[]): string {
  return JSON.stringify(webhookPayload(changes));
}

export function messagesBody(messages: readonly InboundMessage[]): string {
  return envelope([messagesChange(messages)]);
}

export function statusesBody(statuses: readonly OutboundStatus[]): string {
  return envelope([statusesChange(statuses)]);
}

/** Inbound messages with the given ids, from distinct senders; `textLength` pads each text with dots. */
export function inboundMessagesWithIds(ids: readonly string[], textLength = 0): InboundMessage[] {
  return ids.map((id, i) => ({
    id,
    from: `1650555${String(1000 + i).padStart(4, '0')}`,
    name: `Customer ${i}`,
    text: `Hello ${i}, my order number is ${9000 + i}`.padEnd(textLength, '.'),
  }));
}

/** Wamids unique to one test run, so that nothing a stack holds from another run can be mistaken for them. */
export function wamidFactory(prefix: string): (n: number) => string {
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  return (n) => `wamid.${prefix}.${run}.${n}`;
}

/** A text and a name that must never appear in logs; the receiver's tests look for them. */
export const PRIVATE_TEXT = 'my private diagnosis is confidential';
export const PROFILE_NAME = 'Sheena Nelson';
export const SENDER_PHONE = '447700900123';

/**
 * One `messages` change of `count` texts from one sender, each `PRIVATE_TEXT #<i> ` followed by `textRepeat`
 * two-byte characters (é), in an entry with a `time`: the receiver's tests measure, split and search it.
 */
export function privateMessagesBody(
  count: number,
  options: { textRepeat?: number; idPrefix?: string } = {},
): string {
  const messages = Array.from({ length: count }, (_, i) => ({
    id: `wamid.${options.idPrefix ?? 'HBgLNDQ3NzAwOTAwMTIzFQIAEhgUM0E'}${String(i).padStart(5, '0')}`,
    from: SENDER_PHONE,
    name: PROFILE_NAME,
    text: `${PRIVATE_TEXT} #${i} ${'é'.repeat(options.textRepeat ?? 0)}`,
  }));
  return JSON.stringify(webhookPayload([messagesChange(messages)], { time: 1749416383 }));
}

/** `count` distinct inbound messages with distinct senders, texts and ids. */
export function inboundMessages(count: number, prefix = 'm'): InboundMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `wamid.${prefix}${String(i).padStart(5, '0')}`,
    from: `1650555${String(1000 + i).padStart(4, '0')}`,
    name: `Customer ${prefix}${i}`,
    text: `Hello from ${prefix}${i}, my order number is ${9000 + i}`,
  }));
}

// Random message texts mix ASCII with accents, an eszett and an emoji, so that `metaJson` has escapes to write.
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

/** An inbound message as the benchmarks see it: always with a timestamp. */
export type InboundTextMessage = InboundMessage & { readonly timestamp: string };

/** A wamid shaped like Meta's (`wamid.` + base64 of an opaque id), unique for a unique `serial`. */
export function metaShapedWamid(serial: number, random: () => number): string {
  const bytes = Buffer.alloc(36);
  bytes.write('\u001c\u0018\u000b', 0, 'latin1');
  bytes.writeUInt32BE(serial, 3);
  for (let i = 7; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
  return `wamid.${bytes.toString('base64')}`;
}

/** An inbound message of 3 to 27 random words, its id, sender and timestamp derived from `serial`. */
export function inboundTextMessage(serial: number, random: () => number): InboundTextMessage {
  const wordCount = 3 + Math.floor(random() * 25);
  const words = Array.from({ length: wordCount }, () => WORDS[Math.floor(random() * WORDS.length)]);
  return {
    id: metaShapedWamid(serial, random),
    from: `1650555${String(serial % 10_000).padStart(4, '0')}`,
    name: `Customer ${serial}`,
    text: words.join(' '),
    timestamp: String(1_749_416_383 + serial),
  };
}

/** A delivery status of an outbound message, with a conversation, its id and status derived from `serial`. */
export function outboundStatus(serial: number, random: () => number): OutboundStatus {
  const statuses = ['sent', 'delivered', 'read'];
  return {
    id: metaShapedWamid(serial, random),
    status: statuses[serial % statuses.length] as string,
    timestamp: String(1_750_263_773 + serial),
    recipientId: `1650555${String(serial % 10_000).padStart(4, '0')}`,
    conversationId: `c${serial.toString(16).padStart(31, '0')}`,
  };
}

/** Serialises like Meta: compact JSON, non-ASCII escaped. */
export function metaJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** One delivery carrying several messages, one change each. */
export function multiMessageBody(messages: readonly InboundTextMessage[]): string {
  return metaJson(
    webhookPayload(messages.map((message) => ({ value: messagesValue([message]), field: 'messages' }))),
  );
}

/** One delivery with one inbound message: the shape of nearly every live `messages` webhook. */
export function singleMessageBody(message: InboundTextMessage): string {
  return metaJson(webhookPayload([{ value: messagesValue([message]), field: 'messages' }]));
}

/**
 * The same message in other bytes: keys in another order, an entry `time`, indented. A Meta retry of a
 * re-batched delivery looks like this: a different body (so a body hash differs), the same event.
 */
export function reserializedMessageBody(message: InboundTextMessage): string {
  const value = messagesValue([message]) as Record<string, unknown>;
  const reordered = Object.fromEntries(Object.entries(value).reverse());
  return JSON.stringify(
    {
      entry: [{ changes: [{ field: 'messages', value: reordered }], time: 1_749_416_400, id: WABA_ID }],
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
      i % 2 === 0
        ? messagesValue([inboundTextMessage(serial, random)])
        : statusesValue([outboundStatus(serial, random)]);
    return { value, field: 'messages' };
  });
  return metaJson(webhookPayload(changes));
}
