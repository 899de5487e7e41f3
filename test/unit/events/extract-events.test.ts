import { describe, expect, it } from 'vitest';
import { MANAGEMENT_FIELDS } from '../../../contract/metric-names.ts';
import {
  eventItemArrays,
  extractEvents,
  extractEventsFromEnvelope,
  isKnownField,
  KNOWN_FIELDS,
} from '../../../functions/events/extract-events.ts';

const WABA = '184735920115467';
const METADATA = { display_phone_number: '15556013472', phone_number_id: '397201846153720' };

function envelope(entry: unknown): string {
  return JSON.stringify({ object: 'whatsapp_business_account', entry });
}

function okExtraction(raw: string) {
  const extraction = extractEvents(raw);
  if (!extraction.ok) throw new Error(`expected events, got ${extraction.reason}`);
  return extraction;
}

describe('extractEvents: what each event carries', () => {
  it('sets kind, metricField, field, entryId, wabaId, phoneNumberId, payload, value and entry for the three kinds of `messages`', () => {
    const value = {
      messaging_product: 'whatsapp',
      metadata: METADATA,
      errors: [{ code: 131000, title: 'Something went wrong' }],
      statuses: [
        { id: 'wamid.OUT1', status: 'read', timestamp: '1751303090', recipient_id: '4915112345678' },
      ],
      messages: [{ from: '4915112345678', id: 'wamid.IN1', timestamp: '1751301200', type: 'text' }],
    };
    const entry = { id: WABA, time: 1751303400, changes: [{ field: 'messages', value }] };
    const { events } = okExtraction(envelope([entry]));
    expect(events).toEqual([
      {
        key: 'msg:wamid.IN1',
        field: 'messages',
        kind: 'message',
        metricField: 'message',
        entryId: WABA,
        wabaId: WABA,
        phoneNumberId: METADATA.phone_number_id,
        payload: value.messages[0],
        value,
        entry,
      },
      {
        key: 'st:wamid.OUT1:read',
        field: 'messages',
        kind: 'status',
        metricField: 'status',
        entryId: WABA,
        wabaId: WABA,
        phoneNumberId: METADATA.phone_number_id,
        payload: value.statuses[0],
        value,
        entry,
      },
      {
        key: `err:${WABA}:1751303400:397201846153720:131000`,
        field: 'messages',
        kind: 'error',
        metricField: 'error',
        entryId: WABA,
        wabaId: WABA,
        phoneNumberId: METADATA.phone_number_id,
        payload: value.errors[0],
        value,
        entry,
      },
    ]);
  });

  it('gives a per-change management event the change value as payload and the field as metric field', () => {
    const value = { decision: 'APPROVED' };
    const entry = { id: WABA, time: 1751304100, changes: [{ field: 'account_review_update', value }] };
    const { events } = okExtraction(envelope([entry]));
    expect(events).toEqual([
      {
        key: `account_review_update:${WABA}:1751304100:APPROVED`,
        field: 'account_review_update',
        kind: 'management',
        metricField: 'account_review_update',
        entryId: WABA,
        wabaId: WABA,
        phoneNumberId: undefined,
        payload: value,
        value,
        entry,
      },
    ]);
  });

  it('gives a per-item management event its item as payload', () => {
    const item = {
      wa_id: '4915112345678',
      category: 'marketing_messages',
      value: 'stop',
      timestamp: 1751307000,
    };
    const value = { messaging_product: 'whatsapp', metadata: METADATA, user_preferences: [item] };
    const { events } = okExtraction(
      envelope([{ id: WABA, changes: [{ field: 'user_preferences', value }] }]),
    );
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toEqual(item);
    expect(events[0]?.value).toEqual(value);
    expect(events[0]?.metricField).toBe('user_preferences');
  });

  it('makes a business-initiated call status a `calls` management event, never a message status', () => {
    const item = {
      id: 'wacid.BIZ1',
      timestamp: '1751313600',
      type: 'call',
      status: 'RINGING',
      recipient_id: '4915112345678',
    };
    const value = { messaging_product: 'whatsapp', metadata: METADATA, statuses: [item] };
    const entry = { id: WABA, time: 1751313700, changes: [{ field: 'calls', value }] };
    const { events } = okExtraction(envelope([entry]));
    expect(events).toEqual([
      {
        key: `calls:${WABA}:1751313600:wacid.BIZ1:RINGING`,
        field: 'calls',
        kind: 'management',
        metricField: 'calls',
        entryId: WABA,
        wabaId: WABA,
        phoneNumberId: METADATA.phone_number_id,
        payload: item,
        value,
        entry,
      },
    ]);
  });

  it('walks a `calls` change as docs/design.md §1 lists it: calls[] items, then statuses[] items, whatever the text order', () => {
    const raw =
      `{"object":"whatsapp_business_account","entry":[{"id":"${WABA}","changes":[{"field":"calls","value":{` +
      '"statuses":[{"id":"wacid.B","timestamp":"3","status":"ACCEPTED"},{"id":"wacid.C","timestamp":"4","status":"REJECTED"}],' +
      '"calls":[{"id":"wacid.A","timestamp":"1","event":"connect"},{"id":"wacid.A","timestamp":"2","event":"terminate"}]}}]}]}';
    expect(okExtraction(raw).events.map((event) => event.key)).toEqual([
      `calls:${WABA}:1:wacid.A:connect`,
      `calls:${WABA}:2:wacid.A:terminate`,
      `calls:${WABA}:3:wacid.B:ACCEPTED`,
      `calls:${WABA}:4:wacid.C:REJECTED`,
    ]);
  });

  it('does not copy the parsed items: payload and value are the objects of the parsed body', () => {
    const body = {
      object: 'whatsapp_business_account',
      entry: [{ id: WABA, changes: [{ field: 'messages', value: { messages: [{ id: 'wamid.A' }] } }] }],
    };
    const extraction = extractEventsFromEnvelope(body);
    if (!extraction.ok) throw new Error('expected events');
    expect(extraction.events[0]?.payload).toBe(body.entry[0]?.changes[0]?.value.messages[0]);
    expect(extraction.events[0]?.value).toBe(body.entry[0]?.changes[0]?.value);
  });
});

