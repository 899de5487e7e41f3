import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSqsClient, uniqueName } from '../../../../test/support/aws-clients.ts';
import { waitFor } from '../../../../test/support/wait-for.ts';
import {
  createSqsEventSource,
  type InvocationReport,
  type SqsEventSource,
  type SqsEventSourceOptions,
} from '../../../local/sqs-event-source.ts';

let client: SQSClient;
const sources: SqsEventSource[] = [];

beforeAll(() => {
  // The run's shared fauxqs (test/support/global-setup.ts); every test creates queues of its own.
  client = createSqsClient();
});

afterEach(async () => {
  await Promise.all(sources.splice(0).map((s) => s.stop()));
});

afterAll(() => {
  client.destroy();
});

async function createQueue(options: { visibilityTimeout?: number; maxReceiveCount?: number } = {}) {
  const name = uniqueName('event-source');
  const dlq = await client.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const dlqUrl = dlq.QueueUrl ?? '';
  const dlqArn = await queueArn(dlqUrl);
  const attributes: Record<string, string> = { VisibilityTimeout: String(options.visibilityTimeout ?? 1) };
  if (options.maxReceiveCount) {
    attributes.RedrivePolicy = JSON.stringify({
      deadLetterTargetArn: dlqArn,
      maxReceiveCount: options.maxReceiveCount,
    });
  }
  const queue = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  return { queueUrl: queue.QueueUrl ?? '', dlqUrl, queueArn: await queueArn(queue.QueueUrl ?? '') };
}

async function queueArn(url: string): Promise<string> {
  const result = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return result.Attributes?.QueueArn ?? '';
}

async function sendBodies(queueUrl: string, bodies: string[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: bodies.slice(i, i + 10).map((body, j) => ({ Id: String(j), MessageBody: body })),
      }),
    );
  }
}

function start(
  queueUrl: string,
  handler: SqsEventSourceOptions['handler'],
  overrides: Partial<SqsEventSourceOptions> = {},
) {
  const reports: InvocationReport[] = [];
  const source = createSqsEventSource({
    sqs: client,
    queueUrl,
    handler,
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    functionTimeoutSeconds: 5,
    pollers: 2,
    waitTimeSeconds: 1,
    onInvocation: (r) => reports.push(r),
    log: () => {},
    ...overrides,
  });
  sources.push(source);
  return { source, reports };
}

