import { createHash } from 'node:crypto';
import {
  InvalidMessageContents,
  RequestThrottled,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import type { SubscriberQueue } from '../../../contract/subscribers.ts';
import type {
  DeliveryMeta,
  DeliveryPart,
  DeliveryRoute,
} from '../../../functions/queue/delivery-queue-port.ts';
import { EnqueueFailedError } from '../../../functions/queue/errors.ts';
import { attributesBytes, fifoIds } from '../../../functions/queue/outgoing-message.ts';
import { DEFAULT_RETRY_POLICY, MAX_BATCH_ENTRIES } from '../../../functions/queue/sqs-batch-sender.ts';
import { SqsQuarantineQueue } from '../../../functions/queue/sqs-quarantine-queue.ts';
import { SubscriberFanOut } from '../../../functions/queue/subscriber-fan-out.ts';

const sqsMock = mockClient(SQSClient);
afterEach(() => sqsMock.reset());

const QUEUES = 'https://sqs.eu-west-1.amazonaws.com/123456789012';
const DELIVERY_URL = `${QUEUES}/deliveries`;
const QUARANTINE_URL = `${QUEUES}/quarantine`;
const ONE: readonly SubscriberQueue[] = [{ name: 'default', queueUrl: DELIVERY_URL }];

function makeQueues(options: { maximumMessageSizeBytes?: number; clock?: () => number } = {}) {
  const sleeps: number[] = [];
  let elapsedMs = 0;
  const senderOptions = {
    sqs: new SQSClient({ region: 'eu-west-1' }),
    maximumMessageSizeBytes: options.maximumMessageSizeBytes ?? 256 * 1024,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      elapsedMs += ms;
    },
    random: () => 0.5,
    clock: options.clock ?? (() => elapsedMs),
  };
  const fanOut = new SubscriberFanOut(senderOptions);
  const quarantine = new SqsQuarantineQueue({ ...senderOptions, quarantineQueueUrl: QUARANTINE_URL });
  // The single subscriber of a pipeline configured without subscribers.
  const queue = { enqueue: (parts: readonly string[], m: DeliveryMeta) => toEvery(fanOut, ONE, parts, m) };
  return { fanOut, queue, quarantine, sleeps };
}

/** The same parts to every subscriber's `queueUrl`, as a delivery without lanes. */
function toEvery(
  fanOut: SubscriberFanOut,
  subscribers: readonly SubscriberQueue[],
  bodies: readonly string[],
  m: DeliveryMeta,
) {
  const parts = bodies.map((body) => ({ body }));
  const routes = subscribers.map(({ name, queueUrl }) => ({
    subscriber: name,
    queueUrl,
    parts: parts.map((_, index) => index),
  }));
  return fanOut.enqueue(parts, routes, m);
}

const meta: DeliveryMeta = {
  deliveryId: 'req-1',
  receivedAt: '2026-01-01T00:00:00.000Z',
  retryDeadline: 3_000,
};

/** Answers every batch as fully successful. */
function succeedAll(input: SendMessageBatchCommandInput) {
  return {
    Successful: (input.Entries ?? []).map((entry) => ({ Id: entry.Id, MessageId: `id-${entry.Id}` })),
    Failed: [],
  };
}

const batchCalls = () => sqsMock.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input);
const throttled = () => new RequestThrottled({ message: 'Rate exceeded', $metadata: {} });

