/**
 * The redelivery scenarios of the single-subscriber pipeline, run with two subscribers at once
 * (docs/design.md, "7. Subscribers"): Meta's retry re-batched with other events, identical deliveries
 * consumed concurrently, and an acknowledgement lost by SQS (the delete failed, so the record comes back).
 * Each subscriber effects each key exactly once, whatever the other does.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { InvocationReport } from '../../../cli/local/sqs-event-source.ts';
import {
  envelope,
  type InboundMessage,
  inboundMessages,
  messagesChange,
  statusesChange,
  WABA_ID,
  wamidFactory,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import { createSqsClient } from '../../support/aws-clients.ts';
import {
  createPipeline,
  type Pipeline,
  type PipelineOptions,
  restoreEnvironment,
} from '../../support/pipeline-fixture.ts';
import {
  drainEvery,
  expectEveryKeyOnce,
  expectNothingDeadOrQuarantined,
  startEveryConsumer,
} from '../../support/subscriber-checks.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});
afterAll(() => restoreEnvironment());

/** A copy found in flight waits for its holder's lease: keep leases short so that it comes back soon. */
const SHORT_LEASES = { consumerTimeoutSeconds: 3, leaseMarginMs: 1_000 };

/** Both subscribers want every field and handle every kind (the fixture journals each effect). */
const BOT_AND_CRM: PipelineOptions = { subscribers: [{ name: 'bot' }, { name: 'crm' }] };

function expectEachSubscriberOnce(p: Pipeline, keys: readonly string[]): void {
  for (const subscriber of p.subscribers) expectEveryKeyOnce(subscriber.effects(), keys, subscriber.name);
}

describe('redelivery, per subscriber', () => {
  it("runs each event once per subscriber when Meta's retry comes re-batched with other events", async () => {
    // Short leases: a copy found in flight comes back when its holder's lease ends.
    pipeline = await createPipeline('subscribers-rebatched', SHORT_LEASES, {}, BOT_AND_CRM);
    const [a, b, c] = inboundMessages(3, `rb${Date.now()}`) as [
      InboundMessage,
      InboundMessage,
      InboundMessage,
    ];
    const status = {
      id: wamidFactory('rb')(1),
      status: 'delivered',
      recipientId: '16505550009',
      timestamp: '1749416500',
    };
    const first = envelope([messagesChange([a, b]), statusesChange([status])]);
    // The same events re-batched: other entries and changes, other order, one new message.
    const retry = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        { id: WABA_ID, changes: [statusesChange([status]), messagesChange([b])] },
        { id: WABA_ID, changes: [messagesChange([c, a])] },
      ],
    });

    expect((await pipeline.post(first)).statusCode).toBe(200);
    const sources = await startEveryConsumer(pipeline);
    // The retry arrives while the first delivery may still be in flight at either subscriber.
    expect((await pipeline.post(retry)).statusCode).toBe(200);
    await drainEvery(sources);
    // And once more, after both have finished.
    expect((await pipeline.post(retry)).statusCode).toBe(200);
    await drainEvery(sources);

    expectEachSubscriberOnce(pipeline, [
      `msg:${a.id}`,
      `msg:${b.id}`,
      `msg:${c.id}`,
      `st:${status.id}:delivered`,
    ]);
    await expectNothingDeadOrQuarantined(pipeline);
  }, 90_000);

  it('runs each event once per subscriber for 5 identical deliveries consumed concurrently', async () => {
    pipeline = await createPipeline(
      'subscribers-concurrent',
      SHORT_LEASES,
      { pollers: 3, batchSize: 1 },
      BOT_AND_CRM,
    );
    const messages = inboundMessages(4, `cc${Date.now()}`);
    const body = envelope([messagesChange(messages)]);
    const sources = await startEveryConsumer(pipeline);

    const p = pipeline;
    const answers = await Promise.all(Array.from({ length: 5 }, () => p.post(body)));

    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200]);
    await drainEvery(sources);
    expectEachSubscriberOnce(
      pipeline,
      messages.map((message) => `msg:${message.id}`),
    );
    await expectNothingDeadOrQuarantined(pipeline);
  }, 90_000);

  it('runs each event once per subscriber when its acknowledgement is lost and SQS delivers it again', async () => {
    // A 2 s consumer timeout makes the visibility timeout 12 s: the undeleted record is back that soon.
    pipeline = await createPipeline(
      'subscribers-lost-ack',
      { consumerTimeoutSeconds: 2, leaseMarginMs: 1_000 },
      { pollers: 1 },
      BOT_AND_CRM,
    );
    const messages = inboundMessages(3, `ack${Date.now()}`);
    expect((await pipeline.post(envelope([messagesChange(messages)]))).statusCode).toBe(200);

    const received = new Map<string, string[]>();
    const problems: string[] = [];
    const sources = await startEveryConsumer(pipeline, (subscriber) => {
      const ids: string[] = [];
      received.set(subscriber.name, ids);
      return {
        // The first delete batch fails on all 3 of the event source's attempts.
        sqs: losingDeletes(3),
        onInvocation: (report: InvocationReport) => ids.push(...report.records.map((r) => r.messageId)),
        log: (line) => problems.push(line),
      };
    });
    await drainEvery(sources, 60_000);

    for (const [name, ids] of received) {
      // Received again after the visibility timeout (twice, unless a slow first invocation timed out).
      expect(ids.length, name).toBeGreaterThanOrEqual(2);
      expect(new Set(ids).size, name).toBe(1);
    }
    expect(problems.filter((line) => line.includes('could not be deleted'))).toHaveLength(2);
    expectEachSubscriberOnce(
      pipeline,
      messages.map((message) => `msg:${message.id}`),
    );
    await expectNothingDeadOrQuarantined(pipeline);
  }, 90_000);
});

/** An SQS client whose first `count` DeleteMessageBatch calls fail before reaching the queue. */
function losingDeletes(count: number): SQSClient {
  const sqs = createSqsClient();
  let left = count;
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'DeleteMessageBatchCommand' && left > 0) {
        left--;
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      }
      return next(args);
    },
    { step: 'initialize', name: 'loseDeletes' },
  );
  return sqs;
}