describe('extractEvents: key parts', () => {
  it('writes `-` for missing and null parts, and the entry id `-` when the entry has none', () => {
    const { events } = okExtraction(
      envelope([
        {
          changes: [
            { field: 'messages', value: { statuses: [{ id: 'wamid.X', status: null }], errors: [{}] } },
            { field: 'flows', value: { event: 'FLOW_STATUS_CHANGE', flow_id: null } },
          ],
        },
      ]),
    );
    expect(events.map((event) => event.key)).toEqual([
      'st:wamid.X:-',
      'err:-:-:-:-',
      'flows:-:-:FLOW_STATUS_CHANGE:-',
    ]);
    expect(events[0]?.entryId).toBe('-');
  });

  it('does not throw on a key part nested too deeply to serialise', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const raw = `{"object":"whatsapp_business_account","entry":[{"id":"1","time":2,"changes":[{"field":"account_review_update","value":{"decision":${deep}}}]}]}`;
    expect(okExtraction(raw).events.map((event) => event.key)).toEqual(['account_review_update:1:2:-']);
  });

  it('appends recipient_participant_id only when present and not null', () => {
    const statuses = [
      { id: 'wamid.G', status: 'read', recipient_participant_id: '4915112345678' },
      { id: 'wamid.G', status: 'read', recipient_participant_id: null },
      { id: 'wamid.G', status: 'read' },
    ];
    const { events } = okExtraction(
      envelope([{ id: WABA, changes: [{ field: 'messages', value: { statuses } }] }]),
    );
    expect(events.map((event) => event.key)).toEqual([
      'st:wamid.G:read:4915112345678',
      'st:wamid.G:read',
      'st:wamid.G:read',
    ]);
  });

  it('writes numbers as written, whether the id is a string, a small number or a large one', () => {
    const raw =
      '{"object":"whatsapp_business_account","entry":[{"id":104882371930562,"time":1781175600,"changes":[' +
      '{"field":"message_template_status_update","value":{"event":"APPROVED","message_template_id":"1298845512337760"}},' +
      '{"field":"message_template_status_update","value":{"event":"APPROVED","message_template_id":1298845512337760}},' +
      '{"field":"message_template_status_update","value":{"event":"APPROVED","message_template_id":123456789012345678901234567890}}]}]}';
    expect(okExtraction(raw).events.map((event) => event.key)).toEqual([
      'message_template_status_update:104882371930562:1781175600:1298845512337760:APPROVED',
      'message_template_status_update:104882371930562:1781175600:1298845512337760:APPROVED',
      'message_template_status_update:104882371930562:1781175600:123456789012345678901234567890:APPROVED',
    ]);
  });

  it('writes a non-scalar where a scalar was expected as compact JSON, so distinct events stay distinct', () => {
    const changes = [
      { field: 'account_review_update', value: { decision: { code: 'A', reason: 1 } } },
      { field: 'account_review_update', value: { decision: { code: 'B', reason: 1 } } },
      { field: 'account_review_update', value: { decision: true } },
    ];
    expect(okExtraction(envelope([{ id: WABA, time: 1, changes }])).events.map((event) => event.key)).toEqual(
      [
        `account_review_update:${WABA}:1:{"code"%3A"A","reason"%3A1}`,
        `account_review_update:${WABA}:1:{"code"%3A"B","reason"%3A1}`,
        `account_review_update:${WABA}:1:true`,
      ],
    );
  });
});

