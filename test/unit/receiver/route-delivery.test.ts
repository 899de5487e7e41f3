import { describe, expect, it } from 'vitest';
import type { EventOrigin } from '../../../contract/event-origin.ts';
import type { SubscriberQueue } from '../../../contract/subscribers.ts';
import { subscribersWanting } from '../../../functions/receiver/route-delivery.ts';

const BOT: SubscriberQueue = { name: 'bot', queueUrl: 'q/bot', fields: ['messages'] };
const CRM: SubscriberQueue = { name: 'crm', queueUrl: 'q/crm' };
const TEMPLATES: SubscriberQueue = {
  name: 'templates',
  queueUrl: 'q/templates',
  fields: ['message_template_status_update', 'account_update'],
};
/** Limited to one number of account 100; the second, 202, belongs to the same account. */
const BRAZIL: SubscriberQueue = { name: 'brazil', queueUrl: 'q/brazil', numbers: ['201'] };
const TENANT: SubscriberQueue = { name: 'tenant', queueUrl: 'q/tenant', wabas: ['100'] };
const BRAZIL_BOT: SubscriberQueue = { ...BRAZIL, name: 'brazil-bot', fields: ['messages'] };
const names = (subscribers: readonly SubscriberQueue[]) => subscribers.map(({ name }) => name);

/** Events of `fields` on number 201 of account 100. */
const of = (...fields: string[]): EventOrigin[] =>
  fields.map((field) => ({ field, phoneNumberId: '201', wabaId: '100' }));

describe('subscribersWanting', () => {
  it('gives a delivery to every subscriber without fields and to those with one of its fields, in order', () => {
    expect(names(subscribersWanting([BOT, CRM, TEMPLATES], of('messages')))).toEqual(['bot', 'crm']);
    expect(names(subscribersWanting([BOT, CRM, TEMPLATES], of('account_update')))).toEqual([
      'crm',
      'templates',
    ]);
    expect(names(subscribersWanting([BOT, CRM, TEMPLATES], of('account_update', 'messages')))).toEqual([
      'bot',
      'crm',
      'templates',
    ]);
  });

  it('gives a delivery without events to subscribers without fields only', () => {
    expect(names(subscribersWanting([BOT, CRM, TEMPLATES, BRAZIL], []))).toEqual(['crm']);
  });

  it('gives a delivery none of whose fields is wanted to nobody', () => {
    expect(subscribersWanting([BOT, TEMPLATES], of('calls'))).toEqual([]);
  });

  it('gives a number-limited subscriber its numbers only, and a WABA-limited one every number of its account', () => {
    const otherNumber: EventOrigin[] = [{ field: 'messages', phoneNumberId: '202', wabaId: '100' }];
    const otherAccount: EventOrigin[] = [{ field: 'messages', phoneNumberId: '301', wabaId: '300' }];

    expect(names(subscribersWanting([BRAZIL, TENANT, CRM], of('messages')))).toEqual([
      'brazil',
      'tenant',
      'crm',
    ]);
    expect(names(subscribersWanting([BRAZIL, TENANT, CRM], otherNumber))).toEqual(['tenant', 'crm']);
    expect(names(subscribersWanting([BRAZIL, TENANT, CRM], otherAccount))).toEqual(['crm']);
  });

  it("gives an account's own events (no number) to its WABA's subscribers, never to a number's", () => {
    const template: EventOrigin[] = [
      { field: 'message_template_status_update', phoneNumberId: undefined, wabaId: '100' },
    ];

    expect(names(subscribersWanting([BRAZIL, TENANT, TEMPLATES], template))).toEqual(['tenant', 'templates']);
  });

  it('wants the field and the number of one same event, not each of another', () => {
    // A status of number 201 and an account update of number 202: neither is a message of 201.
    const mixed: EventOrigin[] = [
      { field: 'account_update', phoneNumberId: '201', wabaId: '100' },
      { field: 'messages', phoneNumberId: '202', wabaId: '100' },
    ];

    expect(subscribersWanting([BRAZIL_BOT], mixed)).toEqual([]);
    expect(names(subscribersWanting([BRAZIL_BOT], [...mixed, ...of('messages')]))).toEqual(['brazil-bot']);
  });
});