/** Every body the handler saw, in order, with the receive count of that delivery. */
function recorder(decide: (record: SQSRecord) => 'ok' | 'fail' = () => 'ok') {
  const seen: { body: string; receiveCount: number }[] = [];
  const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const batchItemFailures = [];
    for (const record of event.Records) {
      seen.push({ body: record.body, receiveCount: Number(record.attributes.ApproximateReceiveCount) });
      if (decide(record) === 'fail') batchItemFailures.push({ itemIdentifier: record.messageId });
    }
    return { batchItemFailures };
  };
  return { seen, handler };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SQS event source on fauxqs', () => {
  it('passes records and a context shaped like Lambda', async () => {
    const { queueUrl, queueArn: arn } = await createQueue();
    await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: '{"hello":"world"}',
        MessageAttributes: { reason: { DataType: 'String', StringValue: 'test' } },
      }),
    );
    let captured: { event: SQSEvent; context: Context; remaining: number } | undefined;
    const { source } = start(
      queueUrl,
      async (event, context) => {
        captured = { event, context, remaining: context.getRemainingTimeInMillis() };
      },
      { functionName: 'whatsapp-consumer', functionTimeoutSeconds: 7 },
    );
    await source.start();
    await source.waitUntilDrained();

    const record = captured?.event.Records[0];
    expect(captured?.event.Records).toHaveLength(1);
    expect(record).toMatchObject({
      body: '{"hello":"world"}',
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: arn.split(':')[3],
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: { reason: { stringValue: 'test', dataType: 'String', stringListValues: [] } },
    });
    expect(record?.messageId).toMatch(/.+/);
    expect(record?.receiptHandle).toMatch(/.+/);
    expect(record?.md5OfBody).toMatch(/^[0-9a-f]{32}$/);
    expect(Number(record?.attributes.SentTimestamp)).toBeGreaterThan(0);
    expect(captured?.context.functionName).toBe('whatsapp-consumer');
    expect(captured?.context.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(captured?.remaining).toBeGreaterThan(0);
    expect(captured?.remaining).toBeLessThanOrEqual(7000);
  });

  it('never puts more than batchSize records in one invocation, and delivers each once', async () => {
    const { queueUrl } = await createQueue();
    const bodies = Array.from({ length: 37 }, (_, i) => `m${i}`);
    await sendBodies(queueUrl, bodies);
    const { seen, handler } = recorder();
    const { source, reports } = start(queueUrl, handler, { batchSize: 4, pollers: 3 });
    await source.start();
    await source.waitUntilDrained();

    expect(Math.max(...reports.map((r) => r.records.length))).toBeLessThanOrEqual(4);
    expect(seen.map((s) => s.body).sort()).toEqual([...bodies].sort());
  });

  it('gathers records arriving within the batching window into one invocation', async () => {
    // The visibility timeout must outlast the window, or gathered records reappear (resolveSettings enforces it).
    const { queueUrl } = await createQueue({ visibilityTimeout: 10 });
    const { seen, handler } = recorder();
    const { source, reports } = start(queueUrl, handler, {
      batchSize: 10,
      maxBatchingWindowSeconds: 3,
      pollers: 1,
    });
    await source.start();
    await sendBodies(queueUrl, ['first']);
    await sleep(300);
    await sendBodies(queueUrl, ['second', 'third']);
    await source.waitUntilDrained({ timeoutMs: 10_000 });

    expect(seen.map((s) => s.body).sort()).toEqual(['first', 'second', 'third']);
    expect(reports).toHaveLength(1);
  });

  it('deletes only the successes of a partial batch response; the failure comes back after the visibility timeout', async () => {
    const { queueUrl } = await createQueue({ visibilityTimeout: 1 });
    await sendBodies(queueUrl, ['a', 'b', 'flaky', 'c']);
    let flakyFailures = 0;
    const { seen, handler } = recorder((record) =>
      record.body === 'flaky' && flakyFailures++ === 0 ? 'fail' : 'ok',
    );
    const { source, reports } = start(queueUrl, handler, { pollers: 1 });
    await source.start();
    await source.waitUntilDrained({ timeoutMs: 10_000 });

    expect(seen.filter((s) => s.body !== 'flaky').map((s) => s.receiveCount)).toEqual([1, 1, 1]);
    expect(seen.filter((s) => s.body === 'flaky').map((s) => s.receiveCount)).toEqual([1, 2]);
    expect(reports[0]?.outcome).toBe('partial-failure');
    expect(reports[0]?.failedMessageIds).toHaveLength(1);
  });

  it('treats a thrown error as a failure of the whole batch', async () => {
    const { queueUrl } = await createQueue({ visibilityTimeout: 1 });
    await sendBodies(queueUrl, ['x', 'y']);
    const seen: string[] = [];
    let calls = 0;
    const { source, reports } = start(
      queueUrl,
      async (event) => {
        seen.push(...event.Records.map((r) => `${r.body}@${r.attributes.ApproximateReceiveCount}`));
        if (calls++ === 0) throw new Error('boom');
      },
      { pollers: 1 },
    );
    await source.start();
    await source.waitUntilDrained({ timeoutMs: 10_000 });

    expect(seen.sort()).toEqual(['x@1', 'x@2', 'y@1', 'y@2']);
    expect(reports[0]?.outcome).toBe('error');
  });

  it('fails the whole batch on an itemIdentifier it does not know', async () => {
    const { queueUrl } = await createQueue({ visibilityTimeout: 1 });
    await sendBodies(queueUrl, ['only']);
    let calls = 0;
    const { source, reports } = start(
      queueUrl,
      async () =>
        calls++ === 0 ? { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] } : undefined,
      { pollers: 1 },
    );
    await source.start();
    await source.waitUntilDrained({ timeoutMs: 10_000 });

    expect(reports.map((r) => r.outcome)).toEqual(['invalid-response', 'success']);
  });

  it('counts an invocation still running at the function timeout as failed', async () => {
    const { queueUrl } = await createQueue({ visibilityTimeout: 2 });
    await sendBodies(queueUrl, ['slow']);
    let calls = 0;
    const { source, reports } = start(
      queueUrl,
      async () => {
        if (calls++ === 0) await sleep(1_500);
      },
      { pollers: 1, functionTimeoutSeconds: 1 },
    );
    await source.start();
    await source.waitUntilDrained({ timeoutMs: 10_000 });

    expect(reports.map((r) => r.outcome)).toEqual(['timeout', 'success']);
    expect(reports[1]?.records[0]?.attributes.ApproximateReceiveCount).toBe('2');
  });

  it('leaves redrive to the queue: a record failing maxReceiveCount times lands in the DLQ', async () => {
    const { queueUrl, dlqUrl } = await createQueue({ visibilityTimeout: 1, maxReceiveCount: 2 });
    await sendBodies(queueUrl, ['poison', 'fine']);
    const { seen, handler } = recorder((record) => (record.body === 'poison' ? 'fail' : 'ok'));
    const { source } = start(queueUrl, handler, { pollers: 1 });
    await source.start();
    await source.waitUntilDrained({ timeoutMs: 15_000 });

    expect(seen.filter((s) => s.body === 'poison').map((s) => s.receiveCount)).toEqual([1, 2]);
    expect(seen.filter((s) => s.body === 'fine')).toHaveLength(1);
    const dead = await client.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10 }));
    expect(dead.Messages?.map((m) => m.Body)).toEqual(['poison']);
  });

  it('runs at most `pollers` invocations at once, and more than one', async () => {
    const { queueUrl } = await createQueue();
    await sendBodies(
      queueUrl,
      Array.from({ length: 30 }, (_, i) => `m${i}`),
    );
    let running = 0;
    let peak = 0;
    const { source } = start(
      queueUrl,
      async () => {
        running++;
        peak = Math.max(peak, running);
        await sleep(50);
        running--;
      },
      { pollers: 3, batchSize: 1 },
    );
    await source.start();
    await source.waitUntilDrained({ timeoutMs: 15_000 });

    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThan(1);
  });

  it('stops gracefully: a running invocation finishes and its records are deleted', async () => {
    const { queueUrl } = await createQueue({ visibilityTimeout: 30 });
    await sendBodies(queueUrl, ['in-flight']);
    let entered: () => void = () => {};
    const handlerEntered = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let finished = false;
    const { source } = start(
      queueUrl,
      async () => {
        entered();
        await sleep(300);
        finished = true;
      },
      { pollers: 1 },
    );
    await source.start();
    await handlerEntered;
    await source.stop();

    expect(finished).toBe(true);
    const attributes = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(attributes.Attributes).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
  });

  it('pauses like a disabled event source mapping: records wait in the queue until resume', async () => {
    const { queueUrl } = await createQueue({ visibilityTimeout: 30 });
    const { seen, handler } = recorder();
    const { source } = start(queueUrl, handler);
    await source.start();

    source.pause();
    // Both pollers are in a long poll, which is left to finish rather than aborted.
    expect(source.state).toBe('Disabling');
    await waitFor(() => source.state === 'Disabled', 5_000);
    await sendBodies(queueUrl, ['a', 'b']);
    await sleep(1_500);

    expect(seen).toEqual([]);
    const waiting = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    expect(waiting.Attributes?.ApproximateNumberOfMessages).toBe('2');

    source.resume();
    expect(source.state).toBe('Enabled');
    await source.waitUntilDrained({ timeoutMs: 10_000 });
    expect(seen.map((record) => record.body).sort()).toEqual(['a', 'b']);
  });

  it('stays paused across stop and start', async () => {
    const { queueUrl } = await createQueue({ visibilityTimeout: 30 });
    const { seen, handler } = recorder();
    const { source } = start(queueUrl, handler);
    await source.start();
    source.pause();
    await source.stop();
    await source.start();
    await sendBodies(queueUrl, ['held']);
    await waitFor(() => source.state === 'Disabled', 5_000);
    await sleep(1_500);

    expect(seen).toEqual([]);
    source.resume();
    await source.waitUntilDrained({ timeoutMs: 10_000 });
    expect(seen.map((record) => record.body)).toEqual(['held']);
  });

  it('reports a queue that does not drain in time', async () => {
    const { queueUrl } = await createQueue({ visibilityTimeout: 30 });
    await sendBodies(queueUrl, ['stuck']);
    const { source } = start(queueUrl, async (event) => ({
      batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })),
    }));
    await source.start();

    await expect(source.waitUntilDrained({ timeoutMs: 500 })).rejects.toThrow(/not drained/);
  });
});

