/**
 * FIFO receives on the SQS emulator, as SQS does them (the ordered message lane, contract/lanes.ts): one
 * receive returns as many messages of a group as it can, in order; a group with a message in flight is
 * locked; messages that become visible again go back in their group's order; receive counts and the
 * redrive to a FIFO DLQ. fauxqs 1.9.2 is patched for the first and third (patches/fauxqs+1.9.2.patch).
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPipelineQueues,
  FIFO_QUEUE_SUFFIX,
  type PipelineQueues,
} from '../../../cli/local/emulators/sqs.ts';
import { type ResolvedMessageLane, resolveMessageLane } from '../../../contract/lanes.ts';
import { createSqsClient, uniqueName } from '../../support/aws-clients.ts';

// The ordered message lane's own settings: its redrive after 20 receives.
const settings = (resolveMessageLane({}, {}, undefined) as ResolvedMessageLane).settings;
const MAX_RECEIVE_COUNT = settings.maxReceiveCount;
let sqs: SQSClient;

beforeAll(() => {
  sqs = createSqsClient();
});

afterAll(() => {
  sqs.destroy();
});

async function fifoQueues(label: string): Promise<PipelineQueues> {
  const name = uniqueName(label);
  return createPipelineQueues(
    sqs,
    settings,
    {
      deliveryQueueName: `${name}${FIFO_QUEUE_SUFFIX}`,
      deadLetterQueueName: `${name}-dlq${FIFO_QUEUE_SUFFIX}`,
    },
    { fifo: true },
  );
}

async function send(queueUrl: string, group: string, body: string): Promise<void> {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      MessageGroupId: group,
      MessageDeduplicationId: body,
    }),
  );
}

async function receive(queueUrl: string, visibilityTimeout?: number): Promise<Message[]> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['All'],
      VisibilityTimeout: visibilityTimeout,
    }),
  );
  return Messages ?? [];
}

const bodies = (messages: readonly Message[]) => messages.map((m) => m.Body);

describe('FIFO queues on the SQS emulator', () => {
  it('are created in high-throughput mode, with a FIFO DLQ', async () => {
    const queues = await fifoQueues('fifo-attributes');
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queues.queueUrl, AttributeNames: ['All'] }),
    );
    const dlq = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queues.dlqUrl, AttributeNames: ['FifoQueue'] }),
    );

    expect(Attributes).toMatchObject({
      FifoQueue: 'true',
      ContentBasedDeduplication: 'false',
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
    });
    expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toEqual({
      deadLetterTargetArn: queues.dlqArn,
      maxReceiveCount: MAX_RECEIVE_COUNT,
    });
    expect(dlq.Attributes?.FifoQueue).toBe('true');
  });

  it('returns several messages of a group in one receive, in order, with the FIFO system attributes', async () => {
    const { queueUrl } = await fifoQueues('fifo-batch');
    for (const body of ['a1', 'b1', 'a2', 'a3', 'b2']) await send(queueUrl, body[0] as string, body);

    const batch = await receive(queueUrl);

    expect(bodies(batch.filter((m) => m.Attributes?.MessageGroupId === 'a'))).toEqual(['a1', 'a2', 'a3']);
    expect(bodies(batch.filter((m) => m.Attributes?.MessageGroupId === 'b'))).toEqual(['b1', 'b2']);
    const sequence = batch.map((m) => BigInt(m.Attributes?.SequenceNumber ?? '0'));
    expect(new Set(sequence).size).toBe(5);
    for (const message of batch) {
      expect(message.Attributes).toMatchObject({
        MessageDeduplicationId: message.Body,
        ApproximateReceiveCount: '1',
        SentTimestamp: expect.stringMatching(/^\d+$/),
      });
    }
  });

  it('locks a group while one of its messages is in flight, and not the other groups', async () => {
    const { queueUrl } = await fifoQueues('fifo-lock');
    await send(queueUrl, 'a', 'a1');
    const [first] = await receive(queueUrl, 30);
    await send(queueUrl, 'a', 'a2');
    await send(queueUrl, 'b', 'b1');

    const whileLocked = await receive(queueUrl, 30);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: first?.ReceiptHandle }));
    const afterDelete = await receive(queueUrl, 30);

    expect(first?.Body).toBe('a1');
    expect(bodies(whileLocked)).toEqual(['b1']);
    expect(bodies(afterDelete)).toEqual(['a2']);
  });

  it('puts messages that became visible again back in their group order, whatever order they returned in', async () => {
    const { queueUrl } = await fifoQueues('fifo-return');
    for (const body of ['a1', 'a2', 'a3']) await send(queueUrl, 'a', body);
    const batch = await receive(queueUrl, 30);
    await send(queueUrl, 'a', 'a4');

    // Returned first to last: to the front one by one, they would come back as a3, a2, a1, a4.
    for (const message of batch) {
      await sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: message.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      );
    }
    const again = await receive(queueUrl, 30);

    expect(bodies(batch)).toEqual(['a1', 'a2', 'a3']);
    expect(bodies(again)).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(again.map((m) => m.Attributes?.ApproximateReceiveCount)).toEqual(['2', '2', '2', '1']);
  });

  it('redrives a failing head to the FIFO DLQ with the records received behind it, in order, and the group moves on', async () => {
    const queues = await fifoQueues('fifo-redrive');
    await send(queues.queueUrl, 'a', 'a1');
    await send(queues.queueUrl, 'a', 'a2');
    await send(queues.queueUrl, 'b', 'b1');

    const receiveCounts: string[] = [];
    let others: Message[] = [];
    for (let i = 0; i < MAX_RECEIVE_COUNT; i++) {
      const batch = await receive(queues.queueUrl, 30);
      const group = batch.filter((m) => m.Attributes?.MessageGroupId === 'a');
      others = [...others, ...batch.filter((m) => m.Attributes?.MessageGroupId !== 'a')];
      expect(bodies(group)).toEqual(['a1', 'a2']);
      receiveCounts.push(group.map((m) => m.Attributes?.ApproximateReceiveCount).join(','));
      // As the ordered consumer reports them: the failed head and the record held behind it go back.
      for (const message of group) {
        await sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: queues.queueUrl,
            ReceiptHandle: message.ReceiptHandle,
            VisibilityTimeout: 0,
          }),
        );
      }
    }
    // Sent after the head's last receive: the conversation's next message, which must not wait for a1.
    await send(queues.queueUrl, 'a', 'a3');
    const afterLimit = await receive(queues.queueUrl, 30);
    const dead = await receive(queues.dlqUrl, 30);

    // Every receive counts for each record it returns, so a record held behind a failing head uses up
    // its receives too and reaches the DLQ with it, as in SQS.
    expect(receiveCounts).toEqual(Array.from({ length: MAX_RECEIVE_COUNT }, (_, i) => `${i + 1},${i + 1}`));
    expect(bodies(others)).toEqual(['b1']);
    expect(bodies(afterLimit)).toEqual(['a3']);
    expect(bodies(dead)).toEqual(['a1', 'a2']);
    expect(dead.map((m) => m.Attributes?.MessageGroupId)).toEqual(['a', 'a']);
  });
});
