/**
 * FIFO sends on the SQS emulator, as SQS does them (the receiver's ordered message lane): a batch's entries of
 * one group are stored in batch order; a deduplication id seen within 5 minutes is absorbed, answered as a
 * success with the original message id; its scope is the queue by default and the message group in
 * high-throughput mode (`DeduplicationScope: messageGroup`), where the same id in two groups names two
 * messages. fauxqs 1.9.2 deduplicated per queue whatever the scope, and counted no absorbed send (CloudWatch's
 * `NumberOfDeduplicatedSentMessages`): both patched (cli/patches/fauxqs+1.9.2.patch).
 */
import {
  CreateQueueCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readQueueCounts, totalMessages } from '../../../cli/local/queue-counts.ts';
import { createSqsClient, sqsEndpoint, uniqueName } from '../../support/aws-clients.ts';

let sqs: SQSClient;

beforeAll(() => {
  sqs = createSqsClient();
});

afterAll(() => {
  sqs.destroy();
});

async function fifoQueue(label: string, highThroughput: boolean): Promise<string> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${uniqueName(label)}.fifo`,
      Attributes: {
        FifoQueue: 'true',
        ...(highThroughput && {
          DeduplicationScope: 'messageGroup',
          FifoThroughputLimit: 'perMessageGroupId',
        }),
      },
    }),
  );
  if (QueueUrl === undefined) throw new Error('no queue URL');
  return QueueUrl;
}

const send = (queueUrl: string, group: string, deduplicationId: string, body: string) =>
  sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      MessageGroupId: group,
      MessageDeduplicationId: deduplicationId,
    }),
  );

const depth = async (queueUrl: string) => totalMessages(await readQueueCounts(sqs, queueUrl));

/** fauxqs's own inspection of a queue (patched to carry what CloudWatch's NumberOfDeduplicatedSentMessages counts). */
async function deduplicatedSends(queueUrl: string): Promise<number> {
  const name = new URL(queueUrl).pathname.split('/').pop() ?? '';
  const response = await fetch(`${sqsEndpoint()}/_fauxqs/queues/${encodeURIComponent(name)}`);
  return ((await response.json()) as { deduplicatedSentMessages: number }).deduplicatedSentMessages;
}

async function receiveAll(queueUrl: string): Promise<Message[]> {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 1,
      MessageSystemAttributeNames: ['MessageGroupId'],
    }),
  );
  return Messages;
}

describe('FIFO sends on the SQS emulator', () => {
  it('absorbs a repeated deduplication id, answering with the original message id', async () => {
    const queueUrl = await fifoQueue('dedup', true);
    const first = await send(queueUrl, 'g', 'same', 'one');
    const again = await send(queueUrl, 'g', 'same', 'one again');
    expect(again.MessageId).toBe(first.MessageId);
    const batch = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [{ Id: 'm0', MessageBody: 'one', MessageGroupId: 'g', MessageDeduplicationId: 'same' }],
      }),
    );
    expect(batch.Successful?.map((entry) => entry.MessageId)).toEqual([first.MessageId]);
    expect(batch.Failed ?? []).toEqual([]);
    expect(await depth(queueUrl)).toBe(1);
    expect(await deduplicatedSends(queueUrl)).toBe(2);
  });

  it('deduplicates per message group in high-throughput mode', async () => {
    const queueUrl = await fifoQueue('scope-group', true);
    await send(queueUrl, 'a', 'same', 'in a');
    await send(queueUrl, 'b', 'same', 'in b');
    await send(queueUrl, 'a', 'same', 'in a again');
    expect(await depth(queueUrl)).toBe(2);
    expect(await deduplicatedSends(queueUrl)).toBe(1);
    const bodies = (await receiveAll(queueUrl)).map((message) => message.Body).sort();
    expect(bodies).toEqual(['in a', 'in b']);
  });

  it('deduplicates per queue by default', async () => {
    const queueUrl = await fifoQueue('scope-queue', false);
    await send(queueUrl, 'a', 'same', 'in a');
    await send(queueUrl, 'b', 'same', 'in b');
    expect(await depth(queueUrl)).toBe(1);
  });

  it("stores a batch's entries of one group in batch order", async () => {
    const queueUrl = await fifoQueue('batch-order', true);
    const entries = Array.from({ length: 10 }, (_, index) => ({
      Id: `m${index}`,
      MessageBody: `body-${index}`,
      MessageGroupId: index % 3 === 0 ? 'other' : 'conversation',
      MessageDeduplicationId: `d${index}`,
    }));
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    const received = await receiveAll(queueUrl);
    const inGroup = (group: string) =>
      received
        .filter((message) => message.Attributes?.MessageGroupId === group)
        .map((message) => message.Body);
    expect(inGroup('conversation')).toEqual(
      entries.filter((entry) => entry.MessageGroupId === 'conversation').map((entry) => entry.MessageBody),
    );
    expect(inGroup('other')).toEqual(['body-0', 'body-3', 'body-6', 'body-9']);
  });
});
