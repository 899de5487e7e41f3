/**
 * The webhook bodies this repository offers to send (`npm run send -- FILE`): the start banner and the send
 * command's usage list them (docs/local.md). Paths from the repository's root; an installed package has none.
 */
export const SEND_SAMPLES: readonly { readonly file: string; readonly what: string }[] = [
  { file: 'test/fixtures/webhooks/message-text.json', what: 'a customer with a phone number' },
  {
    file: 'test/fixtures/webhooks/message-text-username.json',
    what: 'a customer with a username and no phone number (BSUID only)',
  },
  {
    file: 'test/fixtures/webhooks/message-text-username-with-phone.json',
    what: 'the same customer, now with the phone number: same conversation',
  },
  {
    file: 'test/fixtures/webhooks/status-group-username-participants.json',
    what: 'a group message read by three username participants: one ledger each',
  },
];