describe('SubscriberFanOut, one subscriber', () => {
  it('sends all parts in order with part/parts, receivedAt and deliveryId attributes', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(succeedAll);
    const { queue } = makeQueues();
    await expect(queue.enqueue(['{"a":1}', '{"b":2}'], meta)).resolves.toEqual({ rejected: [] });
    const [call] = batchCalls();
    expect(call?.QueueUrl).toBe(DELIVERY_URL);
    expect(call?.Entries?.map((entry) => entry.MessageBody)).toEqual(['{"a":1}', '{"b":2}']);
    expect(call?.Entries?.[1]?.MessageAttributes).toEqual({
      receivedAt: { DataType: 'String', StringValue: meta.receivedAt },
      deliveryId: { DataType: 'String', StringValue: 'req-1' },
      part: { DataType: 'Number', StringValue: '2' },
      parts: { DataType: 'Number', StringValue: '2' },
    });
  });

  it('puts at most 10 entries in one SendMessageBatch call', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(succeedAll);
    const { queue } = makeQueues();
    const parts = Array.from({ length: 23 }, (_, i) => `{"n":${i}}`);
    await queue.enqueue(parts, meta);
    const calls = batchCalls();
    expect(calls.map((call) => call.Entries?.length)).toEqual([10, 10, 3]);
    expect(calls.flatMap((call) => call.Entries?.map((entry) => entry.MessageBody))).toEqual(parts);
    expect(MAX_BATCH_ENTRIES).toBe(10);
  });

  it('keeps each batch request within the message size limit (bodies plus attributes)', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(succeedAll);
    const limit = 4096;
    const { queue } = makeQueues({ maximumMessageSizeBytes: limit });
    const parts = Array.from({ length: 7 }, (_, i) => `"${String(i).repeat(1500)}"`);
    await queue.enqueue(parts, meta);
    for (const call of batchCalls()) {
      const bytes = (call.Entries ?? []).reduce(
        (sum, entry) =>
          sum + Buffer.byteLength(entry.MessageBody ?? '') + attributesBytes(entry.MessageAttributes ?? {}),
        0,
      );
      expect(bytes).toBeLessThanOrEqual(limit);
    }
    expect(batchCalls().flatMap((call) => call.Entries?.map((entry) => entry.MessageBody))).toEqual(parts);
  });

  it('retries a throttled call with backoff, then succeeds', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .rejectsOnce(throttled())
      .rejectsOnce(throttled())
      .callsFake(succeedAll);
    const { queue, sleeps } = makeQueues();
    await expect(queue.enqueue(['{"a":1}'], meta)).resolves.toEqual({ rejected: [] });
    expect(batchCalls()).toHaveLength(3);
    // Full jitter with random() = 0.5: half of 50 ms, then half of 100 ms.
    expect(sleeps).toEqual([25, 50]);
  });

  it('retries only the entries that failed in a partially failed batch', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .resolvesOnce({
        Successful: [{ Id: 'm0', MessageId: 'x', MD5OfMessageBody: '' }],
        Failed: [
          { Id: 'm1', SenderFault: false, Code: 'InternalError' },
          { Id: 'm2', SenderFault: true, Code: 'ThrottlingException' },
        ],
      })
      .callsFake(succeedAll);
    const { queue } = makeQueues();
    await expect(queue.enqueue(['{"a":0}', '{"a":1}', '{"a":2}'], meta)).resolves.toEqual({ rejected: [] });
    const [, retry] = batchCalls();
    expect(retry?.Entries?.map((entry) => entry.MessageBody)).toEqual(['{"a":1}', '{"a":2}']);
    expect(retry?.Entries?.map((entry) => entry.Id)).toEqual(['m1', 'm2']);
  });

  it('does not retry an entry refused as the sender fault, and reports it', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({
      Successful: [{ Id: 'm0', MessageId: 'x', MD5OfMessageBody: '' }],
      Failed: [{ Id: 'm1', SenderFault: true, Code: 'InvalidMessageContents' }],
    });
    const { queue } = makeQueues();
    await expect(queue.enqueue(['{"a":0}', '{"a":1}'], meta)).resolves.toEqual({
      rejected: [{ subscriber: 'default', part: 1, code: 'InvalidMessageContents' }],
    });
    expect(batchCalls()).toHaveLength(1);
  });

  it('gives up after the bounded attempts when SQS stays down, with a typed error', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .rejects(Object.assign(new Error('connect ECONNREFUSED'), { name: 'Error' }));
    const { queue, sleeps } = makeQueues();
    const failure = await queue.enqueue(['{"a":0}', '{"a":1}'], meta).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EnqueueFailedError);
    expect(failure).toMatchObject({ queue: 'delivery', unstored: 2, total: 2, subscribers: ['default'] });
    expect(batchCalls()).toHaveLength(DEFAULT_RETRY_POLICY.maxAttempts);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThan(1_000);
  });

  it('starts no retry after the deadline', async () => {
    let now = 0;
    const { queue } = makeQueues({ clock: () => now });
    sqsMock.on(SendMessageBatchCommand).callsFake(() => {
      now += 2_000; // each call takes 2 s
      throw throttled();
    });
    await expect(queue.enqueue(['{"a":0}'], meta)).rejects.toBeInstanceOf(EnqueueFailedError);
    expect(batchCalls()).toHaveLength(2);
  });
});

