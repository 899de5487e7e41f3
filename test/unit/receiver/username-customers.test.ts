/**
 * Customers with usernames (docs/design.md §8, "Conversation id"): since 2026 a customer may arrive with a
 * business-scoped user id (BSUID) and no phone number. The receiver's lane split and the consumer must put the
 * same customer in one conversation whether or not the phone number came, and different customers apart.
 */
import { describe, expect, it } from 'vitest';
import { conversationCustomer, conversationId } from '../../../contract/lanes.ts';
import { conversationOf } from '../../../functions/consumer/consumer-batch.ts';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import { splitByLane } from '../../../functions/receiver/split-by-lane.ts';

const PHONE_NUMBER_ID = '106540352242922';
const METADATA = { display_phone_number: '15550783881', phone_number_id: PHONE_NUMBER_ID };
const BSUID_A = 'US.13491208655302741918';
const BSUID_B = 'US.20581736495028173645';

interface Sender {
  readonly phone?: string;
  readonly bsuid: string;
  readonly username?: string;
}

/** A contact and a text message shaped like Meta's 2026 samples: `wa_id`/`from` only when the phone came. */
function contactOf({ phone, bsuid, username }: Sender) {
  return {
    profile: { name: 'Customer', ...(username !== undefined && { username }) },
    ...(phone !== undefined && { wa_id: phone }),
    user_id: bsuid,
    parent_user_id: `${bsuid}.parent`,
  };
}

function messageOf(id: string, { phone, bsuid }: Sender, withFromUserId = true) {
  return {
    ...(phone !== undefined && { from: phone }),
    ...(withFromUserId && { from_user_id: bsuid }),
    id,
    timestamp: '1781175600',
    type: 'text',
    text: { body: 'hello' },
  };
}

function body(changes: { contacts: unknown[]; messages: unknown[] }[]): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '104882371930562',
        changes: changes.map(({ contacts, messages }) => ({
          field: 'messages',
          value: { messaging_product: 'whatsapp', metadata: METADATA, contacts, messages },
        })),
      },
    ],
  });
}

describe('conversationCustomer', () => {
  const noContact = () => undefined;

  it('names the BSUID first, else the contact user_id of the phone number, else the phone number', () => {
    expect(
      conversationCustomer({ fromUserId: BSUID_A, from: '16505551234', userIdOfContact: noContact }),
    ).toBe(BSUID_A);
    expect(
      conversationCustomer({
        fromUserId: undefined,
        from: '16505551234',
        userIdOfContact: (waId) => (waId === '16505551234' ? BSUID_A : undefined),
      }),
    ).toBe(BSUID_A);
    expect(conversationCustomer({ fromUserId: '', from: '16505551234', userIdOfContact: noContact })).toBe(
      '16505551234',
    );
    expect(conversationCustomer({ fromUserId: null, from: 7, userIdOfContact: noContact })).toBeUndefined();
  });
});

describe('lanes for username customers', () => {
  it('gives two username-only customers two conversations, never one shared `<phone_number_id>:-`', () => {
    const a = { bsuid: BSUID_A, username: 'ana' };
    const b = { bsuid: BSUID_B, username: 'bo' };
    const split = splitByLane(
      body([
        {
          contacts: [contactOf(a), contactOf(b)],
          messages: [messageOf('wamid.A1', a), messageOf('wamid.B1', b)],
        },
      ]),
    );
    expect(split.messageParts.map((part) => part.conversationId)).toEqual([
      conversationId(PHONE_NUMBER_ID, BSUID_A),
      conversationId(PHONE_NUMBER_ID, BSUID_B),
    ]);
    expect(split.messageParts.map((part) => part.eventKeys)).toEqual([['msg:wamid.A1'], ['msg:wamid.B1']]);
  });

  it('keeps one customer in one conversation with and without the phone number, on both sides of the queue', () => {
    const withoutPhone = { bsuid: BSUID_A };
    const withPhone = { bsuid: BSUID_A, phone: '16505551234' };
    const bodies = [
      body([{ contacts: [contactOf(withoutPhone)], messages: [messageOf('wamid.1', withoutPhone)] }]),
      body([{ contacts: [contactOf(withPhone)], messages: [messageOf('wamid.2', withPhone)] }]),
      // A message that names only the phone number finds the BSUID in its contact.
      body([{ contacts: [contactOf(withPhone)], messages: [messageOf('wamid.3', withPhone, false)] }]),
    ];
    const expected = conversationId(PHONE_NUMBER_ID, BSUID_A);
    for (const text of bodies) {
      expect(splitByLane(text).messageParts.map((part) => part.conversationId)).toEqual([expected]);
      const extraction = extractEvents(text);
      if (!extraction.ok) throw new Error('expected events');
      expect(extraction.events.map(conversationOf)).toEqual([expected]);
    }
  });

  it('keeps a pre-2026 phone-only customer where they were', () => {
    const text = body([
      {
        contacts: [{ profile: { name: 'x' }, wa_id: '16505551234' }],
        messages: [{ from: '16505551234', id: 'wamid.P', type: 'text' }],
      },
    ]);
    expect(splitByLane(text).messageParts.map((part) => part.conversationId)).toEqual([
      conversationId(PHONE_NUMBER_ID, '16505551234'),
    ]);
  });

  it("gives each conversation's part its own contact, found by user_id when the contact has no wa_id", () => {
    const a = { bsuid: BSUID_A, username: 'ana' };
    const b = { bsuid: BSUID_B, phone: '16505550000' };
    const split = splitByLane(
      body([
        {
          contacts: [contactOf(a), contactOf(b)],
          messages: [messageOf('wamid.A1', a), messageOf('wamid.B1', b)],
        },
      ]),
    );
    const contactsOf = (text: string) =>
      (JSON.parse(text).entry[0].changes[0].value.contacts as { user_id: string }[]).map((c) => c.user_id);
    expect(split.messageParts.map((part) => contactsOf(part.text))).toEqual([[BSUID_A], [BSUID_B]]);
  });
});