describe('extractEvents: customers named by phone number, else by business-scoped user id', () => {
  const BSUID_A = 'US.13491208655302741918';
  const BSUID_B = 'US.20581736495028173645';
  const BSUID_C = 'BR.88120394857612093456';

  it('keys each group participant by its BSUID when it has no phone number, so three readers are three events', () => {
    const statuses = [BSUID_A, BSUID_B, BSUID_C].map((participant) => ({
      id: 'wamid.GROUP',
      status: 'read',
      timestamp: '1781175600',
      recipient_id: '120363025246125888@g.us',
      recipient_participant_user_id: participant,
      recipient_participant_parent_user_id: `${participant}.parent`,
    }));
    const { events } = okExtraction(
      envelope([{ id: WABA, changes: [{ field: 'messages', value: { metadata: METADATA, statuses } }] }]),
    );
    expect(events.map((event) => event.key)).toEqual([
      `st:wamid.GROUP:read:${BSUID_A}`,
      `st:wamid.GROUP:read:${BSUID_B}`,
      `st:wamid.GROUP:read:${BSUID_C}`,
    ]);
  });

  it('keeps the phone number first wherever the event has it, so no key of a phone customer changes', () => {
    const statuses = [
      {
        id: 'wamid.G',
        status: 'read',
        recipient_participant_id: '4915112345678',
        recipient_participant_user_id: BSUID_A,
      },
    ];
    const preferences = [
      { wa_id: '16505551234', user_id: BSUID_A, category: 'marketing_messages', value: 'stop', timestamp: 9 },
    ];
    const stateSync = [
      {
        contact: { phone_number: '16505551234', user_id: BSUID_A },
        action: 'add',
        metadata: { timestamp: 9 },
      },
    ];
    const { events } = okExtraction(
      envelope([
        {
          id: WABA,
          time: 1,
          changes: [
            { field: 'messages', value: { statuses } },
            { field: 'user_preferences', value: { user_preferences: preferences } },
            { field: 'smb_app_state_sync', value: { state_sync: stateSync } },
          ],
        },
      ]),
    );
    expect(events.map((event) => event.key)).toEqual([
      'st:wamid.G:read:4915112345678',
      `user_preferences:${WABA}:9:16505551234:marketing_messages:stop`,
      `smb_app_state_sync:${WABA}:9:16505551234:add`,
    ]);
  });

  it('keeps two username customers opting out in the same second apart', () => {
    const preferences = [BSUID_A, BSUID_B].map((user_id) => ({
      user_id,
      category: 'marketing_messages',
      value: 'stop',
      timestamp: 1781175600,
    }));
    const stateSync = [BSUID_A, BSUID_B].map((user_id) => ({
      contact: { user_id, username: 'someone' },
      action: 'add',
      metadata: { timestamp: 1781175600 },
    }));
    const { events } = okExtraction(
      envelope([
        {
          id: WABA,
          changes: [
            { field: 'user_preferences', value: { user_preferences: preferences } },
            { field: 'smb_app_state_sync', value: { state_sync: stateSync } },
          ],
        },
      ]),
    );
    expect(events.map((event) => event.key)).toEqual([
      `user_preferences:${WABA}:1781175600:${BSUID_A}:marketing_messages:stop`,
      `user_preferences:${WABA}:1781175600:${BSUID_B}:marketing_messages:stop`,
      `smb_app_state_sync:${WABA}:1781175600:${BSUID_A}:add`,
      `smb_app_state_sync:${WABA}:1781175600:${BSUID_B}:add`,
    ]);
  });

  it('falls back to the BSUID when the phone number is null or empty, and writes `-` when neither is there', () => {
    const preferences = [
      { wa_id: null, user_id: BSUID_A, category: 'c', value: 'v', timestamp: 1 },
      { wa_id: '', user_id: BSUID_B, category: 'c', value: 'v', timestamp: 1 },
      { category: 'c', value: 'v', timestamp: 1 },
    ];
    const { events } = okExtraction(
      envelope([
        { id: WABA, changes: [{ field: 'user_preferences', value: { user_preferences: preferences } }] },
      ]),
    );
    expect(events.map((event) => event.key)).toEqual([
      `user_preferences:${WABA}:1:${BSUID_A}:c:v`,
      `user_preferences:${WABA}:1:${BSUID_B}:c:v`,
      `user_preferences:${WABA}:1:-:c:v`,
    ]);
  });
});

