import { ChangeMessageVisibilityBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { RedeliveryNotScheduledError } from '../../../functions/queue/errors.ts';
import { SqsRedeliveryScheduler } from '../../../functions/queue/sqs-redelivery-scheduler.ts';

const QUEUE_URL = 'http://sqs.eu-west-1.localhost/000000000000/deliveries';
const sqs = new SQSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
const mock = mockClient(sqs);
afterEach(() => mock.reset());

const redelivery = (index: number, delaySeconds = 30, receiptHandle: string | null = `rh-${index}`) => ({
  record: { messageId: `m-${index}`, body: '{}', ...(receiptHandle === null ? {} : { receiptHandle }) },
  delaySeconds,
});

describe('SqsRedeliveryScheduler', () => {
  it('changes the visibility of every record with a receipt handle, ten per request', async () => {
    mock.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
    const scheduler = new SqsRedeliveryScheduler({ sqs, deliveryQueueUrl: QUEUE_URL });

    await scheduler.redeliverAfter([
      ...Array.from({ length: 12 }, (_, i) => redelivery(i, 10 + i)),
      redelivery(99, 5, null),
    ]);

    const calls = mock.commandCalls(ChangeMessageVisibilityBatchCommand).map((call) => call.args[0].input);
    expect(calls.map((input) => input.Entries?.length)).toEqual([10, 2]);
    expect(calls.every((input) => input.QueueUrl === QUEUE_URL)).toBe(true);
    expect(calls[1]?.Entries).toEqual([
      { Id: '0', ReceiptHandle: 'rh-10', VisibilityTimeout: 20 },
      { Id: '1', ReceiptHandle: 'rh-11', VisibilityTimeout: 21 },
    ]);
  });

  it('throws naming what SQS refused, after trying every entry', async () => {
    mock
      .on(ChangeMessageVisibilityBatchCommand)
      .resolves({ Successful: [], Failed: [{ Id: '0', Code: 'ReceiptHandleIsInvalid', SenderFault: true }] });
    const scheduler = new SqsRedeliveryScheduler({ sqs, deliveryQueueUrl: QUEUE_URL });

    const attempt = scheduler.redeliverAfter(Array.from({ length: 11 }, (_, i) => redelivery(i)));

    await expect(attempt).rejects.toBeInstanceOf(RedeliveryNotScheduledError);
    await expect(attempt).rejects.toThrow(/2 record\(s\).*ReceiptHandleIsInvalid/);
    expect(mock.commandCalls(ChangeMessageVisibilityBatchCommand)).toHaveLength(2);
  });
});
