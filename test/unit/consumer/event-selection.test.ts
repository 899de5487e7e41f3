import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  envelope,
  inboundMessages,
  messagesChange,
  statusesChange,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import { selectEvents } from '../../../functions/consumer/event-selection.ts';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import {
  captureOutput,
  createHarness,
  emfDocuments,
  metricValue,
  sqsEvent,
} from '../../support/consumer-harness.ts';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/webhooks/${name}`, import.meta.url), 'utf8')) as {
    entry: { changes: object[] }[];
  };

/** One body holding two messages, a status, two account updates and a field no documentation knows. */
function mixedBody(): string {
  return envelope([
    messagesChange(inboundMessages(2, 'sel')),
    statusesChange([
      { id: 'wamid.out1', status: 'read', recipientId: '16505550001', timestamp: '1749416400' },
    ]),
    ...(fixture('account_update.json').entry[0]?.changes ?? []),
    { field: 'some_future_field', value: { x: 1 } },
  ]);
}

describe('selectEvents by field', () => {
  it('keeps only the events of the wanted fields and lists the others with their Field dimension', () => {
    const selection = selectEvents(extractEvents(mixedBody()), { fields: ['messages'] });

    if (!selection.extraction.ok) throw new Error('the mixed body is usable');
    expect(selection.extraction.events.map((event) => event.kind)).toEqual(['message', 'message', 'status']);
    expect(selection.extraction.unknownFields).toEqual([]);
    expect(selection.filteredOut).toEqual([
      { field: 'account_update', metricField: 'account_update' },
      { field: 'account_update', metricField: 'account_update' },
      { field: 'some_future_field', metricField: 'some_future_field' },
    ]);
  });

  it('sets the messages field aside whole (messages, statuses) for a subscriber of other fields', () => {
    const selection = selectEvents(extractEvents(mixedBody()), {
      fields: ['account_update', 'some_future_field'],
    });

    if (!selection.extraction.ok) throw new Error('the mixed body is usable');
    expect(selection.extraction.events.map((event) => event.field)).toEqual([
      'account_update',
      'account_update',
    ]);
    expect(selection.extraction.unknownFields.map((unknown) => unknown.field)).toEqual(['some_future_field']);
    expect(selection.filteredOut.map((skipped) => skipped.metricField)).toEqual([
      'message',
      'message',
      'status',
    ]);
  });

  it('keeps everything without a filter, and leaves an unusable body to quarantine', () => {
    const all = extractEvents(mixedBody());
    expect(selectEvents(all, {})).toEqual({ extraction: all, filteredOut: [] });

    const garbage = extractEvents('not json');
    expect(selectEvents(garbage, { fields: ['messages'] })).toEqual({ extraction: garbage, filteredOut: [] });
  });
});

describe('the consumer of a subscriber with fields', () => {
  it('sends no DynamoDB request and calls no handler for a record holding only other fields', async () => {
    const calls: string[] = [];
    const { dynamodb, invoke } = createHarness(
      {
        onMessage: ({ key }) => void calls.push(key),
        onManagementEvent: ({ key }) => void calls.push(key),
      },
      { subscriberName: 'bot', keyNamespace: 'bot', fields: ['messages'] },
    );
    const account = readFileSync(
      new URL('../../fixtures/webhooks/account_update.json', import.meta.url),
      'utf8',
    );

    const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-account', account])));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(dynamodb.calls()).toEqual([]);
    expect(calls).toEqual([]);
    expect(metricValue(emfDocuments(lines), 'EventsFilteredOut', 'account_update')).toBe(2);
  });
});

describe('selectEvents by number and account', () => {
  const SAO_PAULO = { display_phone_number: '551155550100', phone_number_id: '201' };
  const MONTERREY = { display_phone_number: '528155550100', phone_number_id: '202' };
  /** A message and an id-less status of São Paulo, a status of Monterrey, and the account's own update. */
  function twoNumbersBody(): string {
    return envelope([
      messagesChange(inboundMessages(1, 'br'), SAO_PAULO),
      statusesChange(
        [{ id: 'wamid.mx1', status: 'read', recipientId: '5218100000001', timestamp: '1749416390' }],
        MONTERREY,
      ),
      { field: 'messages', value: { metadata: SAO_PAULO, statuses: [{ status: 'read' }] } },
      ...(fixture('account_update.json').entry[0]?.changes ?? []),
    ]);
  }

  it("keeps a number's events and id-less items, and sets aside another number's and the account's", () => {
    const selection = selectEvents(extractEvents(twoNumbersBody()), { numbers: ['201'] });

    if (!selection.extraction.ok) throw new Error('the body is usable');
    expect(selection.extraction.events.map((event) => [event.kind, event.phoneNumberId])).toEqual([
      ['message', '201'],
    ]);
    expect(selection.extraction.unkeyed.map((item) => item.phoneNumberId)).toEqual(['201']);
    expect(selection.filteredOut).toEqual([
      { field: 'messages', metricField: 'status' },
      { field: 'account_update', metricField: 'account_update' },
      { field: 'account_update', metricField: 'account_update' },
    ]);
  });

  it("keeps every number's events and the account's own under its WABA id", () => {
    const all = extractEvents(twoNumbersBody());
    const selection = selectEvents(all, { wabas: ['102290129340398'] });
    expect(selection).toEqual({ extraction: all, filteredOut: [] });
    expect(selectEvents(all, { wabas: ['999'] }).extraction).toMatchObject({ events: [], unkeyed: [] });
  });
});

describe('the consumer of a subscriber with numbers', () => {
  it("sends no DynamoDB request and calls no handler for another number's record, and counts it", async () => {
    const calls: string[] = [];
    const { dynamodb, invoke } = createHarness(
      { onStatus: ({ key }) => void calls.push(key) },
      { subscriberName: 'brazil', keyNamespace: 'brazil', fields: undefined, numbers: ['201'] },
    );
    const monterrey = envelope([
      statusesChange([{ id: 'wamid.mx1', status: 'read', recipientId: '5218100000001', timestamp: '1' }], {
        display_phone_number: '528155550100',
        phone_number_id: '202',
      }),
    ]);

    const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-mx', monterrey])));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(dynamodb.calls()).toEqual([]);
    expect(calls).toEqual([]);
    expect(metricValue(emfDocuments(lines), 'EventsFilteredOut', 'status')).toBe(1);
  });
});
