/**
 * The ordered message lane (docs/design.md §8) with the consumer users deploy (`createConsumerHandler` with
 * `ordered`), over DynamoDB Local and a FIFO queue of the SQS emulator: records as Lambda's FIFO event source
 * hands them out, a conversation's handlers one after the other, conversations side by side, a failure
 * holding its conversation back, and bursts answered once.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { toLambdaRecord } from '../../../cli/local/lambda-sqs-batch.ts';
import { messagesBody, PHONE_NUMBER_ID } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { conversationId } from '../../../contract/lanes.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../../contract/metric-names.ts';
import { createConsumerHandler } from '../../../functions/consumer/create-consumer.ts';
import {
  type ConversationTurnContext,
  defineWebhookHandlers,
  type MessageContext,
  type WebhookHandlers,
} from '../../../functions/consumer/handler-api.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  createSqsClient,
  createTestClaimTable,
  uniqueName,
} from '../../support/aws-clients.ts';
import { captureOutput, emfDocuments, testConsumerConfig } from '../../support/consumer-harness.ts';

const sqs = createSqsClient();
const dynamodb = createDynamoDbClient();
const documentClient = createDocumentClient(dynamodb);
let tableName: string;
let queueUrl: string;
let queueArn: string;

const silent = () => new Logger({ serviceName: SERVICE_NAME, logLevel: 'SILENT' });

beforeEach(async () => {
  tableName = await createTestClaimTable(dynamodb, 'ordered-lane');
  const created = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${uniqueName('ordered-lane')}.fifo`,
      Attributes: {
        FifoQueue: 'true',
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
        VisibilityTimeout: '60',
      },
    }),
  );
  queueUrl = created.QueueUrl as string;
  const attributes = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  queueArn = attributes.Attributes?.QueueArn as string;
});

/** A message of customer `from`, as the receiver's message lane stores it: one conversation per part. */
function message(id: string, from: string) {
  return messagesBody([{ id, from, text: 'hi', timestamp: '1749416383' } as never]);
}

/** Sends `parts` ([wamid, customer]) to the FIFO queue in order, grouped by conversation. */
async function enqueue(parts: readonly [string, string][]): Promise<void> {
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: parts.map(([id, from], index) => ({
        Id: String(index),
        MessageBody: message(id, from),
        MessageGroupId: conversationId(PHONE_NUMBER_ID, from),
        MessageDeduplicationId: `msg:${id}`,
      })),
    }),
  );
}

/** One poll, as Lambda's FIFO event source makes it: up to 10 records, groups locked while in flight. */
async function poll(): Promise<SQSEvent> {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 60,
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return { Records: Messages.map((received) => toLambdaRecord(received, queueArn)) };
}

function orderedConsumer(
  handlers: WebhookHandlers,
  clock: () => number = Date.now,
  laneDeadLetters?: { queueUrl: string; maxReceives: number },
) {
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME });
  const handler = createConsumerHandler(
    testConsumerConfig({
      ...(laneDeadLetters === undefined ? {} : { laneDeadLetters }),
      tableName,
      deliveryQueueUrl: queueUrl,
      lane: 'message',
      ordered: true,
      // A failed record's first backoff: 1 to 2 s.
      retryBaseDelaySeconds: 2,
      retryMaxDelaySeconds: 60,
    }),
    { documentClient, sqs, handlers, logger: silent(), metrics, clock },
  );
  return (event: SQSEvent) => handler(event, { getRemainingTimeInMillis: () => 20_000 });
}

async function claimState(key: string): Promise<string | undefined> {
  const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: { pk: key } }));
  return Item?.state as string | undefined;
}

const failedIds = (response: { batchItemFailures: { itemIdentifier: string }[] }, event: SQSEvent) =>
  response.batchItemFailures
    .map(({ itemIdentifier }) => bodyId(event.Records.find((r) => r.messageId === itemIdentifier)))
    .sort();

