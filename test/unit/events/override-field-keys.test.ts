/**
 * The keys of the Groups API fields and of the other webhook-override fields (docs/design.md §1), beyond what
 * their fixtures show: the edges of each rule, written by hand.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJsonSha256 } from '../../../functions/events/content-digest.ts';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import { groupCustomersKeyPart } from '../../../functions/events/group-item.ts';

const WABA = '184735920115467';
const GROUP = 'Y2FwaV9ncm91cDoxNTU1NjAxMzQ3MjoxMjAzNjM0MDUxMjc3NDgxOTIZD';
const METADATA = { display_phone_number: '15556013472', phone_number_id: '397201846153720' };

function extract(changes: unknown[], time: unknown = 1781175000) {
  const extraction = extractEvents(
    JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: WABA, time, changes }] }),
  );
  if (!extraction.ok) throw new Error(`expected an envelope, got ${extraction.reason}`);
  return extraction;
}

function keysOf(changes: unknown[], time?: unknown): string[] {
  return extract(changes, time).events.map((event) => event.key);
}

function groups(field: string, items: unknown[]) {
  return { field, value: { messaging_product: 'whatsapp', metadata: METADATA, groups: items } };
}

describe('group_participants_update: one event per item, every customer of it in one sorted part', () => {
  const base = { timestamp: '1781176000', group_id: GROUP, type: 'group_participants_add' };
  const prefix = `group_participants_update:${WABA}:1781176000:${GROUP}:group_participants_add`;

  it('two customers joining in the same second: two events when Meta sends two items, one when it sends one', () => {
    const twoItems = [
      { ...base, added_participants: [{ wa_id: '16505551234' }] },
      { ...base, added_participants: [{ wa_id: '16505552345' }] },
    ];
    expect(keysOf([groups('group_participants_update', twoItems)])).toEqual([
      `${prefix}:-:added=16505551234`,
      `${prefix}:-:added=16505552345`,
    ]);
    const oneItem = [{ ...base, added_participants: [{ wa_id: '16505552345' }, { wa_id: '16505551234' }] }];
    expect(keysOf([groups('group_participants_update', oneItem)])).toEqual([
      `${prefix}:-:added=16505551234,added=16505552345`,
    ]);
  });

  it('names each customer by wa_id, else user_id, else input, prefixed by its list', () => {
    const part = groupCustomersKeyPart({
      added_participants: [{ wa_id: '', user_id: 'US.1', input: 'US.1' }, { input: '4915112345678' }],
      removed_participants: [{ wa_id: '16505552345', user_id: 'US.2' }],
      failed_participants: [{ user_id: null, input: 'US.3' }],
    });
    expect(part).toBe('added=4915112345678,added=US.1,failed=US.3,removed=16505552345');
  });

  it('the requester of a join request, on the item itself, and its join_request_id in place of a request id', () => {
    const item = {
      ...base,
      type: 'group_join_request_created',
      join_request_id: 'JR1',
      user_id: 'US.55019283746550192837',
    };
    expect(keysOf([groups('group_participants_update', [item])])).toEqual([
      `group_participants_update:${WABA}:1781176000:${GROUP}:group_join_request_created:JR1:requester=US.55019283746550192837`,
    ]);
  });

  it('request_id wins over join_request_id; an item naming nobody still is one event, with `-`', () => {
    const item = { ...base, request_id: 'R1', join_request_id: 'JR1' };
    expect(keysOf([groups('group_participants_update', [item])])).toEqual([`${prefix}:R1:-`]);
  });

  it('encodes `:`, `%` and `,` inside an id, so that no id passes for two customers or for a separator', () => {
    expect(groupCustomersKeyPart({ added_participants: [{ input: 'a,added=b' }] })).toBe('added=a%2Cadded=b');
    expect(groupCustomersKeyPart({ added_participants: [{ input: 'a' }, { input: 'b' }] })).toBe(
      'added=a,added=b',
    );
    expect(groupCustomersKeyPart({ removed_participants: [{ input: 'x:1%' }] })).toBe('removed=x%3A1%25');
    expect(groupCustomersKeyPart({ removed_participants: [{ input: '-' }, {}] })).toBe(
      'removed=%2D,removed=-',
    );
    expect(groupCustomersKeyPart({ added_participants: ['16505551234', 7] })).toBe(
      'added=16505551234,added=7',
    );
  });
});

describe('the other Groups API fields', () => {
  it('lifecycle and settings end with request_id; status with the type; a failed create has no group id', () => {
    const changes = [
      groups('group_lifecycle_update', [{ timestamp: 1781175601, type: 'group_create', request_id: 'R9' }]),
      groups('group_settings_update', [
        { timestamp: '1781180000', group_id: GROUP, type: 'group_settings_update', request_id: 'R3' },
      ]),
      groups('group_status_update', [{ timestamp: '1781181000', type: 'group_suspend', group_id: GROUP }]),
    ];
    expect(keysOf(changes)).toEqual([
      `group_lifecycle_update:${WABA}:1781175601:-:group_create:R9`,
      `group_settings_update:${WABA}:1781180000:${GROUP}:group_settings_update:R3`,
      `group_status_update:${WABA}:1781181000:${GROUP}:group_suspend`,
    ]);
  });

  it('are management events of their own Field, whose payload is the item', () => {
    const item = { timestamp: '1', group_id: GROUP, type: 'group_suspend' };
    const [event] = extract([groups('group_status_update', [item])]).events;
    expect(event).toMatchObject({ kind: 'management', metricField: 'group_status_update', payload: item });
  });
});

describe('standby: the passive copies, one level down', () => {
  const standby = (inner: unknown) => ({ field: 'standby', value: { metadata: METADATA, standby: inner } });

  it('messages, then echoes, then statuses, whatever the member order; statuses with the participant', () => {
    const keys = keysOf([
      standby({
        statuses: [
          { id: 'wamid.S', status: 'read', timestamp: '3' },
          { id: 'wamid.G', status: 'read', timestamp: '4', recipient_participant_user_id: 'US.9' },
        ],
        message_echoes: [{ id: 'wamid.E', timestamp: '2', message: { to: '16505551234' } }],
        messages: [{ id: 'wamid.M', timestamp: '1', from: '16505551234' }],
      }),
    ]);
    expect(keys).toEqual([
      `standby:${WABA}:1:wamid.M`,
      `standby:${WABA}:2:wamid.E`,
      `standby:${WABA}:3:wamid.S:read`,
      `standby:${WABA}:4:wamid.G:read:US.9`,
    ]);
  });

  it('are management events: never a message for onMessage, never a status for the ledger', () => {
    const { events } = extract([standby({ messages: [{ id: 'wamid.M', timestamp: '1' }] })]);
    expect(events.map(({ kind, metricField }) => ({ kind, metricField }))).toEqual([
      { kind: 'management', metricField: 'standby' },
    ]);
  });

  it('an empty standby is no event; a standby that is not an object is malformed, reported once', () => {
    expect(extract([standby({})]).events).toEqual([]);
    expect(extract([standby(null)])).toMatchObject({ events: [], malformed: [] });
    expect(extract([standby('x')])).toMatchObject({
      events: [],
      malformed: [
        {
          entryId: WABA,
          wabaId: WABA,
          phoneNumberId: METADATA.phone_number_id,
          field: 'standby',
          problem: 'value.standby is not an object',
        },
      ],
    });
    expect(extract([standby({ messages: {} })]).malformed).toEqual([
      {
        entryId: WABA,
        wabaId: WABA,
        phoneNumberId: METADATA.phone_number_id,
        field: 'standby',
        problem: 'value.standby.messages is not an array',
      },
    ]);
  });

  it('an item without a usable id gets no key: it is reported unkeyed, never run under `-`', () => {
    const extraction = extract([standby({ messages: [{ timestamp: '1' }], statuses: [{ status: 'read' }] })]);
    expect(extraction.events).toEqual([]);
    expect(extraction.unkeyed.map((unkeyed) => unkeyed.problem)).toEqual([
      'an item of value.standby.messages without a usable id',
      'an item of value.standby.statuses without a usable id',
    ]);
  });
});

describe('message_echoes, messaging_handovers, account_settings_update', () => {
  it('message_echoes: one per echo by its wamid; an echo without one is unkeyed', () => {
    const extraction = extract([
      {
        field: 'message_echoes',
        value: { message_echoes: [{ id: 'wamid.E1', timestamp: '5', to: '1' }, { timestamp: '5' }] },
      },
    ]);
    expect(extraction.events.map((event) => event.key)).toEqual([`message_echoes:${WABA}:5:wamid.E1`]);
    expect(extraction.unkeyed).toHaveLength(1);
  });

  it('messaging_handovers: the customer by phone number, else by BSUID', () => {
    const handover = (sender: unknown) => ({
      field: 'messaging_handovers',
      value: {
        sender,
        recipient: { phone_number_id: '397201846153720' },
        type: 'control_taken',
        timestamp: '7',
      },
    });
    expect(
      keysOf([handover({ phone_number: '16505551234', user_id: 'US.1' }), handover({ user_id: 'US.1' })]),
    ).toEqual([
      `messaging_handovers:${WABA}:7:397201846153720:16505551234:control_taken`,
      `messaging_handovers:${WABA}:7:397201846153720:US.1:control_taken`,
    ]);
  });

  it('account_settings_update: its own timestamp, type and phone number id', () => {
    const value = {
      timestamp: 8,
      type: 'PHONE_NUMBER_SETTINGS',
      phone_number_settings: { phone_number_id: '3' },
    };
    expect(keysOf([{ field: 'account_settings_update', value }])).toEqual([
      `account_settings_update:${WABA}:8:PHONE_NUMBER_SETTINGS:3`,
    ]);
  });
});

describe('consumer_profile: keyed by the digest of its whole value (provisional)', () => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  it('is the SHA-256 of the canonical JSON: members sorted, no whitespace, numbers as written', () => {
    const raw = `{"object":"whatsapp_business_account","entry":[{"id":"${WABA}","time":9,"changes":[{"field":"consumer_profile","value":{"z":1.50,"a":{"y":"é","b":[1e3,null,true]},"n":12345678901234567890}}]}]}`;
    const extraction = extractEvents(raw);
    if (!extraction.ok) throw new Error('expected an envelope');
    expect(extraction.events.map((event) => event.key)).toEqual([
      `consumer_profile:${WABA}:9:${sha256('{"a":{"b":[1e3,null,true],"y":"é"},"n":12345678901234567890,"z":1.50}')}`,
    ]);
  });

  it('a redelivery with members reordered and spaced gets the same key; a different value another', () => {
    const one = `{"object":"whatsapp_business_account","entry":[{"id":"1","time":9,"changes":[{"field":"consumer_profile","value":{"a":1,"b":{"c":"x","d":"y"}}}]}]}`;
    const same = `{ "entry" : [ { "changes":[{"value":{"b":{"d":"y", "c":"x"}, "a":1},"field":"consumer_profile"}],"time":9,"id":"1"}],"object":"whatsapp_business_account"}`;
    const other = one.replace('"y"', '"z"');
    const key = (raw: string) => {
      const extraction = extractEvents(raw);
      return extraction.ok ? extraction.events.map((event) => event.key) : [];
    };
    expect(key(same)).toEqual(key(one));
    expect(key(other)).not.toEqual(key(one));
  });

  it('keeps a member named __proto__ and never overflows on a deep value', () => {
    expect(canonicalJsonSha256(JSON.parse('{"__proto__":{"b":1},"a":2}'))).toBe(
      sha256('{"__proto__":{"b":1},"a":2}'),
    );
    let deep: unknown = 0;
    for (let depth = 0; depth < 50_000; depth++) deep = [deep];
    expect(canonicalJsonSha256(deep as never)).toBe(sha256(`${'['.repeat(50_000)}0${']'.repeat(50_000)}`));
  });
});
