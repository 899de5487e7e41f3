/**
 * Fair queues on the SQS emulator: a standard queue keeps each message's `MessageGroupId` (its tenant), returns
 * it as a system attribute, refuses an invalid one with SQS's error, and, once a tenant is a noisy neighbour,
 * hands out the quiet tenants' messages first (docs.aws.amazon.com SQSDeveloperGuide, "How Amazon SQS fair queues
 * work"). FIFO queues are left as they were. fauxqs 1.9.2 dropped the group id on standard queues: patched
 * (cli/patches/fauxqs+1.9.2.patch, docs/local.md "How faithful it is").
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIFO_QUEUE_ATTRIBUTES, FIFO_QUEUE_SUFFIX } from '../../../cli/local/emulators/sqs.ts';
import { createSqsClient, uniqueName } from '../../support/aws-clients.ts';

// Long enough that nothing a test holds comes back while it runs.
const HOLD_SECONDS = 300;
let sqs: SQSClient;

beforeAll(() => {
  sqs = createSqsClient();
});

afterAll(() => {
  sqs.destroy();
});

async function standardQueue(label: string): Promise<string> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName(label) }));
  return QueueUrl as string;
}

/** Sends `count` messages of `group` (or of no group), bodies `<group>-<i>` from `from`, ten per batch. */
async function sendGroup(
  queueUrl: string,
  group: string | undefined,
  count: number,
  from = 0,
): Promise<void> {
  for (let start = 0; start < count; start += 10) {
    const entries = Array.from({ length: Math.min(10, count - start) }, (_, i) => ({
      Id: `m${i}`,
      MessageBody: `${group ?? 'none'}-${from + start + i}`,
      ...(group === undefined ? {} : { MessageGroupId: group }),
    }));
    const { Failed } = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    expect(Failed ?? []).toEqual([]);
  }
}

async function receive(queueUrl: string, max = 10): Promise<Message[]> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: max,
      WaitTimeSeconds: 0,
      VisibilityTimeout: HOLD_SECONDS,
      MessageSystemAttributeNames: ['MessageGroupId'],
    }),
  );
  return Messages ?? [];
}

/** Receives (holding each message) until `count` messages came or the queue has none to give. */
async function receiveMany(queueUrl: string, count: number): Promise<Message[]> {
  const messages: Message[] = [];
  while (messages.length < count) {
    const batch = await receive(queueUrl, Math.min(10, count - messages.length));
    if (batch.length === 0) break;
    messages.push(...batch);
  }
  return messages;
}

async function deleteAll(queueUrl: string, messages: readonly Message[]): Promise<void> {
  for (let start = 0; start < messages.length; start += 10) {
    const { Failed } = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages
          .slice(start, start + 10)
          .map((message, i) => ({ Id: `d${i}`, ReceiptHandle: message.ReceiptHandle })),
      }),
    );
    expect(Failed ?? []).toEqual([]);
  }
}

const bodies = (messages: readonly Message[]) => messages.map((m) => m.Body);
const groups = (messages: readonly Message[]) => messages.map((m) => m.Attributes?.MessageGroupId);
const range = (group: string, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `${group}-${from + i}`);

