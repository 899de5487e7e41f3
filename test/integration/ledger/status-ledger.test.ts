import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DISPLAY_PHONE_NUMBER,
  PHONE_NUMBER_ID,
  statusesBody,
  webhookPayload,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import { createConsumerHandler } from '../../../functions/consumer/create-consumer.ts';
import type { StatusContext } from '../../../functions/consumer/handler-api.ts';
import type { StatusObservation } from '../../../functions/ledger/status-event.ts';
import { StatusLedger } from '../../../functions/ledger/status-ledger.ts';
import { LEGACY_FAILED_RANK } from '../../../functions/ledger/status-rank.ts';
import { countRequests } from '../../../lab/bench/support/request-counter.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  createSqsClient,
  createTestClaimTable,
} from '../../support/aws-clients.ts';
import {
  captureOutput,
  emfDocuments,
  metricValue,
  sqsEvent,
  testConsumerConfig,
} from '../../support/consumer-harness.ts';

const dynamodb = createDynamoDbClient();
const requests = countRequests(dynamodb);
const documentClient = createDocumentClient(dynamodb);
let tableName: string;
let ledger: StatusLedger;

beforeAll(async () => {
  tableName = await createTestClaimTable(dynamodb, 'ledger');
  ledger = new StatusLedger({ documentClient, tableName, retentionDays: 8 });
});

let wamids = 0;
const nextWamid = () => `wamid.LEDGER${++wamids}`;
const observe = (
  wamid: string,
  status: string,
  timestamp: number,
  participant?: string,
): StatusObservation => ({
  wamid,
  status,
  timestamp,
  recipientParticipantId: participant,
});

