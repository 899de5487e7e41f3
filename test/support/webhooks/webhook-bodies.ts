/**
 * Builders of WhatsApp Cloud API webhook bodies for the consumer's tests, shaped like Meta's examples, with
 * contacts, names, phone numbers and message texts so that tests can check none of them leaks into logs.
 */

export const DISPLAY_PHONE_NUMBER = '15550783881';
export const PHONE_NUMBER_ID = '106540352242922';
export const WABA_ID = '102290129340398';

export interface InboundMessage {
  readonly id: string;
  readonly from: string;
  readonly name: string;
  readonly text: string;
  readonly timestamp?: string;
}

export interface OutboundStatus {
  readonly id: string;
  readonly status: string;
  readonly recipientId: string;
  readonly timestamp: string;
  readonly recipientParticipantId?: string;
}

export function messagesChange(messages: readonly InboundMessage[]): object {
  return {
    field: 'messages',
    value: {
      messaging_product: 'whatsapp',
      metadata: { display_phone_number: DISPLAY_PHONE_NUMBER, phone_number_id: PHONE_NUMBER_ID },
      contacts: messages.map((m) => ({ profile: { name: m.name }, wa_id: m.from })),
      messages: messages.map((m) => ({
        from: m.from,
        id: m.id,
        timestamp: m.timestamp ?? '1749416383',
        type: 'text',
        text: { body: m.text },
      })),
    },
  };
}

export function statusesChange(statuses: readonly OutboundStatus[]): object {
  return {
    field: 'messages',
    value: {
      messaging_product: 'whatsapp',
      metadata: { display_phone_number: DISPLAY_PHONE_NUMBER, phone_number_id: PHONE_NUMBER_ID },
      statuses: statuses.map((s) => ({
        id: s.id,
        status: s.status,
        timestamp: s.timestamp,
        recipient_id: s.recipientId,
        ...(s.recipientParticipantId === undefined
          ? {}
          : { recipient_participant_id: s.recipientParticipantId }),
        pricing: { billable: true, pricing_model: 'PMP', category: 'utility' },
      })),
    },
  };
}

export function envelope(changes: readonly object[], entryId = WABA_ID): string {
  return JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: entryId, changes }] });
}

export function messagesBody(messages: readonly InboundMessage[]): string {
  return envelope([messagesChange(messages)]);
}

export function statusesBody(statuses: readonly OutboundStatus[]): string {
  return envelope([statusesChange(statuses)]);
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
