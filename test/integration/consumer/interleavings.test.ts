/**
 * The two interleavings that used to lose an event for good, replayed with the consumer users deploy
 * (`createConsumerHandler`) over DynamoDB Local and the SQS emulator:
 *
 * 1. One queue message delivered to two invocations at once: the second must not acknowledge it while the
 *    first, which holds the claim, may still fail.
 * 2. A status handler that acts only on `ledgerChange === 'advanced'` must see `advanced` again on the
 *    retry after its first attempt failed, after a ledger write whose answer was lost, and after a takeover.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import {
  CreateQueueCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { toLambdaRecord } from '../../../cli/local/lambda-sqs-batch.ts';
import { inboundMessages, messagesBody, statusesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { SERVICE_NAME } from '../../../contract/metric-names.ts';
import { type ConsumerConfig, createConsumerHandler } from '../../../functions/consumer/create-consumer.ts';
import type { StatusContext, WebhookHandlers } from '../../../functions/consumer/handler-api.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  createSqsClient,
  createTestClaimTable,
  uniqueName,
} from '../../support/aws-clients.ts';
import { sqsEvent, testConsumerConfig } from '../../support/consumer-harness.ts';
import { clientLosingFirstAnswer } from '../../support/dynamodb-faults.ts';

const sqs = createSqsClient();
const dynamodb = createDynamoDbClient();
const documentClient = createDocumentClient(dynamodb);
let tableName: string;
let queueUrl: string;

const REMAINING_MS = 2_000;
const LEASE_MARGIN_MS = 1_000;
const silent = () => new Logger({ serviceName: SERVICE_NAME, logLevel: 'SILENT' });

beforeAll(async () => {
  tableName = await createTestClaimTable(dynamodb, 'interleavings');
  const created = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('interleavings') }));
  queueUrl = created.QueueUrl as string;
});

const config = (): ConsumerConfig =>
  testConsumerConfig({ tableName, deliveryQueueUrl: queueUrl, leaseMarginMs: LEASE_MARGIN_MS });

function consumer(
  handlers: WebhookHandlers,
  overrides: { clock?: () => number; client?: typeof documentClient } = {},
) {
  const handler = createConsumerHandler(config(), {
    documentClient: overrides.client ?? documentClient,
    sqs,
    handlers,
    logger: silent(),
    clock: overrides.clock,
  });
  return (event: SQSEvent): Promise<SQSBatchResponse> =>
    handler(event, { getRemainingTimeInMillis: () => REMAINING_MS });
}

async function receiveOne(waitTimeSeconds: number, visibilityTimeout = 60): Promise<Message | undefined> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 1,
      WaitTimeSeconds: waitTimeSeconds,
      VisibilityTimeout: visibilityTimeout,
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return Messages?.[0];
}

const asEvent = (message: Message): SQSEvent => ({
  Records: [toLambdaRecord(message, 'arn:aws:sqs:us-east-1:000000000000:interleavings')],
});

let ids = 0;
const nextWamid = (label: string) => `wamid.${label}${++ids}${Date.now()}`;

/** A body with one inbound message, and that message's key. */
function oneMessage(label: string): { body: string; key: string } {
  const messages = inboundMessages(1, `${label}${++ids}${Date.now()}`);
  return { body: messagesBody(messages), key: `msg:${messages[0]?.id}` };
}

