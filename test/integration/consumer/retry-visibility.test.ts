/**
 * Backoff and `RetryLater` on the SQS emulator: the consumer users deploy (`createConsumerHandler`) over
 * DynamoDB Local changes the failed records' visibility, so they return after their own delays, in the order
 * of those delays, and long before the queue's visibility timeout.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { toLambdaRecord } from '../../../cli/local/lambda-sqs-batch.ts';
import { inboundMessages, messagesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { SERVICE_NAME } from '../../../contract/metric-names.ts';
import { createConsumerHandler } from '../../../functions/consumer/create-consumer.ts';
import { RetryLater } from '../../../functions/consumer/handler-api.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  createSqsClient,
  createTestClaimTable,
  uniqueName,
} from '../../support/aws-clients.ts';
import { testConsumerConfig } from '../../support/consumer-harness.ts';

const sqs = createSqsClient();
const dynamodb = createDynamoDbClient();
const documentClient = createDocumentClient(dynamodb);
/** What a record would wait without the consumer's visibility change. */
const QUEUE_VISIBILITY_SECONDS = 60;
const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:retry-visibility';
let tableName: string;
let queueUrl: string;

beforeAll(async () => {
  tableName = await createTestClaimTable(dynamodb, 'retry-visibility');
  const created = await sqs.send(
    new CreateQueueCommand({
      QueueName: uniqueName('retry-visibility'),
      Attributes: { VisibilityTimeout: String(QUEUE_VISIBILITY_SECONDS) },
    }),
  );
  queueUrl = created.QueueUrl as string;
});

async function receive(waitTimeSeconds: number): Promise<Message[]> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitTimeSeconds,
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return Messages ?? [];
}

describe('failed records on the SQS emulator', () => {
  it('return after their RetryLater delay or backoff, in the order of those delays', {
    timeout: 60_000,
  }, async () => {
    const [early, backedOff, late] = inboundMessages(3, `rv${Date.now()}`).map((message) => ({
      body: messagesBody([message]),
      key: `msg:${message.id}`,
    })) as [{ body: string; key: string }, { body: string; key: string }, { body: string; key: string }];
    // First receive's backoff: between 3 and 6 s; the deferrals: 1 s and 9 s.
    const handler = createConsumerHandler(
      testConsumerConfig({
        tableName,
        deliveryQueueUrl: queueUrl,
        retryBaseDelaySeconds: 6,
        retryMaxDelaySeconds: 20,
      }),
      {
        documentClient,
        sqs,
        logger: new Logger({ serviceName: SERVICE_NAME, logLevel: 'SILENT' }),
        handlers: {
          onMessage: ({ key }) => {
            if (key === early.key) throw new RetryLater({ afterSeconds: 1 });
            if (key === late.key) throw new RetryLater({ afterSeconds: 9 });
            throw new Error('CRM unavailable');
          },
        },
      },
    );
    const bodies = new Map([early, backedOff, late].map(({ body, key }) => [body, key]));
    for (const { body } of [late, backedOff, early]) {
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    }
    const received: Message[] = [];
    while (received.length < 3) received.push(...(await receive(1)));

    const result = await handler(
      { Records: received.map((message) => toLambdaRecord(message, QUEUE_ARN)) },
      { getRemainingTimeInMillis: () => 5_000 },
    );
    const failedAt = Date.now();
    expect(result.batchItemFailures).toHaveLength(3);

    const returns: { key: string; afterMs: number; receiveCount: string | undefined }[] = [];
    while (returns.length < 3 && Date.now() - failedAt < 20_000) {
      for (const message of await receive(1)) {
        returns.push({
          key: bodies.get(message.Body ?? '') ?? '?',
          afterMs: Date.now() - failedAt,
          receiveCount: message.Attributes?.ApproximateReceiveCount,
        });
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
        );
      }
    }

    expect(returns.map((entry) => entry.key)).toEqual([early.key, backedOff.key, late.key]);
    expect(returns.map((entry) => entry.receiveCount)).toEqual(['2', '2', '2']);
    const [first, second, third] = returns.map((entry) => entry.afterMs) as [number, number, number];
    // Each no sooner than its delay (less the time the invocation took to set it), all long before 60 s.
    expect(first).toBeLessThan(3_000);
    expect(second).toBeGreaterThanOrEqual(2_500);
    expect(second).toBeLessThan(8_000);
    expect(third).toBeGreaterThanOrEqual(8_500);
    expect(third).toBeLessThan(QUEUE_VISIBILITY_SECONDS * 1000);
  });
});
