/**
 * The Groups API fields reach `onGroupEvent` once per item of `value.groups[]`, with the group, the type, the
 * request ids and every customer the item names; without it, `onManagementEvent` gets them as any management
 * event. The other management fields never reach `onGroupEvent`. Standby copies are management events: never
 * `onMessage`, never `onStatus`, never the ledger.
 */
import { readFileSync } from 'node:fs';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import type {
  GroupEventContext,
  ManagementEventContext,
  WebhookHandlers,
} from '../../../functions/consumer/handler-api.ts';
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

const GROUP_A = 'Y2FwaV9ncm91cDoxNTU1NjAxMzQ3MjoxMjAzNjM0MDUxMjc3NDgxOTIZD';
const GROUP_B = 'Y2FwaV9ncm91cDoxNTU1NjAxMzQ3MjoxMjAzNjM0MDUxMjc3NDgxOTMZD';

/** A body holding one change of each fixture's first entry, in order. */
function combined(...names: string[]): string {
  const changes = names.flatMap((name) => JSON.parse(fixture(name)).entry[0].changes);
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [{ id: '184735920115467', time: 1781186000, changes }],
  });
}

function harness(handlers: WebhookHandlers) {
  const h = createHarness(handlers);
  h.dynamodb.on(PutCommand).resolves({});
  h.dynamodb.on(UpdateCommand).resolves({});
  h.dynamodb.on(DeleteCommand).resolves({});
  return h;
}

function putItems(dynamodb: ReturnType<typeof createHarness>['dynamodb']) {
  return dynamodb.commandCalls(PutCommand).map((call) => call.args[0].input.Item ?? {});
}

function updatedKeys(dynamodb: ReturnType<typeof createHarness>['dynamodb']): string[] {
  return dynamodb.commandCalls(UpdateCommand).map((call) => String(call.args[0].input.Key?.pk));
}

describe('consumer: onGroupEvent', () => {
  it('gets each item once, with its group, type, request ids and every customer with its list', async () => {
    const contexts: GroupEventContext[] = [];
    const onManagementEvent = vi.fn();
    const { dynamodb, invoke } = harness({
      onGroupEvent: (context) => {
        contexts.push(context);
      },
      onManagementEvent,
    });

    const { result, lines } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', fixture('group_participants_update')])),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(onManagementEvent).not.toHaveBeenCalled();
    const keys = fixtureKeys('group_participants_update');
    expect(contexts.map((context) => context.key)).toEqual(keys);
    expect(updatedKeys(dynamodb)).toEqual(keys);
    expect(
      contexts.map(({ kind, field, groupId, type, requestId, joinRequestId, customer }) => ({
        kind,
        field,
        groupId,
        type,
        requestId,
        joinRequestId,
        customer,
      })),
    ).toEqual([
      ...[GROUP_A, GROUP_A, GROUP_B].map((groupId) => ({
        kind: 'management',
        field: 'group_participants_update',
        groupId,
        type: 'group_participants_add',
        requestId: undefined,
        joinRequestId: undefined,
        customer: undefined,
      })),
      {
        kind: 'management',
        field: 'group_participants_update',
        groupId: GROUP_A,
        type: 'group_participants_remove',
        requestId: 'grq.7c1e9a20b4f3d5b2',
        joinRequestId: undefined,
        customer: undefined,
      },
      {
        kind: 'management',
        field: 'group_participants_update',
        groupId: GROUP_B,
        type: 'group_participants_remove',
        requestId: undefined,
        joinRequestId: undefined,
        customer: undefined,
      },
    ]);

    // The bulk approval: one event, three customers, one of them known by BSUID and username only.
    expect(contexts[2]?.customers).toEqual([
      expect.objectContaining({ list: 'added', phoneNumber: '16505553456', address: { to: '16505553456' } }),
      expect.objectContaining({
        list: 'added',
        phoneNumber: '4915112345678',
        userId: 'DE.30571198466205731184',
      }),
      {
        list: 'added',
        input: 'US.20884613570021945533',
        phoneNumber: undefined,
        userId: 'US.20884613570021945533',
        parentUserId: undefined,
        username: 'maple.reader',
        name: undefined,
        address: { recipient: 'US.20884613570021945533' },
      },
    ]);
    // A business removal names its customers by what the business sent (`input`): a phone number, a BSUID.
    expect(contexts[3]?.customers).toEqual([
      expect.objectContaining({
        list: 'removed',
        input: '16505552345',
        phoneNumber: '16505552345',
        userId: undefined,
        address: { to: '16505552345' },
      }),
      expect.objectContaining({
        list: 'failed',
        input: 'US.77102938465501928374',
        phoneNumber: undefined,
        userId: 'US.77102938465501928374',
        address: { recipient: 'US.77102938465501928374' },
      }),
    ]);
    expect(contexts[3]?.payload).toMatchObject({ initiated_by: 'business', errors: [{ code: 131218 }] });
    expect(metricValue(emfDocuments(lines), 'EventsFresh', 'group_participants_update')).toBe(keys.length);
  });

  it('a join request: its join_request_id and the requester on the item, phone number first', async () => {
    const onGroupEvent = vi.fn<(context: GroupEventContext) => void>();
    const { invoke } = harness({ onGroupEvent });

    await captureOutput(() => invoke(sqsEvent(['rec-1', fixture('group_participants_update-join-request')])));

    const [created, byUsername, revoked] = onGroupEvent.mock.calls.map(([context]) => context);
    expect(created).toMatchObject({
      type: 'group_join_request_created',
      requestId: undefined,
      joinRequestId: 'MTY1MDU1NTQ1Njc6MTIwMzYzNDA1MTI3NzQ4MTky',
      customers: [
        {
          list: 'requester',
          phoneNumber: '16505554567',
          userId: 'US.62019384756601928345',
          username: 'j.okafor',
          address: { to: '16505554567' },
        },
      ],
    });
    expect(byUsername?.customers).toMatchObject([
      { list: 'requester', phoneNumber: undefined, address: { recipient: 'US.55019283746550192837' } },
    ]);
    expect(revoked).toMatchObject({ type: 'group_join_request_revoked' });
  });

  it('the other group fields: every item one call, no customers; a failed create without a group id', async () => {
    const onGroupEvent = vi.fn<(context: GroupEventContext) => void>();
    const { invoke } = harness({ onGroupEvent });

    await captureOutput(() =>
      invoke(
        sqsEvent([
          'rec-1',
          combined('group_lifecycle_update', 'group_settings_update', 'group_status_update'),
        ]),
      ),
    );

    const contexts = onGroupEvent.mock.calls.map(([context]) => context);
    expect(contexts.map((context) => context.key)).toEqual([
      ...fixtureKeys('group_lifecycle_update'),
      ...fixtureKeys('group_settings_update'),
      ...fixtureKeys('group_status_update'),
    ]);
    expect(contexts.every((context) => context.customers.length === 0)).toBe(true);
    expect(contexts[0]).toMatchObject({ type: 'group_create', requestId: 'grq.7c1e9a20b4f3d58e' });
    // The failed create made no group: no group id, its errors in the payload.
    expect(contexts[2]).toMatchObject({
      groupId: undefined,
      type: 'group_create',
      requestId: 'grq.7c1e9a20b4f3d590',
      payload: { errors: [{ code: 131215 }] },
    });
    expect(contexts[4]).toMatchObject({ groupId: GROUP_A, requestId: 'grq.7c1e9a20b4f3d5c3' });
    expect(contexts[6]).toMatchObject({
      type: 'group_suspend',
      requestId: undefined,
      joinRequestId: undefined,
    });
  });

  it('never gets the other management fields, which still reach onManagementEvent', async () => {
    const onGroupEvent = vi.fn();
    const managed: Pick<ManagementEventContext, 'field' | 'key'>[] = [];
    const { invoke } = harness({
      onGroupEvent,
      onManagementEvent: ({ field, key }) => {
        managed.push({ field, key });
      },
    });

    await captureOutput(() =>
      invoke(sqsEvent(['rec-1', combined('group_status_update', 'account_settings_update')])),
    );

    expect(onGroupEvent.mock.calls.map(([context]) => context.key)).toEqual(
      fixtureKeys('group_status_update'),
    );
    expect(managed).toEqual([
      { field: 'account_settings_update', key: fixtureKeys('account_settings_update')[0] },
    ]);
  });

  it('fails like any handler: the claim is released and the record comes back', async () => {
    const { dynamodb, invoke } = harness({
      onGroupEvent: () => {
        throw new Error('CRM down');
      },
    });

    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', fixture('group_status_update')])));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    expect(dynamodb.commandCalls(DeleteCommand).length).toBeGreaterThan(0);
  });
});

