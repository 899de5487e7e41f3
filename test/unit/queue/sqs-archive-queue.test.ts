import {
  InvalidMessageContents,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { EnqueueFailedError } from '../../../functions/queue/errors.ts';
import { SqsArchiveQueue } from '../../../functions/queue/sqs-archive-queue.ts';

const sqsMock = mockClient(SQSClient);
afterEach(() => sqsMock.reset());

const ARCHIVE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/archive';
const META = {
  deliveryId: 'req-1',
  receivedAt: '2026-12-01T14:00:00.000Z',
  retryDeadline: Date.now() + 60_000,
};

function archiveQueue(maximumMessageSizeBytes = 256 * 1024) {
  return new SqsArchiveQueue({
    sqs: new SQSClient({ region: 'eu-west-1' }),
    archiveQueueUrl: ARCHIVE_URL,
    maximumMessageSizeBytes,
    sleep: async () => {},
  });
}

function sentEntries() {
  return sqsMock
    .commandCalls(SendMessageBatchCommand)
    .flatMap((call) => (call.args[0].input as SendMessageBatchCommandInput).Entries ?? []);
}

describe('SqsArchiveQueue', () => {
  it('sends a body that is not UTF-8 as base64, with its verdict, subscribers, arrival and delivery id', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(({ Entries }) => ({
      Successful: Entries.map(({ Id }: { Id: string }) => ({ Id, MessageId: Id, MD5OfMessageBody: '' })),
    }));
    const raw = Buffer.from([0x7b, 0xff, 0x7d]);
    const result = await archiveQueue().archive(
      raw,
      { verdict: 'accepted', subscribers: ['bot', 'crm'] },
      META,
    );
    expect(result).toEqual({ messages: 1 });
    const [entry] = sentEntries();
    expect(sqsMock.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.QueueUrl).toBe(ARCHIVE_URL);
    expect(Buffer.from(entry?.MessageBody ?? '', 'base64').equals(raw)).toBe(true);
    const attributes = Object.fromEntries(
      Object.entries(entry?.MessageAttributes ?? {}).map(([name, value]) => [name, value.StringValue]),
    );
    expect(attributes).toEqual({
      receivedAt: META.receivedAt,
      deliveryId: 'req-1',
      verdict: 'accepted',
      subscribers: '["bot","crm"]',
      contentEncoding: 'base64',
    });
  });

  it('sends valid UTF-8 as its text, given as bytes or as the text the receiver got', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(({ Entries }) => ({
      Successful: Entries.map(({ Id }: { Id: string }) => ({ Id, MessageId: Id, MD5OfMessageBody: '' })),
    }));
    const text = '{"text":"olá 👋\tçava\r\n","bom":"\uFEFF"}';
    await archiveQueue().archive(Buffer.from(text, 'utf8'), { verdict: 'accepted', subscribers: [] }, META);
    await archiveQueue().archive(text, { verdict: 'accepted', subscribers: [] }, META);
    const entries = sentEntries();
    expect(entries.map((entry) => entry.MessageBody)).toEqual([text, text]);
    expect(entries.map((entry) => entry.MessageAttributes?.contentEncoding?.StringValue)).toEqual([
      'utf8',
      'utf8',
    ]);
  });

  it('sends base64 for text holding a character SQS refuses, whose bytes it keeps', async () => {
    sqsMock.on(SendMessageBatchCommand).callsFake(({ Entries }) => ({
      Successful: Entries.map(({ Id }: { Id: string }) => ({ Id, MessageId: Id, MD5OfMessageBody: '' })),
    }));
    const refused = ['{"a":"\u0001"}', '{"a":"\u001f"}', '\uFFFE', 'lone \uD83D here', 'lone \uDC4B'];
    for (const text of refused) {
      await archiveQueue().archive(text, { verdict: 'quarantined', subscribers: [] }, META);
    }
    const entries = sentEntries();
    expect(entries.map((entry) => entry.MessageAttributes?.contentEncoding?.StringValue)).toEqual(
      refused.map(() => 'base64'),
    );
    expect(entries.map((entry) => Buffer.from(entry.MessageBody ?? '', 'base64').toString('utf8'))).toEqual(
      refused.map((text) => Buffer.from(text, 'utf8').toString('utf8')),
    );
  });

  it.each([
    ['text', Buffer.from('é👋x'.repeat(2_500), 'utf8'), (joined: string) => Buffer.from(joined, 'utf8')],
    ['base64', Buffer.alloc(10_000, 0xff), (joined: string) => Buffer.from(joined, 'base64')],
  ])(
    'spreads a %s body larger than one message over chunks of one archive id that join back to it',
    async (encoding, raw, decode) => {
      sqsMock.on(SendMessageBatchCommand).callsFake(({ Entries }) => ({
        Successful: Entries.map(({ Id }: { Id: string }) => ({ Id, MessageId: Id, MD5OfMessageBody: '' })),
      }));
      const { messages } = await archiveQueue(2_048).archive(
        raw,
        { verdict: 'quarantined', subscribers: [] },
        META,
      );
      const entries = sentEntries();
      expect(messages).toBeGreaterThan(1);
      expect(entries).toHaveLength(messages);
      expect(new Set(entries.map((entry) => entry.MessageAttributes?.archiveId?.StringValue)).size).toBe(1);
      expect(new Set(entries.map((entry) => entry.MessageAttributes?.contentEncoding?.StringValue))).toEqual(
        new Set([encoding === 'text' ? 'utf8' : 'base64']),
      );
      const ordered = [...entries].sort(
        (a, b) =>
          Number(a.MessageAttributes?.chunk?.StringValue) - Number(b.MessageAttributes?.chunk?.StringValue),
      );
      expect(ordered.map((entry) => entry.MessageAttributes?.chunks?.StringValue)).toEqual(
        entries.map(() => String(messages)),
      );
      expect(decode(ordered.map((entry) => entry.MessageBody).join('')).equals(raw)).toBe(true);
    },
  );

  it('fails with an archive EnqueueFailedError when SQS keeps failing or refuses the copy', async () => {
    sqsMock.on(SendMessageBatchCommand).rejects(new Error('boom'));
    await expect(
      archiveQueue().archive(Buffer.from('{}'), { verdict: 'accepted', subscribers: [] }, META),
    ).rejects.toMatchObject({ name: 'EnqueueFailedError', queue: 'archive' });
    sqsMock.reset();
    sqsMock.on(SendMessageBatchCommand).resolves({
      Failed: [{ Id: 'm0', Code: InvalidMessageContents.name, SenderFault: true }],
    });
    await expect(
      archiveQueue().archive(Buffer.from('{}'), { verdict: 'accepted', subscribers: [] }, META),
    ).rejects.toBeInstanceOf(EnqueueFailedError);
  });
});
