/**
 * Business-initiated call states (`calls` field, `value.statuses[]`: RINGING, ACCEPTED, REJECTED) are
 * management events: they reach `onManagementEvent`, never `onStatus`, and never touch the message status
 * ledger (docs/design.md §3: call states are not message statuses).
 */
import { readFileSync } from 'node:fs';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { envelope, statusesChange, WABA_ID } from '../../../cli/meta-traffic/webhook-bodies.ts';
import type { ManagementEventContext } from '../../../functions/consumer/handler-api.ts';
import {
  captureOutput,
  createHarness,
  emfDocuments,
  metricValue,
  sqsEvent,
} from '../../support/consumer-harness.ts';

const FIXTURES = new URL('../../fixtures/webhooks/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8');
const fixtureKeys = (name: string) =>
  readFileSync(new URL(`${name}.keys`, FIXTURES), 'utf8')
    .split('\n')
    .filter((line) => line !== '');

const CALL_ID = 'wacid.HBgNNDkxNTExMjM0NTY3OBUCABEYIEJJWkNBTEwwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDEA';
const WAMID = 'wamid.HBgNNDkxNTExMjM0NTY3OBUCABEYEk9VVEJPVU5EMDAwMDAwMDAxAA==';

/** One delivery with a message status and a call state, same recipient, same second. */
const mixedBody = envelope([
  statusesChange([{ id: WAMID, status: 'delivered', recipientId: '4915112345678', timestamp: '1751313600' }]),
  {
    field: 'calls',
    value: {
      messaging_product: 'whatsapp',
      statuses: [
        {
          id: CALL_ID,
          timestamp: '1751313600',
          type: 'call',
          status: 'ACCEPTED',
          recipient_id: '4915112345678',
        },
      ],
    },
  },
]);

function updatedKeys(dynamodb: ReturnType<typeof createHarness>['dynamodb']): string[] {
  return dynamodb.commandCalls(UpdateCommand).map((call) => String(call.args[0].input.Key?.pk));
}

describe('consumer: business-initiated call states', () => {
  it.each(['calls-statuses', 'calls-mixed'])(
    '%s: every call event goes to onManagementEvent, none to onStatus or the ledger',
    async (name) => {
      const onStatus = vi.fn();
      const managed: Pick<ManagementEventContext, 'key' | 'kind' | 'field'>[] = [];
      const { dynamodb, invoke } = createHarness({
        onStatus,
        onManagementEvent: ({ key, kind, field }) => {
          managed.push({ key, kind, field });
        },
      });
      dynamodb.on(PutCommand).resolves({});
      dynamodb.on(UpdateCommand).resolves({});

      const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-1', fixture(name)])));

      const keys = fixtureKeys(name);
      expect(result).toEqual({ batchItemFailures: [] });
      expect(onStatus).not.toHaveBeenCalled();
      expect(managed).toEqual(keys.map((key) => ({ key, kind: 'management', field: 'calls' })));
      // Only completions of the claims, no ledger write.
      expect(updatedKeys(dynamodb)).toEqual(keys);
      const documents = emfDocuments(lines);
      expect(metricValue(documents, 'EventsFresh', 'calls')).toBe(keys.length);
      expect(metricValue(documents, 'EventsFresh', 'status')).toBe(0);
    },
  );

  it('writes the ledger for the message status beside it, not for the call state', async () => {
    const onStatus = vi.fn();
    const onManagementEvent = vi.fn();
    const { dynamodb, invoke } = createHarness({ onStatus, onManagementEvent });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    dynamodb.on(UpdateCommand, { Key: { pk: `ledger:${WAMID}` } }).resolves({
      Attributes: {
        wamid: WAMID,
        currentStatus: 'delivered',
        currentRank: 2,
        at_delivered: 1751313600,
        change_delivered: 'advanced',
      },
    });

    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', mixedBody])));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(updatedKeys(dynamodb)).toEqual([
      `ledger:${WAMID}`,
      `st:${WAMID}:delivered`,
      `calls:${WABA_ID}:1751313600:${CALL_ID}:ACCEPTED`,
    ]);
    expect(onStatus).toHaveBeenCalledTimes(1);
    expect(onStatus.mock.calls[0]?.[0]).toMatchObject({ key: `st:${WAMID}:delivered`, kind: 'status' });
    expect(onManagementEvent).toHaveBeenCalledTimes(1);
    expect(onManagementEvent.mock.calls[0]?.[0]).toMatchObject({
      key: `calls:${WABA_ID}:1751313600:${CALL_ID}:ACCEPTED`,
      kind: 'management',
      field: 'calls',
    });
  });

  it('leaves the ledger alone for a call state even when no handler is registered', async () => {
    const { dynamodb, invoke } = createHarness({});
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});

    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', fixture('calls-statuses')])));

    expect(result).toEqual({ batchItemFailures: [] });
    const touched = [
      ...updatedKeys(dynamodb),
      ...dynamodb.commandCalls(PutCommand).map((call) => String(call.args[0].input.Item?.pk)),
    ];
    expect(touched.filter((pk) => pk.startsWith('ledger:'))).toEqual([]);
  });
});