describe('one queue message delivered to two invocations at once', () => {
  it('keeps the record when the first delivery fails after the second returned, and effects the event once', async () => {
    const { body, key } = oneMessage('TWICE');
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    // SQS hands the same message to two receivers: the second receive comes after the first one's
    // visibility ended (0 s here), as after a poller retry, so both hold a receipt handle of one message.
    const first = (await receiveOne(1, 0)) as Message;
    const second = (await receiveOne(1, 60)) as Message;
    expect(second.MessageId).toBe(first.MessageId);

    const effects: string[] = [];
    let secondReturned: () => void = () => undefined;
    const secondDone = new Promise<void>((resolve) => {
      secondReturned = resolve;
    });
    let firstClaimed: () => void = () => undefined;
    const firstHoldsClaim = new Promise<void>((resolve) => {
      firstClaimed = resolve;
    });
    const firstInvocation = consumer({
      onMessage: async () => {
        firstClaimed();
        await secondDone;
        throw new Error('CRM unavailable');
      },
    });
    const secondInvocation = consumer({ onMessage: ({ key }) => void effects.push(key) });

    const firstResult = firstInvocation(asEvent(first));
    await firstHoldsClaim;
    const secondResult = await secondInvocation(asEvent(second));
    secondReturned();

    expect(secondResult.batchItemFailures).toEqual([{ itemIdentifier: first.MessageId }]);
    expect((await firstResult).batchItemFailures).toEqual([{ itemIdentifier: first.MessageId }]);
    expect(effects).toEqual([]);

    // The record was given back its visibility for when the lease ends (≈ REMAINING_MS + margin + 1 s),
    // not the 60 s it was received with.
    const startedWaiting = Date.now();
    const retried = await receiveOne(10);
    expect(retried?.MessageId).toBe(first.MessageId);
    expect(Date.now() - startedWaiting).toBeLessThan(8_000);

    const retry = await consumer({ onMessage: ({ key }) => void effects.push(key) })(
      asEvent(retried as Message),
    );
    expect(retry.batchItemFailures).toEqual([]);
    expect(effects).toEqual([key]);
  });

  it('keeps a duplicate in flight even when a different queue message holds the claim, until the lease ends', async () => {
    const { body, key } = oneMessage('OTHER');
    let release: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => {
      release = resolve;
    });
    const effects: string[] = [];
    const holder = consumer({
      onMessage: async ({ key }) => {
        await holding;
        effects.push(key);
      },
    })(sqsEvent(['message-a', body]));
    // Let the holder take its claim before the other message arrives.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const other = await consumer({ onMessage: ({ key }) => void effects.push(key) })(
      sqsEvent(['message-b', body]),
    );
    release();
    // Not acknowledged: message-b comes back at the holder's lease end and is then skipped as done.
    expect(other.batchItemFailures).toEqual([{ itemIdentifier: 'message-b' }]);
    expect((await holder).batchItemFailures).toEqual([]);
    const again = await consumer({ onMessage: ({ key }) => void effects.push(key) })(
      sqsEvent(['message-b', body]),
    );
    expect(again.batchItemFailures).toEqual([]);
    expect(effects).toEqual([key]);
  });
});

describe('the change a status handler sees is the same on every attempt', () => {
  const statusBody = (wamid: string) =>
    statusesBody([{ id: wamid, status: 'delivered', recipientId: '16505550001', timestamp: '1749416400' }]);

  /** The documented pattern: act only when the status advanced. */
  function actOnAdvance(effects: string[], seen: string[]) {
    return ({ key, ledgerChange }: StatusContext) => {
      seen.push(ledgerChange);
      if (ledgerChange === 'advanced') effects.push(key);
    };
  }

  it('after a handler that failed once', async () => {
    const wamid = nextWamid('RETRY');
    const effects: string[] = [];
    const seen: string[] = [];
    const act = actOnAdvance(effects, seen);
    let calls = 0;
    const invoke = consumer({
      onStatus: (context) => {
        if (++calls === 1) {
          seen.push(context.ledgerChange);
          throw new Error('ticket API down');
        }
        act(context);
      },
    });
    const event = sqsEvent(['status-1', statusBody(wamid)]);
    expect((await invoke(event)).batchItemFailures).toHaveLength(1);
    expect((await invoke(event)).batchItemFailures).toEqual([]);
    expect(seen).toEqual(['advanced', 'advanced']);
    expect(effects).toEqual([`st:${wamid}:delivered`]);
  });

  it('after a ledger write whose answer was lost and that the SDK retried', async () => {
    const { client, faults } = clientLosingFirstAnswer('ledger');
    const wamid = nextWamid('LOST');
    const effects: string[] = [];
    const seen: string[] = [];
    const invoke = consumer(
      { onStatus: actOnAdvance(effects, seen) },
      { client: createDocumentClient(client) },
    );
    expect((await invoke(sqsEvent(['status-2', statusBody(wamid)]))).batchItemFailures).toEqual([]);
    expect(faults.report().appliedFaults.ledger).toBe(1);
    expect(seen).toEqual(['advanced']);
    expect(effects).toEqual([`st:${wamid}:delivered`]);
  });

  it('after a takeover from a worker that wrote the ledger and never finished', async () => {
    const wamid = nextWamid('TAKEOVER');
    const effects: string[] = [];
    const seen: string[] = [];
    const event = sqsEvent(['status-3', statusBody(wamid)]);
    // The first worker records the status in the ledger, then hangs past its lease (a crash, as far as the
    // claim is concerned).
    void consumer({
      onStatus: ({ ledgerChange }) => {
        seen.push(ledgerChange);
        return new Promise<void>(() => undefined);
      },
    })(event);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const later = () => Date.now() + REMAINING_MS + LEASE_MARGIN_MS + 5_000;
    const result = await consumer({ onStatus: actOnAdvance(effects, seen) }, { clock: later })(event);
    expect(result.batchItemFailures).toEqual([]);
    expect(seen).toEqual(['advanced', 'advanced']);
    expect(effects).toEqual([`st:${wamid}:delivered`]);
  });
});
