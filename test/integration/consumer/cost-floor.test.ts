/**
 * The cost floor of the claim table (docs/design.md, claim table), per event class, counted on the wire: every
 * HTTP attempt the consumer's DynamoDB client sends to DynamoDB Local, through `createConsumerHandler`.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { inboundMessages, messagesBody, statusesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { SERVICE_NAME } from '../../../contract/metric-names.ts';
import { type ConsumerConfig, createConsumerHandler } from '../../../functions/consumer/create-consumer.ts';
import type { WebhookHandlers } from '../../../functions/consumer/handler-api.ts';
import { countRequests } from '../../../lab/bench/support/request-counter.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  createSqsClient,
  createTestClaimTable,
} from '../../support/aws-clients.ts';
import { sqsEvent, testConsumerConfig } from '../../support/consumer-harness.ts';

const dynamodb = createDynamoDbClient();
const requests = countRequests(dynamodb);
const documentClient = createDocumentClient(dynamodb);
let tableName: string;

beforeAll(async () => {
  tableName = await createTestClaimTable(dynamodb, 'cost-floor');
});

function consumer(handlers: WebhookHandlers, settings: Partial<ConsumerConfig> = {}) {
  const handler = createConsumerHandler(testConsumerConfig({ tableName, ...settings }), {
    documentClient,
    sqs: createSqsClient(),
    handlers,
    logger: new Logger({ serviceName: SERVICE_NAME, logLevel: 'SILENT' }),
  });
  return async (event: SQSEvent) => {
    requests.reset();
    const result = await handler(event, { getRemainingTimeInMillis: () => 30_000 });
    expect(result.batchItemFailures).toEqual([]);
    return requests.counts();
  };
}

let bodies = 0;
function messageBody(): string {
  return messagesBody(inboundMessages(1, `cost${++bodies}x${Date.now()}`));
}
function statusBody(status: 'sent' | 'delivered' | 'read'): string {
  return statusesBody([
    {
      id: `wamid.cost${++bodies}x${Date.now()}`,
      status,
      recipientId: '16505550001',
      timestamp: '1749416400',
    },
  ]);
}

describe('cost per event class, on the wire', () => {
  const onMessage = () => undefined;

  it('an event with a side effect: 2 writes (claim, complete), no read', async () => {
    const counts = await consumer({ onMessage })(sqsEvent(['r', messageBody()]));
    expect(counts).toEqual({ PutItem: 1, UpdateItem: 1 });
  });

  it('an event without handler: 1 write (recorded as done), no read', async () => {
    const counts = await consumer({ onMessage })(sqsEvent(['r', statusBody('delivered')]));
    expect(counts).toEqual({ PutItem: 1 });
  });

  it('an event without handler, unhandled claims turned off: no request at all', async () => {
    const counts = await consumer(
      { onMessage },
      { claimUnhandledEvents: false },
    )(sqsEvent(['r', statusBody('read')]));
    expect(counts).toEqual({});
  });

  it('a status with an onStatus handler: 3 writes (claim, ledger, complete)', async () => {
    const counts = await consumer({ onStatus: () => undefined })(sqsEvent(['r', statusBody('sent')]));
    expect(counts).toEqual({ PutItem: 1, UpdateItem: 2 });
  });

  it.each([
    ['with', { onMessage }],
    ['without', {}],
  ])('a duplicate (%s handler): 1 failed conditional write, no read', async (_label, handlers) => {
    const body = messageBody();
    await consumer(handlers)(sqsEvent(['first', body]));
    const counts = await consumer(handlers)(sqsEvent(['retry', body]));
    expect(counts).toEqual({ PutItem: 1 });
  });

  it('a key repeated within one batch: 0 requests beyond its first occurrence', async () => {
    const body = messageBody();
    const counts = await consumer({ onMessage })(sqsEvent(['a', body], ['b', body], ['c', body]));
    expect(counts).toEqual({ PutItem: 1, UpdateItem: 1 });
  });
});
