import { describe, expect, it } from 'vitest';
import type { SubscriberQueue } from '../../../contract/subscribers.ts';
import { subscribersWanting } from '../../../functions/receiver/route-delivery.ts';

const BOT: SubscriberQueue = { name: 'bot', queueUrl: 'q/bot', fields: ['messages'] };
const CRM: SubscriberQueue = { name: 'crm', queueUrl: 'q/crm' };
const TEMPLATES: SubscriberQueue = {
  name: 'templates',
  queueUrl: 'q/templates',
  fields: ['message_template_status_update', 'account_update'],
};
const names = (subscribers: readonly SubscriberQueue[]) => subscribers.map(({ name }) => name);

describe('subscribersWanting', () => {
  it('gives a delivery to every subscriber without fields and to those with one of its fields, in order', () => {
    expect(names(subscribersWanting([BOT, CRM, TEMPLATES], ['messages']))).toEqual(['bot', 'crm']);
    expect(names(subscribersWanting([BOT, CRM, TEMPLATES], ['account_update']))).toEqual([
      'crm',
      'templates',
    ]);
    expect(names(subscribersWanting([BOT, CRM, TEMPLATES], ['account_update', 'messages']))).toEqual([
      'bot',
      'crm',
      'templates',
    ]);
  });

  it('gives a delivery without events to subscribers without fields only', () => {
    expect(names(subscribersWanting([BOT, CRM, TEMPLATES], []))).toEqual(['crm']);
  });

  it('gives a delivery none of whose fields is wanted to nobody', () => {
    expect(subscribersWanting([BOT, TEMPLATES], ['calls'])).toEqual([]);
  });
});
