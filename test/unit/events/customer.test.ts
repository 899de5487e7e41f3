import { describe, expect, it } from 'vitest';
import { customerOf } from '../../../functions/events/customer.ts';
import { extractEvents } from '../../../functions/events/extract-events.ts';

const BSUID = 'US.13491208655302741918';
const PHONE = '16505551234';

function eventsOf(changes: unknown[]) {
  const extraction = extractEvents(
    JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '1', time: 2, changes }] }),
  );
  if (!extraction.ok) throw new Error('expected an envelope');
  return extraction.events;
}

const metadata = { display_phone_number: '15550783881', phone_number_id: '106540352242922' };

describe('customerOf', () => {
  it('names a username customer without a phone number by BSUID, with their username, to be addressed by recipient', () => {
    const [message] = eventsOf([
      {
        field: 'messages',
        value: {
          metadata,
          contacts: [{ profile: { name: 'Ana', username: 'ana.r' }, user_id: BSUID, parent_user_id: 'P.1' }],
          messages: [{ from_user_id: BSUID, id: 'wamid.A', type: 'text' }],
        },
      },
    ]);
    expect(message && customerOf(message)).toEqual({
      phoneNumber: undefined,
      userId: BSUID,
      parentUserId: 'P.1',
      username: 'ana.r',
      name: 'Ana',
      address: { recipient: BSUID },
    });
  });

  it('addresses a customer by phone number whenever the event has it', () => {
    const [message] = eventsOf([
      {
        field: 'messages',
        value: {
          metadata,
          contacts: [{ profile: { name: 'Ana' }, wa_id: PHONE, user_id: BSUID }],
          messages: [{ from: PHONE, id: 'wamid.A', type: 'text' }],
        },
      },
    ]);
    expect(message && customerOf(message)).toMatchObject({
      phoneNumber: PHONE,
      userId: BSUID,
      address: { to: PHONE },
    });
  });

  it("names a 1:1 status's recipient and a group status's participant, whichever id they carry", () => {
    const events = eventsOf([
      {
        field: 'messages',
        value: {
          metadata,
          statuses: [
            { id: 'wamid.1', status: 'read', recipient_user_id: BSUID },
            {
              id: 'wamid.2',
              status: 'read',
              recipient_id: 'G@g.us',
              recipient_type: 'group',
              recipient_participant_user_id: BSUID,
            },
            { id: 'wamid.3', status: 'sent', recipient_id: 'G@g.us', recipient_type: 'group' },
          ],
        },
      },
    ]);
    expect(events.map((event) => customerOf(event)?.address)).toEqual([
      { recipient: BSUID },
      { recipient: BSUID },
      undefined,
    ]);
  });

  it('names the user of a user_preferences item, and nobody for an account event', () => {
    const events = eventsOf([
      {
        field: 'user_preferences',
        value: { user_preferences: [{ user_id: BSUID, category: 'c', value: 'v', timestamp: 1 }] },
      },
      { field: 'account_update', value: { event: 'VERIFIED_ACCOUNT' } },
    ]);
    expect(events.map((event) => customerOf(event)?.userId)).toEqual([BSUID, undefined]);
  });
});