/** A FIFO queue (the ordered message lane's kind) with a short visibility timeout, and a FIFO DLQ. */
async function createFifoQueue(visibilityTimeout = 1) {
  const name = uniqueName('event-source-fifo');
  const dlq = await client.send(
    new CreateQueueCommand({ QueueName: `${name}-dlq.fifo`, Attributes: { FifoQueue: 'true' } }),
  );
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: `${name}.fifo`,
      Attributes: {
        FifoQueue: 'true',
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
        VisibilityTimeout: String(visibilityTimeout),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: await queueArn(dlq.QueueUrl ?? ''),
          maxReceiveCount: 20,
        }),
      },
    }),
  );
  return queue.QueueUrl ?? '';
}

/** Sends `<group><n>` bodies for n = 0..perGroup-1, the groups interleaved, each group's in order. */
async function sendToGroups(queueUrl: string, groups: readonly string[], perGroup: number): Promise<void> {
  for (let n = 0; n < perGroup; n++) {
    for (const group of groups) {
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: `${group}${n}`,
          MessageGroupId: group,
          MessageDeduplicationId: `${group}${n}`,
        }),
      );
    }
  }
}

/**
 * A handler that runs a FIFO batch as the ordered consumer does: each group's records in order, and after a
 * failure that group's later records reported failed without running. Records which groups are in flight
 * in two invocations at once (`overlaps`), and each group's runs in order (`runs`).
 */