describe('SqsQuarantineQueue, the quarantine queue', () => {
  it('writes the raw bytes as base64 to the quarantine queue with reason and encoding attributes', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(succeedAll);
    const { quarantine } = makeQueues();
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x22, 0xc3]); // not UTF-8, with a NUL
    await expect(quarantine.quarantine(raw, 'invalid-json', meta)).resolves.toEqual({ messages: 1 });
    const [call] = batchCalls();
    expect(call?.QueueUrl).toBe(QUARANTINE_URL);
    const entry = call?.Entries?.[0];
    expect(Buffer.from(entry?.MessageBody ?? '', 'base64').equals(raw)).toBe(true);
    expect(entry?.MessageAttributes).toMatchObject({
      reason: { DataType: 'String', StringValue: 'invalid-json' },
      contentEncoding: { DataType: 'String', StringValue: 'base64' },
      receivedAt: { DataType: 'String', StringValue: meta.receivedAt },
    });
  });

  it('spreads a body too large for one message over ordered chunks that decode back to it', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(succeedAll);
    const limit = 2048;
    const { quarantine } = makeQueues({ maximumMessageSizeBytes: limit });
    const raw = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256));
    const { messages } = await quarantine.quarantine(raw, 'event-too-large', meta);
    expect(messages).toBeGreaterThan(1);
    const entries = batchCalls().flatMap((call) => call.Entries ?? []);
    expect(entries).toHaveLength(messages);
    for (const entry of entries) {
      expect(
        Buffer.byteLength(entry.MessageBody ?? '') + attributesBytes(entry.MessageAttributes ?? {}),
      ).toBeLessThanOrEqual(limit);
      expect(entry.MessageAttributes?.chunks?.StringValue).toBe(String(messages));
      expect(entry.MessageAttributes?.quarantineId?.StringValue).toBe(
        entries[0]?.MessageAttributes?.quarantineId?.StringValue,
      );
    }
    const ordered = [...entries].sort(
      (a, b) =>
        Number(a.MessageAttributes?.chunk?.StringValue) - Number(b.MessageAttributes?.chunk?.StringValue),
    );
    const rebuilt = Buffer.from(ordered.map((entry) => entry.MessageBody).join(''), 'base64');
    expect(rebuilt.equals(raw)).toBe(true);
  });

  it('throws when the quarantine queue refuses or stays unavailable', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: 'm0', SenderFault: true, Code: InvalidMessageContents.name }],
    });
    const { quarantine } = makeQueues();
    await expect(quarantine.quarantine(Buffer.from('x'), 'invalid-json', meta)).rejects.toMatchObject({
      name: 'EnqueueFailedError',
      queue: 'quarantine',
    });
  });
});