describe('status ledger on DynamoDB Local', () => {
  it('read, then sent, then delivered: current stays read, every time is recorded', async () => {
    const wamid = nextWamid();
    const changes = [];
    for (const [status, at] of [
      ['read', 300],
      ['sent', 100],
      ['delivered', 200],
    ] as const) {
      changes.push((await ledger.record(observe(wamid, status, at))).change);
    }
    expect(changes).toEqual(['advanced', 'merged', 'merged']);
    const view = await ledger.view(wamid);
    expect(view).toEqual({
      wamid,
      recipientParticipantId: undefined,
      current: 'read',
      currentRank: 3,
      times: { sent: 100, delivered: 200, read: 300 },
    });
  });

  it('advances in order with one write per status, and merges a late one with two', async () => {
    const wamid = nextWamid();
    requests.reset();
    const sent = await ledger.record(observe(wamid, 'sent', 1));
    const read = await ledger.record(observe(wamid, 'read', 3));
    expect(requests.count('UpdateItem')).toBe(2);
    expect([sent.view.current, read.view.current]).toEqual(['sent', 'read']);
    requests.reset();
    const late = await ledger.record(observe(wamid, 'delivered', 2));
    expect(requests.count('UpdateItem')).toBe(2);
    expect(late.change).toBe('merged');
  });

  it('failed, then delivered from another device: delivered advances; a later failed is merged', async () => {
    const wamid = nextWamid();
    const changes = [];
    for (const [status, at] of [
      ['sent', 1],
      ['failed', 2],
      ['delivered', 3],
      ['failed', 2],
    ] as const) {
      changes.push((await ledger.record(observe(wamid, status, at))).change);
    }
    // The second failed is a retry of the first: it reports what the first attempt did.
    expect(changes).toEqual(['advanced', 'advanced', 'advanced', 'advanced']);
    expect(await ledger.view(wamid)).toMatchObject({ current: 'delivered', currentRank: 2 });

    const other = nextWamid();
    await ledger.record(observe(other, 'read', 5));
    expect((await ledger.record(observe(other, 'failed', 6))).change).toBe('merged');
    const view = await ledger.view(other);
    expect(view).toMatchObject({ current: 'read', times: { read: 5, failed: 6 } });
  });

  it('stores failed at rank 1.5 and lets only sent or nothing be replaced by it', async () => {
    const wamid = nextWamid();
    expect((await ledger.record(observe(wamid, 'failed', 2))).view.currentRank).toBe(1.5);
    expect((await ledger.record(observe(wamid, 'sent', 1))).change).toBe('merged');
    const stored = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: { pk: `ledger:${wamid}` }, ConsistentRead: true }),
    );
    expect(stored.Item).toMatchObject({ currentStatus: 'failed', currentRank: 1.5 });
  });

  it('reads a ledger item an older release wrote with failed at rank 5 by the current rule', async () => {
    const legacy = async (wamid: string, times: Record<string, number>) => {
      const statuses = Object.keys(times);
      await documentClient.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            pk: `ledger:${wamid}`,
            wamid,
            currentStatus: 'failed',
            currentRank: LEGACY_FAILED_RANK,
            statuses: new Set(statuses),
            ...Object.fromEntries(statuses.map((status) => [`at_${status}`, times[status]])),
            ...Object.fromEntries(statuses.map((status) => [`change_${status}`, 'advanced'])),
            expiresAt: Math.floor(Date.now() / 1000) + 86_400,
          },
        }),
      );
    };
    // sent, failed under the old ranks: failed is current; a late sent is merged, delivered advances.
    const failedOnly = nextWamid();
    await legacy(failedOnly, { failed: 2 });
    expect((await ledger.record(observe(failedOnly, 'sent', 1))).change).toBe('merged');
    const delivered = await ledger.record(observe(failedOnly, 'delivered', 3));
    expect(delivered).toMatchObject({ change: 'advanced', view: { current: 'delivered', currentRank: 2 } });

    // read, then failed under the old ranks (failed overtook read): it reads as read, and a late delivered
    // (a status new to the item) is merged instead of taking the message back below read.
    const overtaken = nextWamid();
    await legacy(overtaken, { read: 3, failed: 4 });
    expect(await ledger.view(overtaken)).toMatchObject({ current: 'read', currentRank: 3 });
    const late = await ledger.record(observe(overtaken, 'delivered', 2));
    expect(late).toMatchObject({ change: 'merged', view: { current: 'read', currentRank: 3 } });
    const played = await ledger.record(observe(overtaken, 'played', 5));
    expect(played).toMatchObject({ change: 'advanced', view: { current: 'played', currentRank: 4 } });
  });

  it('is idempotent: a retried status changes nothing and reports the change of its first attempt', async () => {
    const wamid = nextWamid();
    const first = await ledger.record(observe(wamid, 'delivered', 20));
    const retried = await ledger.record(observe(wamid, 'delivered', 21));
    expect(first.change).toBe('advanced');
    expect(retried.change).toBe('advanced');
    expect(retried.view.times).toEqual({ delivered: 20 });
  });

  it('reports advanced on a retry even after a higher status became current in between', async () => {
    const wamid = nextWamid();
    expect((await ledger.record(observe(wamid, 'delivered', 20))).change).toBe('advanced');
    expect((await ledger.record(observe(wamid, 'read', 30))).change).toBe('advanced');
    const retried = await ledger.record(observe(wamid, 'delivered', 20));
    expect(retried.change).toBe('advanced');
    expect(retried.view.current).toBe('read');
  });

  it('reports merged on every attempt of a late status', async () => {
    const wamid = nextWamid();
    await ledger.record(observe(wamid, 'read', 30));
    const attempts = [];
    for (let attempt = 0; attempt < 3; attempt++)
      attempts.push(await ledger.record(observe(wamid, 'sent', 10)));
    expect(attempts.map((update) => update.change)).toEqual(['merged', 'merged', 'merged']);
    expect(attempts.at(-1)?.view).toMatchObject({ current: 'read', times: { read: 30, sent: 10 } });
  });

  it('keeps one entry per participant for group statuses', async () => {
    const wamid = nextWamid();
    await ledger.record(observe(wamid, 'sent', 1));
    await ledger.record(observe(wamid, 'read', 5, '4915112345678'));
    await ledger.record(observe(wamid, 'delivered', 3, '4915112345678'));
    await ledger.record(observe(wamid, 'delivered', 4, '5511912345678'));
    expect((await ledger.view(wamid))?.current).toBe('sent');
    const first = await ledger.view(wamid, '4915112345678');
    expect(first).toMatchObject({ current: 'read', recipientParticipantId: '4915112345678' });
    expect(first?.times).toEqual({ delivered: 3, read: 5 });
    expect((await ledger.view(wamid, '5511912345678'))?.current).toBe('delivered');
  });

  it('keeps one entry per participant named only by BSUID, apart from the phone-numbered ones', async () => {
    const wamid = nextWamid();
    await ledger.record(observe(wamid, 'read', 5, 'US.13491208655302741918'));
    await ledger.record(observe(wamid, 'failed', 4, 'BR.80512093746512093847'));
    await ledger.record(observe(wamid, 'delivered', 3, '4915112345678'));
    expect((await ledger.view(wamid, 'US.13491208655302741918'))?.current).toBe('read');
    expect((await ledger.view(wamid, 'BR.80512093746512093847'))?.current).toBe('failed');
    expect((await ledger.view(wamid, '4915112345678'))?.current).toBe('delivered');
    expect(await ledger.view(wamid)).toBeUndefined();
  });

  it('stores items under the namespace prefix with a TTL, beside the claims', async () => {
    const namespaced = new StatusLedger({
      documentClient,
      tableName,
      retentionDays: 8,
      keyNamespace: 'crm',
    });
    const wamid = nextWamid();
    const before = Math.floor(Date.now() / 1000);
    await namespaced.record(observe(wamid, 'sent', 1));
    const item = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: { pk: `crm#ledger:${wamid}` }, ConsistentRead: true }),
    );
    expect(item.Item?.currentStatus).toBe('sent');
    expect(Number(item.Item?.expiresAt)).toBeGreaterThanOrEqual(before + 8 * 86_400);
    expect(await ledger.view(wamid)).toBeUndefined();
  });
});