describe('fair queues (standard queues with MessageGroupId) on the SQS emulator', () => {
  it('keeps a message’s MessageGroupId and returns it when asked, by SendMessage and SendMessageBatch', async () => {
    const queueUrl = await standardQueue('fair-group-id');
    await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'one', MessageGroupId: 'tenant-1' }),
    );
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'a', MessageBody: 'two', MessageGroupId: 'tenant-2' },
          { Id: 'b', MessageBody: 'three' },
          { Id: 'c', MessageBody: 'four', MessageGroupId: 'tenant-1' },
        ],
      }),
    );

    const [first] = await receive(queueUrl, 1);
    const { Messages: legacyAll = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 1,
        VisibilityTimeout: HOLD_SECONDS,
        AttributeNames: ['All'],
      }),
    );
    const { Messages: notAsked = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: HOLD_SECONDS,
      }),
    );

    expect([first?.Body, first?.Attributes]).toEqual(['one', { MessageGroupId: 'tenant-1' }]);
    expect(legacyAll[0]?.Body).toBe('two');
    expect(legacyAll[0]?.Attributes).toMatchObject({
      MessageGroupId: 'tenant-2',
      ApproximateReceiveCount: '1',
    });
    expect(bodies(notAsked)).toEqual(['three', 'four']);
    expect(notAsked.map((m) => m.Attributes)).toEqual([undefined, undefined]);
  });

  it('hands out quiet tenants’ messages before a noisy tenant’s (≥ 30 and > 10 % of the in-flight messages)', async () => {
    const queueUrl = await standardQueue('fair-noisy');
    await sendGroup(queueUrl, 'A', 200);
    for (const group of ['B', 'C', 'D', 'E', 'F']) await sendGroup(queueUrl, group, 5);

    // A's backlog came first: its first 30 go out, and stay in flight.
    const first = await receiveMany(queueUrl, 30);
    const next = await receiveMany(queueUrl, 30);
    const after = await receive(queueUrl);

    expect(bodies(first)).toEqual(range('A', 0, 30));
    // Now 30 of the 30 in flight are A's: the others' 25 go first, then A's, not dropped and in order.
    expect(bodies(next)).toEqual([
      ...['B', 'C', 'D', 'E', 'F'].flatMap((group) => range(group, 0, 5)),
      ...range('A', 30, 35),
    ]);
    expect(new Set(groups(next))).toEqual(new Set(['A', 'B', 'C', 'D', 'E', 'F']));
    // No quiet message left: A's as usual.
    expect(bodies(after)).toEqual(range('A', 35, 45));
  });

  it('among noisy tenants serves the one with the fewest in flight first; a noisy tenant stays noisy while its backlog lasts', async () => {
    const queueUrl = await standardQueue('fair-noisy-two');
    await sendGroup(queueUrl, 'A', 60);
    await sendGroup(queueUrl, 'G', 60);
    await sendGroup(queueUrl, 'B', 5);

    const a = await receiveMany(queueUrl, 30); // A: 30 in flight, noisy from the next receive
    const g = await receiveMany(queueUrl, 30); // the quiet G before A; then G: 30 in flight, noisy too
    const quietThenTie = await receive(queueUrl); // A and G 30 each: the queue's order between them
    const fewerG = await receive(queueUrl); // A 35, G 30
    const fewerA = await receive(queueUrl); // A 35, G 40
    // G drops to 20 in flight, under the threshold, its backlog not empty; then a quiet tenant sends.
    await deleteAll(queueUrl, g.slice(0, 20));
    await sendGroup(queueUrl, 'H', 5);
    const stillNoisy = await receive(queueUrl);

    expect(bodies(a)).toEqual(range('A', 0, 30));
    expect(bodies(g)).toEqual(range('G', 0, 30));
    expect(bodies(quietThenTie)).toEqual([...range('B', 0, 5), ...range('A', 30, 35)]);
    expect(bodies(fewerG)).toEqual(range('G', 30, 40));
    expect(bodies(fewerA)).toEqual(range('A', 35, 45));
    // A quiet G would come before H (it sent first); a noisy one after, and before A (45 in flight).
    expect(bodies(stillNoisy)).toEqual([...range('H', 0, 5), ...range('G', 40, 45)]);
  });

  it('hands out a tenant taking more than 10 % of the recent processing time after the quiet ones', async () => {
    const queueUrl = await standardQueue('fair-slow');
    await sendGroup(queueUrl, 'slow', 3);
    const slow = await receive(queueUrl);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await deleteAll(queueUrl, slow);
    // Thirty quick ones (ten tenants): the processing time of the last 60 s now holds 33 receives, nearly all
    // of it slow's.
    for (let tenant = 0; tenant < 10; tenant++) await sendGroup(queueUrl, `quick${tenant}`, 3);
    await deleteAll(queueUrl, await receiveMany(queueUrl, 30));
    await sendGroup(queueUrl, 'slow', 5, 3);
    await sendGroup(queueUrl, 'fast', 5);

    const next = await receive(queueUrl);

    expect(bodies(slow)).toEqual(range('slow', 0, 3));
    expect(bodies(next)).toEqual([...range('fast', 0, 5), ...range('slow', 3, 8)]);
  });

  it('keeps the queue’s order when no tenant is noisy', async () => {
    const queueUrl = await standardQueue('fair-quiet');
    const sent = ['B-0', 'C-0', 'B-1', 'D-0', 'C-1', 'B-2', 'none-0', 'D-1', 'C-2'];
    for (const body of sent) {
      const group = body.split('-')[0] as string;
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: body,
          ...(group === 'none' ? {} : { MessageGroupId: group }),
        }),
      );
    }
    const lone = await standardQueue('fair-lone');
    await sendGroup(lone, 'A', 45);

    // One at a time, each deleted before the next receive.
    const oneByOne: Message[] = [];
    for (let i = 0; i < sent.length; i++) {
      const [message] = await receive(queueUrl, 1);
      if (message === undefined) break;
      oneByOne.push(message);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
    }
    // A tenant noisy by itself, with no quiet message waiting, is served as usual.
    const loneReceived = await receiveMany(lone, 45);

    expect(bodies(oneByOne)).toEqual(sent);
    expect(groups(oneByOne)).toEqual(sent.map((body) => (body.startsWith('none') ? undefined : body[0])));
    expect(bodies(loneReceived)).toEqual(range('A', 0, 45));
    expect(new Set(groups(loneReceived))).toEqual(new Set(['A']));
  });

  it('leaves FIFO queues as they were: group order and lock, no fair reordering', async () => {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: `${uniqueName('fair-fifo')}${FIFO_QUEUE_SUFFIX}`,
        Attributes: { ...FIFO_QUEUE_ATTRIBUTES },
      }),
    );
    const queueUrl = QueueUrl as string;
    const sendFifo = async (group: string, from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        await sqs.send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: `${group}-${i}`,
            MessageGroupId: group,
            MessageDeduplicationId: `${group}-${i}`,
          }),
        );
      }
    };
    await sendFifo('A', 0, 40);
    await sendFifo('B', 0, 3);

    const a1 = await receive(queueUrl);
    const b = await receive(queueUrl);
    const locked = await receive(queueUrl);
    await deleteAll(queueUrl, [...a1, ...b]);
    const a2 = await receive(queueUrl);
    await deleteAll(queueUrl, a2);
    const a3 = await receive(queueUrl);
    await deleteAll(queueUrl, a3);
    // A took nearly all the processing time of 33 receives and B sends again: a fair queue would serve B first.
    await sendFifo('B', 3, 3);
    const a4 = await receive(queueUrl);

    expect(bodies(a1)).toEqual(range('A', 0, 10));
    expect(bodies(b)).toEqual(range('B', 0, 3));
    expect(locked).toEqual([]);
    expect(bodies(a2)).toEqual(range('A', 10, 20));
    expect(bodies(a3)).toEqual(range('A', 20, 30));
    expect(bodies(a4)).toEqual(range('A', 30, 40));
    expect(new Set(groups([...a1, ...a2, ...a3, ...a4]))).toEqual(new Set(['A']));
  });

  it('refuses a MessageGroupId SQS refuses: 1 to 128 alphanumeric and punctuation characters', async () => {
    const queueUrl = await standardQueue('fair-invalid');
    const reason =
      'MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.';
    const longest = `${'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'}${'aZ9'.repeat(32)}`;
    const send = (MessageGroupId: string) =>
      sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x', MessageGroupId }));

    for (const id of ['a'.repeat(129), 'tenant one', 'tenant-é', 'tab\there']) {
      await expect(send(id), id).rejects.toMatchObject({
        name: expect.stringMatching(/InvalidParameterValue$/),
        message: `Value ${id} for parameter MessageGroupId is invalid. Reason: ${reason}`,
      });
    }
    const { Successful, Failed } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'ok', MessageBody: 'kept', MessageGroupId: longest },
          { Id: 'bad', MessageBody: 'refused', MessageGroupId: 'x'.repeat(129) },
        ],
      }),
    );
    const received = await receive(queueUrl);

    expect(longest).toHaveLength(128);
    expect(Successful?.map((entry) => entry.Id)).toEqual(['ok']);
    expect(Failed).toEqual([
      {
        Id: 'bad',
        SenderFault: true,
        Code: 'InvalidParameterValue',
        Message: `Value ${'x'.repeat(129)} for parameter MessageGroupId is invalid. Reason: ${reason}`,
      },
    ]);
    expect(bodies(received)).toEqual(['kept']);
    expect(groups(received)).toEqual([longest]);
  });
});
