/**
 * A `messages` webhook body of the forwarding tests: one WABA, one change, with the contacts and messages
 * given, as Meta writes it (raw UTF-8, which is what forwarding must escape).
 */
export function messagesBody(contacts: readonly object[], messages: readonly object[]): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550001111', phone_number_id: 'PNID' },
              contacts,
              messages,
            },
          },
        ],
      },
    ],
  });
}

/** A text message from the phone number `from`. */
export const textMessage = (id: string, from: string, body: string, timestamp = '1') => ({
  from,
  id,
  timestamp,
  type: 'text',
  text: { body },
});