function groupRecorder(options: {
  fails?: (body: string, receiveCount: number) => boolean;
  workMs?: number;
}) {
  const inFlight = new Map<string, number>();
  const overlaps: string[] = [];
  const runs = new Map<
    string,
    { body: string; at: number; firstReceivedAt: number; receiveCount: number; failed: boolean }[]
  >();
  const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const groups = [...new Set(event.Records.map((r) => r.attributes.MessageGroupId as string))];
    for (const group of groups) {
      if ((inFlight.get(group) ?? 0) > 0) overlaps.push(group);
      inFlight.set(group, (inFlight.get(group) ?? 0) + 1);
    }
    const batchItemFailures: { itemIdentifier: string }[] = [];
    const failedGroups = new Set<string>();
    try {
      for (const record of event.Records) {
        const group = record.attributes.MessageGroupId as string;
        if (failedGroups.has(group)) {
          batchItemFailures.push({ itemIdentifier: record.messageId });
          continue;
        }
        await sleep(options.workMs ?? 20);
        const receiveCount = Number(record.attributes.ApproximateReceiveCount);
        const failed = options.fails?.(record.body, receiveCount) === true;
        const list = runs.get(group) ?? [];
        const firstReceivedAt = Number(record.attributes.ApproximateFirstReceiveTimestamp);
        list.push({ body: record.body, at: Date.now(), firstReceivedAt, receiveCount, failed });
        runs.set(group, list);
        if (failed) {
          failedGroups.add(group);
          batchItemFailures.push({ itemIdentifier: record.messageId });
        }
      }
    } finally {
      for (const group of groups) inFlight.set(group, (inFlight.get(group) ?? 1) - 1);
    }
    return { batchItemFailures };
  };
  return { handler, overlaps, runs };
}

const expectedBodies = (group: string, count: number) =>
  Array.from({ length: count }, (_, n) => `${group}${n}`);

