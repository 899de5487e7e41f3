import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createConsumerHandler } from '../../../functions/consumer/create-consumer.ts';
import type { StatusContext } from '../../../functions/consumer/handler-api.ts';
import type { StatusObservation } from '../../../functions/ledger/status-event.ts';
import { StatusLedger } from '../../../functions/ledger/status-ledger.ts';
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
import { countRequests } from '../../support/request-counter.ts';
import { statusesBody } from '../../support/webhooks/webhook-bodies.ts';

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

  it('keeps failed terminal: nothing moves past it, later statuses still get their time', async () => {
    const wamid = nextWamid();
    for (const [status, at] of [
      ['sent', 1],
      ['failed', 2],
      ['read', 3],
      ['played', 4],
    ] as const) {
      await ledger.record(observe(wamid, status, at));
    }
    const view = await ledger.view(wamid);
    expect(view?.current).toBe('failed');
    expect(view?.times).toEqual({ sent: 1, failed: 2, read: 3, played: 4 });
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
});
