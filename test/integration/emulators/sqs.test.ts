/**
 * The SQS emulator with the pipeline's queues, created from the same settings as the CDK stack: attributes,
 * redelivery after the visibility timeout, redrive to the DLQ after maxReceiveCount receives, and the
 * characters SQS accepts in a body (fauxqs 1.9.2 is patched for those: patches/fauxqs+1.9.2.patch).
 */
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPipelineQueues, type PipelineQueues } from '../../../cli/local/emulators/sqs.ts';
import { resolveSettings } from '../../../contract/settings.ts';
import { createSqsClient, uniqueName } from '../../support/aws-clients.ts';

const settings = resolveSettings();
let sqs: SQSClient;
let queues: PipelineQueues;

beforeAll(async () => {
  sqs = createSqsClient();
  const name = uniqueName('deliveries');
  queues = await createPipelineQueues(sqs, settings, {
    deliveryQueueName: name,
    deadLetterQueueName: `${name}-dlq`,
  });
});

afterAll(() => {
  sqs.destroy();
});

async function attributes(queueUrl: string): Promise<Record<string, string>> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }),
  );
  return Attributes ?? {};
}

/** One receive (long polling up to `waitSeconds`); `visibilityTimeout` overrides the queue's for this receive. */
async function receiveOne(
  queueUrl: string,
  visibilityTimeout?: number,
  waitSeconds = 2,
): Promise<Message | undefined> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 1,
      WaitTimeSeconds: waitSeconds,
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      VisibilityTimeout: visibilityTimeout,
    }),
  );
  return Messages?.[0];
}

describe('pipeline queues on the SQS emulator', () => {
  it('are created with the visibility timeout, size, retention and redrive policy of resolveSettings()', async () => {
    const delivery = await attributes(queues.queueUrl);
    const deadLetter = await attributes(queues.dlqUrl);

    expect(delivery).toMatchObject({
      QueueArn: queues.queueArn,
      VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
      MaximumMessageSize: String(settings.maximumMessageSizeBytes),
      MessageRetentionPeriod: String(settings.queueRetentionDays * 86_400),
    });
    expect(JSON.parse(delivery.RedrivePolicy ?? '{}')).toEqual({
      deadLetterTargetArn: queues.dlqArn,
      maxReceiveCount: settings.maxReceiveCount,
    });
    expect(deadLetter).toMatchObject({
      QueueArn: queues.dlqArn,
      MaximumMessageSize: String(settings.maximumMessageSizeBytes),
      MessageRetentionPeriod: String(settings.deadLetterRetentionDays * 86_400),
    });
  });

  it('hides a received message until its visibility timeout expires, then delivers it again', async () => {
    await sqs.send(new SendMessageCommand({ QueueUrl: queues.queueUrl, MessageBody: 'visibility' }));

    // Generous timeouts: the assertion is about order (hidden, then back), not about speed.
    const first = await receiveOne(queues.queueUrl, 5);
    const whileHidden = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queues.queueUrl, WaitTimeSeconds: 0 }),
    );
    const again = await receiveOne(queues.queueUrl, 0, 15);

    expect(first?.Body).toBe('visibility');
    expect(whileHidden.Messages ?? []).toEqual([]);
    expect(again?.MessageId).toBe(first?.MessageId);
    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2');
    await sqs.send(
      new DeleteMessageCommand({ QueueUrl: queues.queueUrl, ReceiptHandle: again?.ReceiptHandle }),
    );
  });

  it('moves a message to the DLQ once it was received maxReceiveCount times without being deleted', async () => {
    const { MessageId } = await sqs.send(
      new SendMessageCommand({ QueueUrl: queues.queueUrl, MessageBody: 'poison' }),
    );

    const receiveCounts: string[] = [];
    for (let i = 0; i < settings.maxReceiveCount; i++) {
      // Visibility 0: the "failed" message is visible again at once, as after a quick Lambda failure.
      const message = await receiveOne(queues.queueUrl, 0);
      expect(message?.MessageId).toBe(MessageId);
      receiveCounts.push(message?.Attributes?.ApproximateReceiveCount ?? '');
    }
    const afterLimit = await receiveOne(queues.queueUrl, 0);
    const dead = await receiveOne(queues.dlqUrl);

    expect(receiveCounts).toEqual(Array.from({ length: settings.maxReceiveCount }, (_, i) => String(i + 1)));
    expect(afterLimit).toBeUndefined();
    expect(dead).toMatchObject({ MessageId, Body: 'poison' });
  });

  // SQS accepts #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF (API_SendMessage).
  const ACCEPTED = {
    thumbsUp: 'ok \u{1F44D}',
    astralRange: 'first \u{10000} emoji \u{1F600}\u{1F1E9}\u{1F1EA} CJK-B \u{20000} last \u{10FFFF}',
    bmpRangeEnds: '\t\n\r \u{D7FF} \u{E000} \u{FFFD}',
  };
  const REFUSED = {
    loneHighSurrogate: 'broken \uD83D pair',
    loneLowSurrogate: 'broken \uDC4D pair',
    swappedSurrogates: 'broken \uDC4D\uD83D pair',
    nonCharacterFFFE: 'not \uFFFE a character',
    nonCharacterFFFF: 'not \uFFFF a character',
    nul: 'control \u0000',
    verticalTab: 'control \u000B',
    unitSeparator: 'control \u001F',
  };

  it('accepts every character SQS accepts, supplementary planes included, and returns the body unchanged', async () => {
    const queueName = uniqueName('characters');
    const { queueUrl } = await createPipelineQueues(sqs, settings, {
      deliveryQueueName: queueName,
      deadLetterQueueName: `${queueName}-dlq`,
    });
    const single = await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: ACCEPTED.thumbsUp }),
    );
    const batch = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Object.entries(ACCEPTED).map(([Id, MessageBody]) => ({ Id, MessageBody })),
      }),
    );
    expect(single.MessageId).toBeDefined();
    expect(batch.Failed ?? []).toEqual([]);

    const bodies: string[] = [];
    for (let i = 0; i < 4; i++) {
      const message = await receiveOne(queueUrl, 60);
      // The client checks MD5OfBody against the body it decoded: a re-encoded body would fail the receive.
      bodies.push(message?.Body ?? '(none)');
    }
    expect(bodies.sort()).toEqual([ACCEPTED.thumbsUp, ...Object.values(ACCEPTED)].sort());
  });

  it.each(Object.entries(REFUSED))('refuses what SQS refuses: %s', async (_name, body) => {
    await expect(
      sqs.send(new SendMessageCommand({ QueueUrl: queues.queueUrl, MessageBody: body })),
    ).rejects.toMatchObject({ name: expect.stringMatching(/InvalidMessageContents$/) });
    const batch = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queues.queueUrl,
        Entries: [
          { Id: 'refused', MessageBody: body },
          { Id: 'accepted', MessageBody: ACCEPTED.bmpRangeEnds },
        ],
      }),
    );
    expect(batch.Failed).toEqual([
      expect.objectContaining({ Id: 'refused', SenderFault: true, Code: 'InvalidMessageContents' }),
    ]);
    expect(batch.Successful?.map((entry) => entry.Id)).toEqual(['accepted']);
  });
});