describe('SubscriberFanOut, several subscribers', () => {
  const BOT: SubscriberQueue = { name: 'bot', queueUrl: `${QUEUES}/bot`, fields: ['messages'] };
  const CRM: SubscriberQueue = { name: 'crm', queueUrl: `${QUEUES}/crm` };
  const bodiesSentTo = (queueUrl: string) =>
    batchCalls()
      .filter((call) => call.QueueUrl === queueUrl)
      .flatMap((call) => call.Entries?.map((entry) => entry.MessageBody));

  it('sends every part to each queue with the same attributes', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(succeedAll);
    const { fanOut } = makeQueues();
    await expect(toEvery(fanOut, [BOT, CRM], ['{"a":1}', '{"b":2}'], meta)).resolves.toEqual({
      rejected: [],
    });
    expect(bodiesSentTo(BOT.queueUrl)).toEqual(['{"a":1}', '{"b":2}']);
    expect(bodiesSentTo(CRM.queueUrl)).toEqual(['{"a":1}', '{"b":2}']);
    const [toBot, toCrm] = batchCalls();
    expect(toCrm?.Entries?.map((entry) => entry.MessageAttributes)).toEqual(
      toBot?.Entries?.map((entry) => entry.MessageAttributes),
    );
  });

  it('sends to the queues in parallel, not one after the other', async () => {
    let inFlight = 0;
    let most = 0;
    sqsMock.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 10));
      inFlight--;
      return succeedAll(input);
    });
    await toEvery(makeQueues().fanOut, [BOT, CRM], ['{"a":1}'], meta);
    expect(most).toBe(2);
  });

  it('retries only the throttled second queue, and succeeds once it recovers', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .callsFake(succeedAll)
      .on(SendMessageBatchCommand, { QueueUrl: CRM.queueUrl })
      .rejectsOnce(throttled())
      .callsFake(succeedAll);
    const { fanOut } = makeQueues();
    await expect(toEvery(fanOut, [BOT, CRM], ['{"a":1}'], meta)).resolves.toEqual({ rejected: [] });
    expect(bodiesSentTo(BOT.queueUrl)).toEqual(['{"a":1}']);
    expect(bodiesSentTo(CRM.queueUrl)).toEqual(['{"a":1}', '{"a":1}']);
  });

  it('names the subscriber whose queue stays throttled, after the other queue stored everything', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .callsFake(succeedAll)
      .on(SendMessageBatchCommand, { QueueUrl: CRM.queueUrl })
      .rejects(throttled());
    const { fanOut } = makeQueues();
    const failure = await toEvery(fanOut, [BOT, CRM], ['{"a":0}', '{"a":1}'], meta).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(EnqueueFailedError);
    expect(failure).toMatchObject({
      queue: 'delivery',
      subscribers: ['crm'],
      unstored: 2,
      total: 2,
      lastError: 'RequestThrottled',
      message:
        '2 of 2 messages could not be stored in the delivery queue of subscriber crm (RequestThrottled).',
    });
    expect(bodiesSentTo(BOT.queueUrl)).toEqual(['{"a":0}', '{"a":1}']);
    expect(bodiesSentTo(CRM.queueUrl)).toHaveLength(2 * DEFAULT_RETRY_POLICY.maxAttempts);
  });

  it('names every subscriber whose queue misses messages', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: 'm0', SenderFault: false, Code: 'InternalError' }],
    });
    const failure = await toEvery(makeQueues().fanOut, [BOT, CRM], ['{"a":0}'], meta).catch(
      (e: unknown) => e,
    );
    expect(failure).toMatchObject({ subscribers: ['bot', 'crm'], unstored: 2, total: 2 });
    expect((failure as Error).message).toContain('the delivery queues of subscribers bot, crm');
  });

  it('reports a part refused as the sender fault by one queue, with its subscriber', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .callsFake(succeedAll)
      .on(SendMessageBatchCommand, { QueueUrl: CRM.queueUrl })
      .resolves({
        Successful: [{ Id: 'm0', MessageId: 'x', MD5OfMessageBody: '' }],
        Failed: [{ Id: 'm1', SenderFault: true, Code: 'InvalidMessageContents' }],
      });
    const { fanOut } = makeQueues();
    await expect(toEvery(fanOut, [BOT, CRM], ['{"a":0}', '{"a":1}'], meta)).resolves.toEqual({
      rejected: [{ subscriber: 'crm', part: 1, code: 'InvalidMessageContents' }],
    });
  });

  it('sends nothing when no subscriber is given', async () => {
    await expect(toEvery(makeQueues().fanOut, [], ['{"a":0}'], meta)).resolves.toEqual({ rejected: [] });
    expect(batchCalls()).toEqual([]);
  });
});

