import { describe, expect, it } from 'vitest';
import type { EventKind } from '../../../../functions/events/types.ts';
import { judgeSubscribers, subscriberVerdictLines } from '../../../outage-drill/verdict.ts';

const NUMBER = '106540352242922';
const WABA = '102290129340398';

function sent(
  key: string,
  kind: EventKind,
  field: string,
  origin: { phoneNumberId?: string; wabaId?: string } = { phoneNumberId: NUMBER, wabaId: WABA },
) {
  const { phoneNumberId, wabaId } = origin;
  return { event: { key, kind, change: { field }, phoneNumberId, wabaId } };
}
const events = [
  sent('msg:a', 'message', 'messages'),
  sent('st:b:read', 'status', 'messages'),
  sent('tpl:c', 'management', 'message_template_status_update'),
  sent('msg:a', 'message', 'messages'),
];
const everyHandler = ['onMessage', 'onStatus', 'onError', 'onManagementEvent'];
const effects = (...keys: string[]) => {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return { total: keys.length, effects: [...counts].map(([key, count]) => ({ key, count })) };
};

describe('judgeSubscribers', () => {
  it('expects of each subscriber only the events of its fields that one of its handlers takes', () => {
    const verdict = judgeSubscribers(events, [
      { name: 'bot', fields: ['messages'], handlers: ['onMessage'], effects: effects('msg:a') },
      {
        name: 'crm',
        fields: null,
        handlers: everyHandler,
        effects: effects('msg:a', 'st:b:read', 'tpl:c', 'msg:other-run'),
      },
    ]);

    expect(verdict).toMatchObject({ exactlyOnce: true, distinctEvents: 3, effectedOnce: 3 });
    expect(verdict.bySubscriber?.bot).toMatchObject({ exactlyOnce: true, distinctEvents: 1, unexpected: [] });
    expect(verdict.bySubscriber?.crm).toMatchObject({ exactlyOnce: true, distinctEvents: 3, unexpected: [] });
    expect(subscriberVerdictLines(verdict)).toEqual([
      'bot: EXACTLY ONCE — 1 event of its own, each effected exactly once; no other.',
      'crm: EXACTLY ONCE — 3 events of its own, each effected exactly once; no other.',
    ]);
  });

  it('expects a group event of a subscriber with onGroupEvent, and the other management events not', () => {
    const groupEvents = [
      sent('group_status_update:1:2:G:group_suspend', 'management', 'group_status_update'),
      sent('tpl:c', 'management', 'message_template_status_update'),
    ];
    const verdict = judgeSubscribers(groupEvents, [
      {
        name: 'groups',
        fields: null,
        handlers: ['onGroupEvent'],
        effects: effects('group_status_update:1:2:G:group_suspend'),
      },
    ]);
    expect(verdict.bySubscriber?.groups).toMatchObject({
      exactlyOnce: true,
      distinctEvents: 1,
      unexpected: [],
    });
  });

  it('fails the subscriber that repeats, misses, or effects an event outside its fields', () => {
    const verdict = judgeSubscribers(events, [
      { name: 'bot', fields: ['messages'], handlers: everyHandler, effects: effects('msg:a', 'tpl:c') },
      { name: 'crm', fields: null, handlers: everyHandler, effects: effects('msg:a', 'msg:a', 'tpl:c') },
    ]);

    expect(verdict.exactlyOnce).toBe(false);
    expect(verdict.bySubscriber?.bot).toMatchObject({
      exactlyOnce: false,
      missing: ['st:b:read'],
      duplicated: [],
      unexpected: ['tpl:c'],
    });
    expect(verdict.bySubscriber?.crm).toMatchObject({
      exactlyOnce: false,
      effectedOnce: 1,
      missing: ['st:b:read'],
      duplicated: [{ key: 'msg:a', count: 2 }],
      unexpected: [],
    });
    expect(verdict).toMatchObject({
      distinctEvents: 3,
      effectedOnce: 0,
      missing: ['st:b:read'],
      duplicated: [{ key: 'msg:a', count: 2 }],
    });
    expect(subscriberVerdictLines(verdict)[0]).toBe(
      'bot: FAILED — 1/2 effected once; 1 never effected (e.g. st:b:read); 0 effected more than once; 1 effected though not its own (e.g. tpl:c).',
    );
  });

  it('expects of a subscriber limited to numbers or wabas only the events of those, as the consumer claims', () => {
    const otherNumber = { phoneNumberId: '106540352242999', wabaId: WABA };
    const otherWaba = { phoneNumberId: '106540352242888', wabaId: '102290129340777' };
    const account = { wabaId: WABA };
    const mixed = [
      sent('msg:a', 'message', 'messages'),
      sent('msg:b', 'message', 'messages', otherNumber),
      sent('msg:c', 'message', 'messages', otherWaba),
      sent('tpl:d', 'management', 'message_template_status_update', account),
    ];
    const verdict = judgeSubscribers(mixed, [
      // Its number's events only: not the account's template update, which has no number.
      { name: 'tenant', fields: null, numbers: [NUMBER], handlers: everyHandler, effects: effects('msg:a') },
      // Every event of its WABA, numbers and account alike; a stray of another WABA is unexpected.
      {
        name: 'brand',
        fields: null,
        wabas: [WABA],
        handlers: everyHandler,
        effects: effects('msg:a', 'msg:b', 'tpl:d', 'msg:c'),
      },
    ]);

    expect(verdict.bySubscriber?.tenant).toMatchObject({ exactlyOnce: true, distinctEvents: 1 });
    expect(verdict.bySubscriber?.brand).toMatchObject({
      exactlyOnce: false,
      distinctEvents: 3,
      effectedOnce: 3,
      unexpected: ['msg:c'],
    });
  });

  it('with a single subscriber, judges as before and prints no subscriber line', () => {
    const verdict = judgeSubscribers(events, [
      { name: 'default', fields: null, handlers: everyHandler, effects: effects('msg:a', 'st:b:read') },
    ]);

    expect(verdict).toMatchObject({
      exactlyOnce: false,
      distinctEvents: 3,
      effectedOnce: 2,
      missing: ['tpl:c'],
      duplicated: [],
    });
    expect(subscriberVerdictLines(verdict)).toEqual([]);
  });
});