describe('SQS event source on a FIFO queue of fauxqs', () => {
  it('passes records with the FIFO system attributes of Lambda SQS records', async () => {
    const queueUrl = await createFifoQueue();
    await sendToGroups(queueUrl, ['a'], 1);
    const seen: SQSRecord[] = [];
    const { source } = start(queueUrl, async (event) => {
      seen.push(...event.Records);
    });
    await source.start();
    await waitFor(() => seen.length === 1);

    expect(seen[0]?.attributes).toMatchObject({
      MessageGroupId: 'a',
      MessageDeduplicationId: 'a0',
      SequenceNumber: expect.stringMatching(/^\d+$/),
      SentTimestamp: expect.stringMatching(/^\d+$/),
      ApproximateReceiveCount: '1',
    });
  });

  it('never has one group in two invocations at once, runs each group in order, and runs groups in parallel', async () => {
    const queueUrl = await createFifoQueue(30);
    const groups = ['a', 'b', 'c'];
    const perGroup = 12;
    await sendToGroups(queueUrl, groups, perGroup);
    const { handler, overlaps, runs } = groupRecorder({ workMs: 15 });
    const { source, reports } = start(queueUrl, handler, { pollers: 3 });

    await source.start();
    await source.waitUntilDrained({ timeoutMs: 20_000 });

    expect(overlaps).toEqual([]);
    for (const group of groups) {
      expect(runs.get(group)?.map((r) => r.body)).toEqual(expectedBodies(group, perGroup));
    }
    expect(Math.max(...reports.map((r) => r.records.length))).toBeLessThanOrEqual(10);
    // Invocations of different groups overlapped in time: the pollers ran at once.
    const overlapping = reports.some((r, i) =>
      reports.some(
        (other, j) =>
          i !== j && other.startedAt < r.startedAt + r.durationMs && r.startedAt < other.startedAt,
      ),
    );
    expect(overlapping).toBe(true);
  });

  it('holds a group behind its failed record until that record is visible again, while the other group goes on', async () => {
    const visibilityTimeoutSeconds = 1;
    const queueUrl = await createFifoQueue(visibilityTimeoutSeconds);
    const perGroup = 6;
    await sendToGroups(queueUrl, ['a', 'b'], perGroup);
    const { handler, overlaps, runs } = groupRecorder({
      fails: (body, receiveCount) => body === 'a1' && receiveCount === 1,
    });
    const { source } = start(queueUrl, handler, { pollers: 2 });

    await source.start();
    await source.waitUntilDrained({ timeoutMs: 20_000 });

    const a = runs.get('a') ?? [];
    const b = runs.get('b') ?? [];
    const failure = a.find((r) => r.failed);
    const retry = a.find((r) => r.body === 'a1' && !r.failed);
    expect(overlaps).toEqual([]);
    expect(a.map((r) => r.body)).toEqual(['a0', 'a1', ...expectedBodies('a', perGroup).slice(1)]);
    expect(b.map((r) => r.body)).toEqual(expectedBodies('b', perGroup));
    expect(failure?.body).toBe('a1');
    expect(retry?.receiveCount).toBe(2);
    // The retry came once the visibility timeout, counted from the failed record's receive (not from its
    // handler, which may start late on a busy machine), had passed. Nothing of group a ran between the failure
    // and the retry; group b finished in between.
    expect((retry?.at ?? 0) - (failure?.firstReceivedAt ?? Number.NaN)).toBeGreaterThanOrEqual(
      visibilityTimeoutSeconds * 1000 - 5,
    );
    expect(a.filter((r) => r.at > (failure?.at ?? 0) && r.at < (retry?.at ?? 0))).toEqual([]);
    expect(Math.max(...b.map((r) => r.at))).toBeLessThan(retry?.at ?? 0);
  });

  it('refuses a batching window or a batch above 10 on a FIFO queue, as Lambda does', async () => {
    const queueUrl = await createFifoQueue();
    const withWindow = start(queueUrl, async () => {}, { maxBatchingWindowSeconds: 1 });
    const tooLarge = start(queueUrl, async () => {}, { batchSize: 11, maxBatchingWindowSeconds: 1 });

    await expect(withWindow.source.start()).rejects.toThrow(/no batching window/);
    await expect(tooLarge.source.start()).rejects.toThrow(/at most 10 records/);
  });
});