describe('status ledger through the consumer', () => {
  it('merges read, delivered, sent of one body (reverse order) and gives handlers the merged view', async () => {
    const seen: { key: string; current: string; change: string }[] = [];
    const handler = createConsumerHandler(testConsumerConfig({ tableName }), {
      documentClient,
      sqs: createSqsClient(),
      handlers: {
        onStatus: ({ key, ledger: view, ledgerChange }: StatusContext) => {
          seen.push({ key, current: view.current, change: ledgerChange });
        },
      },
    });
    const wamid = nextWamid();
    const body = statusesBody(
      (['read', 'delivered', 'sent'] as const).map((status, i) => ({
        id: wamid,
        status,
        recipientId: '16505550001',
        timestamp: String(1749416400 - i * 10),
      })),
    );

    const { result, lines } = await captureOutput(() =>
      handler(sqsEvent(['rec-1', body]), { getRemainingTimeInMillis: () => 30_000 }),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(seen).toEqual([
      { key: `st:${wamid}:read`, current: 'read', change: 'advanced' },
      { key: `st:${wamid}:delivered`, current: 'read', change: 'merged' },
      { key: `st:${wamid}:sent`, current: 'read', change: 'merged' },
    ]);
    expect((await ledger.view(wamid))?.times).toEqual({
      read: 1749416400,
      delivered: 1749416390,
      sent: 1749416380,
    });
    expect(metricValue(emfDocuments(lines), 'StatusRegressionsMerged')).toBe(2);

    // The same body again (a Meta retry): every status is a duplicate, the ledger is not written.
    seen.length = 0;
    requests.reset();
    const again = await captureOutput(() =>
      handler(sqsEvent(['rec-2', body]), { getRemainingTimeInMillis: () => 30_000 }),
    );
    expect(seen).toEqual([]);
    expect(requests.count('UpdateItem')).toBe(0);
    expect(metricValue(emfDocuments(again.lines), 'EventsDuplicate', 'status')).toBe(3);
  });

  it('a failed whose handler threw is retried after delivered advanced: the retry still sees advanced', async () => {
    const seen: { key: string; current: string; change: string }[] = [];
    let failures = 0;
    const handler = createConsumerHandler(testConsumerConfig({ tableName }), {
      documentClient,
      sqs: createSqsClient(),
      handlers: {
        onStatus: ({ key, ledger: view, ledgerChange }: StatusContext) => {
          seen.push({ key, current: view.current, change: ledgerChange });
          if (key.endsWith(':failed') && failures++ === 0) throw new Error('downstream unavailable');
        },
      },
    });
    const wamid = nextWamid();
    const status = (name: string, timestamp: string) =>
      statusesBody([{ id: wamid, status: name, recipientId: '16505550001', timestamp }]);
    const invoke = (messageId: string, body: string) =>
      captureOutput(() => handler(sqsEvent([messageId, body]), { getRemainingTimeInMillis: () => 30_000 }));

    const first = await invoke('rec-failed', status('failed', '1749416400'));
    expect(first.result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-failed' }] });
    await invoke('rec-delivered', status('delivered', '1749416410'));
    // SQS delivers the failed record again (same message, its claim released by the failed handler).
    const retried = await invoke('rec-failed', status('failed', '1749416400'));
    expect(retried.result).toEqual({ batchItemFailures: [] });

    expect(seen).toEqual([
      { key: `st:${wamid}:failed`, current: 'failed', change: 'advanced' },
      { key: `st:${wamid}:delivered`, current: 'delivered', change: 'advanced' },
      { key: `st:${wamid}:failed`, current: 'delivered', change: 'advanced' },
    ]);
  });

  it('gives handlers the BSUIDs of the payload and each BSUID-only participant its own ledger', async () => {
    const payloads: Record<string, unknown>[] = [];
    const views: { key: string; participant: string | undefined; current: string }[] = [];
    const handler = createConsumerHandler(testConsumerConfig({ tableName }), {
      documentClient,
      sqs: createSqsClient(),
      handlers: {
        onStatus: ({ key, payload, ledger: view }: StatusContext) => {
          payloads.push(payload);
          views.push({ key, participant: view.recipientParticipantId, current: view.current });
        },
      },
    });
    const wamid = nextWamid();
    const oneToOne = nextWamid();
    const statuses = [
      groupStatus(wamid, 'read', { recipient_participant_user_id: 'US.13491208655302741918' }),
      groupStatus(wamid, 'failed', { recipient_participant_user_id: 'BR.80512093746512093847' }),
      groupStatus(wamid, 'delivered', {
        recipient_participant_id: '4915112345678',
        recipient_participant_user_id: 'DE.55120937465120938470',
      }),
      // A one-to-one send to a customer known only by BSUID (a username, no phone number).
      {
        id: oneToOne,
        status: 'delivered',
        timestamp: '1749416400',
        recipient_user_id: 'US.13491208655302741918',
      },
    ];
    const body = JSON.stringify(
      webhookPayload([
        {
          field: 'messages',
          value: {
            messaging_product: 'whatsapp',
            metadata: { display_phone_number: DISPLAY_PHONE_NUMBER, phone_number_id: PHONE_NUMBER_ID },
            statuses,
          },
        },
      ]),
    );

    const { result, lines } = await captureOutput(() =>
      handler(sqsEvent(['rec-bsuid', body]), { getRemainingTimeInMillis: () => 30_000 }),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    // Nothing strips the BSUIDs: each handler gets its status item as Meta sent it.
    expect(payloads).toEqual(statuses);
    expect(views).toEqual([
      {
        key: `st:${wamid}:read:US.13491208655302741918`,
        participant: 'US.13491208655302741918',
        current: 'read',
      },
      {
        key: `st:${wamid}:failed:BR.80512093746512093847`,
        participant: 'BR.80512093746512093847',
        current: 'failed',
      },
      { key: `st:${wamid}:delivered:4915112345678`, participant: '4915112345678', current: 'delivered' },
      { key: `st:${oneToOne}:delivered`, participant: undefined, current: 'delivered' },
    ]);
    expect((await ledger.view(wamid, 'US.13491208655302741918'))?.current).toBe('read');
    expect((await ledger.view(wamid, 'BR.80512093746512093847'))?.current).toBe('failed');
    for (const id of ['US.13491208655302741918', 'BR.80512093746512093847', 'DE.55120937465120938470']) {
      expect(lines.filter((line) => line.includes(id))).toEqual([]);
    }
    expect(lines.filter((line) => line.includes('4915112345678'))).toEqual([]);
  });
});

/** A status of a group send, as Meta reports one per participant. */
function groupStatus(wamid: string, status: string, participant: Record<string, string>) {
  return {
    id: wamid,
    status,
    timestamp: '1749416400',
    recipient_id: '120363044851234567',
    recipient_type: 'group',
    ...participant,
  };
}