describe('extractEvents: parts that look like separators are percent-encoded', () => {
  it('gives a status id holding `:` and a status holding `:` different keys', () => {
    const statuses = [
      { id: 'wamid.A:read', status: 'x' },
      { id: 'wamid.A', status: 'read:x' },
    ];
    const { events } = okExtraction(
      envelope([{ id: WABA, changes: [{ field: 'messages', value: { statuses } }] }]),
    );
    expect(events.map((event) => event.key)).toEqual(['st:wamid.A%3Aread:x', 'st:wamid.A:read%3Ax']);
  });

  it('encodes `%` and a value that is exactly `-`, so neither passes for an encoding or a missing part', () => {
    const changes = [
      { field: 'flows', value: { event: '-', flow_id: '1' } },
      { field: 'flows', value: { flow_id: '1' } },
      { field: 'flows', value: { event: '%3A', flow_id: '1' } },
      { field: 'flows', value: { event: ':', flow_id: '1' } },
    ];
    const { events } = okExtraction(envelope([{ id: WABA, time: 1, changes }]));
    expect(events.map((event) => event.key)).toEqual([
      `flows:${WABA}:1:%2D:1`,
      `flows:${WABA}:1:-:1`,
      `flows:${WABA}:1:%253A:1`,
      `flows:${WABA}:1:%3A:1`,
    ]);
  });
});

describe('extractEvents: no identity, no key', () => {
  it('reports messages and statuses without a usable id as unkeyed, never as `msg:-`', () => {
    const messages = [
      { from: '16505551234', type: 'text' },
      { id: '' },
      { id: null },
      { id: { x: 1 } },
      { id: 'wamid.OK' },
    ];
    const statuses = [{ status: 'read' }, { id: 'wamid.S', status: 'read' }];
    const extraction = okExtraction(
      envelope([
        { id: WABA, changes: [{ field: 'messages', value: { metadata: METADATA, messages, statuses } }] },
      ]),
    );
    expect(extraction.events.map((event) => event.key)).toEqual(['msg:wamid.OK', 'st:wamid.S:read']);
    expect(extraction.unkeyed).toEqual([
      ...Array.from({ length: 4 }, () => ({
        entryId: WABA,
        wabaId: WABA,
        phoneNumberId: METADATA.phone_number_id,
        field: 'messages',
        kind: 'message',
        metricField: 'message',
        problem: 'message without a usable id',
      })),
      {
        entryId: WABA,
        wabaId: WABA,
        phoneNumberId: METADATA.phone_number_id,
        field: 'messages',
        kind: 'status',
        metricField: 'status',
        problem: 'status without a usable id',
      },
    ]);
  });

  it('still keys a value-level error and a management item that lack an id of their own', () => {
    const extraction = okExtraction(
      envelope([
        {
          id: WABA,
          time: 1,
          changes: [
            { field: 'messages', value: { metadata: METADATA, errors: [{ code: 131000 }] } },
            {
              field: 'automatic_events',
              value: { automatic_events: [{ event_name: 'purchase', timestamp: 2 }] },
            },
          ],
        },
      ]),
    );
    expect(extraction.events.map((event) => event.key)).toEqual([
      `err:${WABA}:1:${METADATA.phone_number_id}:131000`,
      `automatic_events:${WABA}:2:-:purchase`,
    ]);
    expect(extraction.unkeyed).toEqual([]);
  });
});