describe('consumer: group events without onGroupEvent', () => {
  it('go to onManagementEvent, with the item as payload (and the group details beside it)', async () => {
    const managed: ManagementEventContext[] = [];
    const { invoke } = harness({
      onManagementEvent: (context) => {
        managed.push(context);
      },
    });

    await captureOutput(() => invoke(sqsEvent(['rec-1', fixture('group_status_update')])));

    expect(managed.map(({ key, kind, field }) => ({ key, kind, field }))).toEqual(
      fixtureKeys('group_status_update').map((key) => ({
        key,
        kind: 'management',
        field: 'group_status_update',
      })),
    );
    expect(managed[0]?.payload).toEqual({
      timestamp: '1781181000',
      type: 'group_suspend',
      group_id: GROUP_B,
    });
  });

  it('with neither handler, are claimed as done at once: no lease, no completion', async () => {
    const { dynamodb, invoke } = harness({ onGroupEvent: undefined, onStatus: vi.fn() });

    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', fixture('group_status_update')])));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(putItems(dynamodb).map((item) => [item.pk, item.state])).toEqual(
      fixtureKeys('group_status_update').map((key) => [key, 'done']),
    );
    expect(updatedKeys(dynamodb)).toEqual([]);
  });

  it('an app with only onGroupEvent claims the old management fields as done at once', async () => {
    const onGroupEvent = vi.fn();
    const { dynamodb, invoke } = harness({ onGroupEvent });

    await captureOutput(() => invoke(sqsEvent(['rec-1', fixture('account_settings_update')])));

    expect(onGroupEvent).not.toHaveBeenCalled();
    expect(putItems(dynamodb).map((item) => item.state)).toEqual(['done']);
  });
});

describe('consumer: standby copies', () => {
  it('are management events: never onMessage or onStatus, never the ledger, even when asked to keep it always', async () => {
    const onMessage = vi.fn();
    const onStatus = vi.fn();
    const managed: string[] = [];
    const { dynamodb, invoke } = createHarness(
      {
        onMessage,
        onStatus,
        onManagementEvent: ({ key }) => {
          managed.push(key);
        },
      },
      { statusLedger: 'always' },
    );
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});

    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', fixture('standby')])));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(onMessage).not.toHaveBeenCalled();
    expect(onStatus).not.toHaveBeenCalled();
    expect(managed).toEqual(fixtureKeys('standby'));
    expect(updatedKeys(dynamodb).filter((pk) => pk.startsWith('ledger:'))).toEqual([]);
  });
});