function bodyId(record: SQSRecord | undefined): string {
  const parsed = JSON.parse(record?.body ?? '{}');
  return parsed.entry[0].changes[0].value.messages[0].id;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('an ordered message lane', () => {
  it('runs a conversation’s messages one after the other, and conversations side by side', async () => {
    await enqueue([
      ['wamid.a1', '111'],
      ['wamid.b1', '222'],
      ['wamid.a2', '111'],
      ['wamid.a3', '111'],
    ]);
    const timeline: string[] = [];
    const consume = orderedConsumer(
      defineWebhookHandlers({
        async onMessage({ key }: MessageContext) {
          timeline.push(`start ${key}`);
          await sleep(key === 'msg:wamid.a1' ? 60 : 20);
          timeline.push(`end ${key}`);
        },
      }),
    );
    const event = await poll();
    expect(event.Records).toHaveLength(4);
    expect(await consume(event)).toEqual({ batchItemFailures: [] });
    const a = timeline.filter((line) => line.includes('wamid.a'));
    expect(a).toEqual([
      'start msg:wamid.a1',
      'end msg:wamid.a1',
      'start msg:wamid.a2',
      'end msg:wamid.a2',
      'start msg:wamid.a3',
      'end msg:wamid.a3',
    ]);
    expect(timeline.indexOf('end msg:wamid.b1')).toBeLessThan(timeline.indexOf('end msg:wamid.a1'));
  });

  it('after a failure, holds the rest of that conversation back unrun and releases its claims', async () => {
    await enqueue([
      ['wamid.c1', '333'],
      ['wamid.c2', '333'],
      ['wamid.d1', '444'],
    ]);
    const effected: string[] = [];
    let failNext = true;
    const consume = orderedConsumer(
      defineWebhookHandlers({
        onMessage({ key }: MessageContext) {
          if (key === 'msg:wamid.c1' && failNext) {
            failNext = false;
            throw new Error('downstream down');
          }
          effected.push(key);
        },
      }),
    );
    const first = await poll();
    const { result, lines } = await captureOutput(() => consume(first));
    expect(failedIds(result, first)).toEqual(['wamid.c1', 'wamid.c2']);
    expect(effected).toEqual(['msg:wamid.d1']);
    // c2 was claimed in the batch's claim pass, then released unrun: its retry finds it free.
    expect(await claimState('msg:wamid.c2')).toBeUndefined();
    expect(await claimState('msg:wamid.d1')).toBe('done');
    const held = emfDocuments(lines).find((document) => 'RecordsHeldBehindFailure' in document.values);
    expect(held?.values.RecordsHeldBehindFailure).toBe(1);

    // The conversation comes back whole, in order, once c1's backoff is over (its group stays locked till then).
    const second = await redeliveredWithin(5_000);
    expect(second.Records.map(bodyId)).toEqual(['wamid.c1', 'wamid.c2']);
    expect(await consume(second)).toEqual({ batchItemFailures: [] });
    expect(effected).toEqual(['msg:wamid.d1', 'msg:wamid.c1', 'msg:wamid.c2']);
  });

  it('moves a record failing on its last receive to the DLQ itself, and runs its conversation on at once', async () => {
    const created = await sqs.send(
      new CreateQueueCommand({
        QueueName: `${uniqueName('ordered-lane-dlq')}.fifo`,
        Attributes: { FifoQueue: 'true' },
      }),
    );
    const dlqUrl = created.QueueUrl as string;
    await enqueue([
      ['wamid.h1', '888'],
      ['wamid.h2', '888'],
    ]);
    const effected: string[] = [];
    const consume = orderedConsumer(
      defineWebhookHandlers({
        onMessage({ key }: MessageContext) {
          if (key === 'msg:wamid.h1') throw new Error('poison message');
          effected.push(key);
        },
      }),
      Date.now,
      { queueUrl: dlqUrl, maxReceives: 2 },
    );
    const first = await poll();
    expect(failedIds(await consume(first), first)).toEqual(['wamid.h1', 'wamid.h2']);
    expect(effected).toEqual([]);

    // Its second receive is its last: h1 goes to the DLQ, h2 runs in the same invocation.
    const second = await redeliveredWithin(5_000);
    expect(second.Records.map((record) => record.attributes.ApproximateReceiveCount)).toEqual(['2', '2']);
    const { result, lines } = await captureOutput(() => consume(second));
    expect(result).toEqual({ batchItemFailures: [] });
    expect(effected).toEqual(['msg:wamid.h2']);
    const moved = emfDocuments(lines).find((document) => 'RecordsDeadLettered' in document.values);
    expect(moved?.values.RecordsDeadLettered).toBe(1);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MaxNumberOfMessages: 10,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    expect(
      Messages.map((received) => JSON.parse(received.Body ?? '{}').entry[0].changes[0].value.messages[0].id),
    ).toEqual(['wamid.h1']);
    expect(Messages[0]?.Attributes?.MessageGroupId).toBe(conversationId(PHONE_NUMBER_ID, '888'));
    expect(Messages[0]?.MessageAttributes?.deadLetteredBy?.StringValue).toBe('consumer');
  });

  it('counts each record’s wait before its handler as EventWaitTime on the message lane', async () => {
    await enqueue([['wamid.e1', '555']]);
    const consume = orderedConsumer(defineWebhookHandlers({ onMessage: () => {} }));
    const event = await poll();
    const sentAt = Number(event.Records[0]?.attributes.SentTimestamp);
    const before = Date.now();
    const { lines } = await captureOutput(() => consume(event));
    const wait = emfDocuments(lines).find((document) => 'EventWaitTime' in document.values);
    expect(wait?.dimensions).toEqual([['service', 'Subscriber', 'Lane']]);
    expect(wait?.values.Lane).toBe('message');
    expect(wait?.values.EventWaitTime).toBeGreaterThanOrEqual(before - sentAt);
    expect(wait?.values.EventWaitTime).toBeLessThan(Date.now() - sentAt + 1);
  });
});

describe('bursts (onConversationTurn)', () => {
  const window = 1_000;

  function turnConsumer(turns: string[][], clock: () => number, failFirst = false) {
    let fail = failFirst;
    return orderedConsumer(
      defineWebhookHandlers({
        burstWindowMs: window,
        onConversationTurn({ messages }: ConversationTurnContext) {
          if (fail) {
            fail = false;
            throw new Error('bot backend down');
          }
          turns.push(messages.map(({ key }) => key));
        },
      }),
      clock,
    );
  }

  it('three messages typed 300 ms apart reach one call holding all three, and a retry of one reaches none', async () => {
    const turns: string[][] = [];
    let offset = 0;
    const consume = turnConsumer(turns, () => Date.now() + offset);
    await enqueue([['wamid.f1', '666']]);
    await sleep(300);
    await enqueue([['wamid.f2', '666']]);
    await sleep(300);
    await enqueue([['wamid.f3', '666']]);

    // Polled inside the window: handed back unclaimed, no handler call, no claim written.
    const early = await poll();
    expect(early.Records.map(bodyId)).toEqual(['wamid.f1', 'wamid.f2', 'wamid.f3']);
    const { result, lines } = await captureOutput(() => consume(early));
    expect(failedIds(result, early)).toEqual(['wamid.f1', 'wamid.f2', 'wamid.f3']);
    expect(turns).toEqual([]);
    expect(await claimState('msg:wamid.f1')).toBeUndefined();
    const held = emfDocuments(lines).find((document) => 'RecordsHeldForBurst' in document.values);
    expect(held?.values.RecordsHeldForBurst).toBe(3);

    // Back when the window closed: one turn, in order, once.
    const later = await redeliveredWithin(5_000);
    expect(await consume(later)).toEqual({ batchItemFailures: [] });
    expect(turns).toEqual([['msg:wamid.f1', 'msg:wamid.f2', 'msg:wamid.f3']]);
    for (const id of ['f1', 'f2', 'f3']) expect(await claimState(`msg:wamid.${id}`)).toBe('done');

    // Meta retries f2 an hour later (a new delivery, so a new queue message): a duplicate, no handler call.
    offset = 3_600_000;
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          {
            Id: '0',
            MessageBody: message('wamid.f2', '666'),
            MessageGroupId: conversationId(PHONE_NUMBER_ID, '666'),
            MessageDeduplicationId: 'retry-of-f2',
          },
        ],
      }),
    );
    const retry = await poll();
    expect(await consume(retry)).toEqual({ batchItemFailures: [] });
    expect(turns).toHaveLength(1);
  });

  it('a turn whose handler fails once is retried whole and effected once', async () => {
    const turns: string[][] = [];
    const consume = turnConsumer(turns, () => Date.now() + window, true);
    await enqueue([
      ['wamid.g1', '777'],
      ['wamid.g2', '777'],
    ]);
    const first = await poll();
    expect(failedIds(await consume(first), first)).toEqual(['wamid.g1', 'wamid.g2']);
    expect(await claimState('msg:wamid.g1')).toBeUndefined();
    expect(await claimState('msg:wamid.g2')).toBeUndefined();
    const second = await redeliveredWithin(5_000);
    expect(await consume(second)).toEqual({ batchItemFailures: [] });
    expect(turns).toEqual([['msg:wamid.g1', 'msg:wamid.g2']]);
  });
});

/** Polls until the held-back records are visible again (their return time was set by the consumer). */
async function redeliveredWithin(ms: number): Promise<SQSEvent> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const event = await poll();
    if (event.Records.length > 0) return event;
    await sleep(200);
  }
  throw new Error(`nothing came back within ${ms} ms`);
}