describe('extractEvents: unknown fields and malformed parts', () => {
  it('reports unknown fields with their entry and yields no event for them, in body order', () => {
    const extraction = okExtraction(
      envelope([
        { id: 'A', changes: [{ field: 'marketing_mirror_update', value: { x: 1 } }] },
        { id: 'B', changes: [{ field: 'toString', value: {} }, { field: '__proto__' }] },
      ]),
    );
    expect(extraction.events).toEqual([]);
    const fromEntry = (id: string) => ({ entryId: id, wabaId: id, phoneNumberId: undefined });
    expect(extraction.unknownFields).toEqual([
      { field: 'marketing_mirror_update', ...fromEntry('A') },
      { field: 'toString', ...fromEntry('B') },
      { field: '__proto__', ...fromEntry('B') },
    ]);
  });

  it('skips malformed parts without throwing, reports them, and keeps their well-formed siblings', () => {
    const extraction = okExtraction(
      envelope([
        'not an entry',
        { id: 'A' },
        { id: 'B', changes: { field: 'messages' } },
        {
          id: 'C',
          changes: [
            null,
            { value: { messages: [{ id: 'wamid.NO_FIELD' }] } },
            { field: 'messages' },
            { field: 'messages', value: [] },
            { field: 'messages', value: { messages: 'wamid.NOT_A_LIST' } },
            { field: 'messages', value: { messages: [7, null, ['x'], { id: 'wamid.KEPT' }] } },
            { field: 'messages', value: { messaging_product: 'whatsapp', metadata: METADATA } },
            { field: 'calls', value: { statuses: [{ id: 'wacid.X', status: 'RINGING' }], calls: 'x' } },
          ],
        },
      ]),
    );
    expect(extraction.events.map((event) => event.key)).toEqual([
      'msg:wamid.KEPT',
      'calls:C:-:wacid.X:RINGING',
    ]);
    expect(extraction.unknownFields).toEqual([]);
    const at = (id: string) => ({ entryId: id, wabaId: id, phoneNumberId: undefined });
    expect(extraction.malformed).toEqual([
      {
        entryId: '-',
        wabaId: undefined,
        phoneNumberId: undefined,
        field: '-',
        problem: 'entry is not an object',
      },
      { ...at('A'), field: '-', problem: 'entry.changes is not an array' },
      { ...at('B'), field: '-', problem: 'entry.changes is not an array' },
      { ...at('C'), field: '-', problem: 'change is not an object' },
      { ...at('C'), field: '-', problem: 'change.field is not a string' },
      { ...at('C'), field: 'messages', problem: 'change.value is not an object' },
      { ...at('C'), field: 'messages', problem: 'change.value is not an object' },
      { ...at('C'), field: 'messages', problem: 'value.messages is not an array' },
      { ...at('C'), field: 'messages', problem: 'an item of value.messages is not an object' },
      { ...at('C'), field: 'messages', problem: 'an item of value.messages is not an object' },
      { ...at('C'), field: 'messages', problem: 'an item of value.messages is not an object' },
      { ...at('C'), field: 'calls', problem: 'value.calls is not an array' },
    ]);
  });

  it('accepts an envelope with no entries as zero events', () => {
    expect(extractEvents(envelope([]))).toEqual({
      ok: true,
      events: [],
      unknownFields: [],
      malformed: [],
      unkeyed: [],
    });
  });
});