describe('SubscriberFanOut, an ordered message lane (FIFO)', () => {
  const LANE = `${QUEUES}/bot-messages.fifo`;
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  const part = (conversationId: string, ...eventKeys: string[]): DeliveryPart => ({
    body: JSON.stringify({ conversationId, eventKeys }),
    conversationId,
    eventKeys,
  });
  const ordered = (parts: readonly DeliveryPart[]): DeliveryRoute => ({
    subscriber: 'bot',
    queueUrl: LANE,
    parts: parts.map((_, index) => index),
    ordered: true,
  });
  const sentEntries = () => batchCalls().map((call) => call.Entries?.map((entry) => entry.Id));

  it('gives each entry its conversation as group and the SHA-256 of its keys as deduplication id', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(succeedAll);
    const parts = [part('1065:111', 'msg:wamid.a1', 'msg:wamid.a2'), part('1065:222', 'msg:wamid.b1')];
    const statusLane = { subscriber: 'bot', queueUrl: `${QUEUES}/bot`, parts: [0] };
    await makeQueues().fanOut.enqueue(parts, [ordered(parts), statusLane], meta);
    const [toLane, toStatusLane] = batchCalls();
    expect(
      toLane?.Entries?.map(({ MessageGroupId, MessageDeduplicationId }) => ({
        MessageGroupId,
        MessageDeduplicationId,
      })),
    ).toEqual([
      { MessageGroupId: '1065:111', MessageDeduplicationId: sha256('msg:wamid.a1\nmsg:wamid.a2') },
      { MessageGroupId: '1065:222', MessageDeduplicationId: sha256('msg:wamid.b1') },
    ]);
    expect(toLane?.Entries?.[1]?.MessageAttributes).toEqual({
      receivedAt: { DataType: 'String', StringValue: meta.receivedAt },
      deliveryId: { DataType: 'String', StringValue: 'req-1' },
      part: { DataType: 'Number', StringValue: '2' },
      parts: { DataType: 'Number', StringValue: '2' },
      conversation: { DataType: 'String', StringValue: '1065:222' },
    });
    // The same part on a standard queue carries no FIFO ids.
    expect(toStatusLane?.Entries?.[0]).not.toHaveProperty('MessageGroupId');
    expect(toStatusLane?.Entries?.[0]).not.toHaveProperty('MessageDeduplicationId');
  });

  it('resends a failed entry with the later entries of its group, in order, and leaves other groups alone', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .resolvesOnce({
        Successful: ['m0', 'm1', 'm3'].map((Id) => ({ Id, MessageId: Id, MD5OfMessageBody: '' })),
        Failed: [{ Id: 'm2', SenderFault: false, Code: 'InternalError' }],
      })
      .callsFake(succeedAll);
    const parts = [
      part('p:A', 'msg:a1'),
      part('p:B', 'msg:b1'),
      part('p:A', 'msg:a2'),
      part('p:A', 'msg:a3'),
    ];
    await expect(makeQueues().fanOut.enqueue(parts, [ordered(parts)], meta)).resolves.toEqual({
      rejected: [],
    });
    // A conversation's entries go together in one batch, then the next conversation's.
    expect(sentEntries()).toEqual([
      ['m0', 'm2', 'm3', 'm1'],
      ['m2', 'm3'],
    ]);
  });

  it('sends a conversation’s batches one after the other, other conversations beside them, and holds a group back after its failure until the retry', async () => {
    let inFlight = 0;
    let most = 0;
    let first = true;
    sqsMock.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      if (!first) return succeedAll(input);
      first = false;
      const entries = input.Entries ?? [];
      return {
        Successful: entries.filter(({ Id }) => Id !== 'm3').map(({ Id }) => ({ Id, MessageId: Id })),
        Failed: [{ Id: 'm3', SenderFault: false, Code: 'InternalError' }],
      };
    });
    const parts = [
      ...Array.from({ length: 11 }, (_, index) => part('p:A', `msg:a${index}`)),
      part('p:B', 'msg:b0'),
    ];
    await expect(makeQueues().fanOut.enqueue(parts, [ordered(parts)], meta)).resolves.toEqual({
      rejected: [],
    });
    // Group A's two batches in turn, group B's beside them.
    expect(most).toBe(2);
    const ids = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, index) => `m${from + index}`);
    // A's second batch (m10, behind the failed m3) was held back for the retry.
    expect(sentEntries()).toEqual([ids(0, 10), ['m11'], ids(3, 11)]);
  });

  it('sends the batches of many conversations in parallel, not one after the other', async () => {
    let inFlight = 0;
    let most = 0;
    sqsMock.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      return succeedAll(input);
    });
    const parts = Array.from({ length: 30 }, (_, index) => part(`p:${index}`, `msg:c${index}`));
    await makeQueues().fanOut.enqueue(parts, [ordered(parts)], meta);
    expect(sentEntries()).toHaveLength(3);
    expect(most).toBe(3);
  });

  it('counts as unstored only the entries no attempt stored', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => ({
      Successful: (input.Entries ?? [])
        .filter(({ Id }) => Id !== 'm0')
        .map(({ Id }) => ({ Id, MessageId: Id })),
      Failed: [{ Id: 'm0', SenderFault: false, Code: 'InternalError' }],
    }));
    const parts = [part('p:A', 'msg:a0'), part('p:A', 'msg:a1')];
    const failure = await makeQueues()
      .fanOut.enqueue(parts, [ordered(parts)], meta)
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ unstored: 1, total: 2, subscribers: ['bot'] });
  });

  it('deduplicates a part without readable keys on its bytes, so two different such parts are both stored', () => {
    const a = fifoIds('1065:-', [], '{"entry":[{"id":"A"}]}');
    const b = fifoIds('1065:-', [], '{"entry":[{"id":"B"}]}');
    expect(a.messageDeduplicationId).not.toBe(b.messageDeduplicationId);
    expect(fifoIds('1065:-', ['msg:x'], 'one').messageDeduplicationId).toBe(
      fifoIds('1065:-', ['msg:x'], 'another').messageDeduplicationId,
    );
  });

  it('sends a part of the largest body size whose conversation and delivery ids are the longest there are', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(succeedAll);
    const bsuid = `US.${'7'.repeat(125)}`;
    const { fanOut } = makeQueues({ maximumMessageSizeBytes: 4096 });
    const conversationId = `106540352242922:${bsuid}`;
    const parts = [{ body: 'x'.repeat(fanOut.maximumBodyBytes), conversationId, eventKeys: ['msg:a'] }];
    const longMeta = { ...meta, deliveryId: `${'é'.repeat(100)}` };
    await expect(fanOut.enqueue(parts, [ordered(parts)], longMeta)).resolves.toEqual({ rejected: [] });
    const [entry] = sqsMock.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries ?? [];
    const attributes = entry?.MessageAttributes ?? {};
    expect(Buffer.byteLength(entry?.MessageBody ?? '') + attributesBytes(attributes)).toBeLessThanOrEqual(
      4096,
    );
    expect(attributes.conversation?.StringValue).toBe(entry?.MessageGroupId);
    expect(Buffer.byteLength(attributes.deliveryId?.StringValue ?? '')).toBeLessThanOrEqual(64);
  });

  it('replaces a conversation id SQS would refuse as a group id by its SHA-256', () => {
    expect(fifoIds('1065:111', ['k'], 'body').messageGroupId).toBe('1065:111');
    expect(fifoIds('1065:é', ['k'], 'body').messageGroupId).toBe(sha256('1065:é'));
    expect(fifoIds(`1:${'9'.repeat(200)}`, ['k'], 'body').messageGroupId).toMatch(/^[0-9a-f]{64}$/);
  });
});