describe('extractEvents: rejected bodies are typed results', () => {
  it.each([
    ['empty body', ''],
    ['truncated body', '{"object":"whatsapp_business_account","entry":[{'],
    ['form-encoded body', 'object=whatsapp_business_account'],
  ])('%s is invalid-json', (_, raw) => {
    expect(extractEvents(raw)).toMatchObject({ ok: false, reason: 'invalid-json' });
  });

  it.each([
    ['an array', '[{"object":"whatsapp_business_account","entry":[]}]'],
    ['a string', '"whatsapp_business_account"'],
    ['null', 'null'],
    ['another object type', '{"object":"page","entry":[]}'],
    ['a missing object', '{"entry":[]}'],
    ['a missing entry', '{"object":"whatsapp_business_account"}'],
    ['an entry object', '{"object":"whatsapp_business_account","entry":{"id":"1"}}'],
  ])('%s is not-whatsapp-envelope', (_, raw) => {
    const extraction = extractEvents(raw);
    expect(extraction).toMatchObject({ ok: false, reason: 'not-whatsapp-envelope' });
    expect(extraction.ok ? '' : extraction.detail).not.toBe('');
  });

  it('judges native JSON.parse output the same way', () => {
    expect(extractEventsFromEnvelope(JSON.parse('{"object":"page","entry":[]}'))).toMatchObject({
      ok: false,
      reason: 'not-whatsapp-envelope',
    });
    expect(extractEventsFromEnvelope(undefined)).toMatchObject({
      ok: false,
      reason: 'not-whatsapp-envelope',
    });
  });
});

describe('extractEvents: a 1000-update body', () => {
  it('yields 1000 keys in body order', () => {
    // 10 entries × 4 changes: messages then statuses per change, 25 updates per change.
    const expected: string[] = [];
    const entry = [];
    let n = 0;
    for (let e = 0; e < 10; e++) {
      const changes = [];
      for (let c = 0; c < 4; c++) {
        const messages = [];
        const statuses = [];
        for (let i = 0; i < 13; i++)
          messages.push({ id: `wamid.M${n + i}`, type: 'text', text: { body: 'hi' } });
        for (let i = 13; i < 25; i++) statuses.push({ id: `wamid.S${n + i}`, status: 'delivered' });
        for (let i = 0; i < 13; i++) expected.push(`msg:wamid.M${n + i}`);
        for (let i = 13; i < 25; i++) expected.push(`st:wamid.S${n + i}:delivered`);
        n += 25;
        // Statuses written first: the walk order is still messages, then statuses.
        changes.push({ field: 'messages', value: { metadata: METADATA, statuses, messages } });
      }
      entry.push({ id: `${WABA}${e}`, changes });
    }
    const keys = okExtraction(envelope(entry)).events.map((event) => event.key);
    expect(keys).toHaveLength(1000);
    expect(new Set(keys).size).toBe(1000);
    expect(keys).toEqual(expected);
  });
});

describe('field table', () => {
  it('knows exactly `messages` and the management fields the dashboard shows', () => {
    expect(KNOWN_FIELDS).toEqual(['messages', ...MANAGEMENT_FIELDS]);
    for (const field of KNOWN_FIELDS) expect(isKnownField(field)).toBe(true);
    for (const field of ['message', 'statuses', 'toString', '__proto__', ''])
      expect(isKnownField(field)).toBe(false);
  });

  it.each([
    ['messages', ['messages', 'statuses', 'errors']],
    ['user_preferences', ['user_preferences']],
    ['smb_app_state_sync', ['state_sync']],
    ['smb_message_echoes', ['message_echoes']],
    ['automatic_events', ['automatic_events']],
    ['history', ['history']],
    ['calls', ['calls', 'statuses']],
    ['group_lifecycle_update', ['groups']],
    ['group_participants_update', ['groups']],
    ['group_settings_update', ['groups']],
    ['group_status_update', ['groups']],
    ['message_echoes', ['message_echoes']],
    // Its events sit one level down (value.standby.messages[], …): the splitter keeps its value whole.
    ['standby', []],
    ['messaging_handovers', []],
    ['consumer_profile', []],
    ['account_settings_update', []],
    ['message_template_status_update', []],
    ['payment_configuration_update', []],
    ['business_capability_update', []],
    ['not_a_field', []],
    ['constructor', []],
  ])('eventItemArrays(%s)', (field, arrays) => {
    expect(eventItemArrays(field)).toEqual(arrays);
  });

  it('hands out arrays the caller cannot change', () => {
    expect(Object.isFrozen(eventItemArrays('messages'))).toBe(true);
    expect(Object.isFrozen(eventItemArrays('flows'))).toBe(true);
  });
});
