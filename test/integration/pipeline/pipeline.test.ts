import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  envelope,
  type InboundMessage,
  inboundMessages,
  messagesChange,
  statusesChange,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import {
  createPipeline,
  type Pipeline,
  restoreEnvironment,
  SECOND_APP_SECRET,
  sign,
} from '../../support/pipeline-fixture.ts';
import { waitFor } from '../../support/wait-for.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});
afterAll(() => restoreEnvironment());

async function drained(
  p: Pipeline,
  source: { waitUntilDrained(o?: { timeoutMs?: number }): Promise<void> },
  timeoutMs = 20_000,
) {
  await source.waitUntilDrained({ timeoutMs });
  expect(await p.queueDepth()).toBe(0);
}

/** `keys` come from the ids the test generated, never from the extractor under test. */
function everyKeyOnce(effects: Map<string, number>, keys: readonly string[]): void {
  expect(keys.length).toBeGreaterThan(0);
  expect(Object.fromEntries(effects)).toEqual(Object.fromEntries(keys.map((key) => [key, 1])));
}

function everyClaimDone(claims: Map<string, string>, keys: readonly string[]): void {
  expect(keys.length).toBeGreaterThan(0);
  expect(Object.fromEntries(claims)).toEqual(Object.fromEntries(keys.map((key) => [key, 'done'])));
}

describe('pipeline end to end: receiver → SQS → consumer', () => {
  it('runs each event once when Meta retries it re-batched in a differently shaped body', async () => {
    pipeline = await createPipeline('rebatched');
    const [a, b, c] = inboundMessages(3, 'rb') as [InboundMessage, InboundMessage, InboundMessage];
    const status = {
      id: 'wamid.rbout',
      status: 'delivered',
      recipientId: '16505550009',
      timestamp: '1749416500',
    };
    // First delivery: one entry, one change with two messages and a status change.
    const first = envelope([messagesChange([a, b]), statusesChange([status])]);
    // Retry: the same events, re-batched: other entry/change layout, other order, plus one new message.
    const retry = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        { id: '102290129340398', changes: [statusesChange([status]), messagesChange([b])] },
        { id: '102290129340398', changes: [messagesChange([c, a])] },
      ],
    });

    expect((await pipeline.post(first)).statusCode).toBe(200);
    const source = await pipeline.startConsumer();
    await drained(pipeline, source);
    expect((await pipeline.post(retry)).statusCode).toBe(200);
    await drained(pipeline, source);

    const keys = [`msg:${a.id}`, `msg:${b.id}`, `msg:${c.id}`, 'st:wamid.rbout:delivered'];
    everyKeyOnce(pipeline.effects(), keys);
    everyClaimDone(await pipeline.claims(), keys);
  });

  it('runs each event once for 5 concurrent identical deliveries', async () => {
    // Short leases: a copy found in flight comes back when its holder's lease ends.
    pipeline = await createPipeline('concurrent', { consumerTimeoutSeconds: 3, leaseMarginMs: 1_000 });
    const messages = inboundMessages(4, 'cc');
    const body = envelope([messagesChange(messages)]);
    const source = await pipeline.startConsumer();

    const p = pipeline;
    const answers = await Promise.all(Array.from({ length: 5 }, () => p.post(body)));

    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200]);
    await drained(pipeline, source);
    const keys = messages.map((m) => `msg:${m.id}`);
    everyKeyOnce(pipeline.effects(), keys);
    everyClaimDone(await pipeline.claims(), keys);
  });

  it('splits a 1000-update body larger than one SQS message and runs each of its events exactly once', async () => {
    // 256 KiB messages (the old SQS limit) so that this body needs several.
    pipeline = await createPipeline('thousand', {
      consumerTimeoutSeconds: 60,
      maximumMessageSizeBytes: 256 * 1024,
    });
    const messages = inboundMessages(1000, 'k');
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [{ id: '102290129340398', changes: messages.map((m) => messagesChange([m])) }],
    });
    expect(Buffer.byteLength(body)).toBeGreaterThan(256 * 1024);

    expect((await pipeline.post(body)).statusCode).toBe(200);
    const parts = await pipeline.queueDepth();
    expect(parts).toBeGreaterThanOrEqual(2);
    const source = await pipeline.startConsumer();
    await drained(pipeline, source, 110_000);

    const effects = pipeline.effects();
    expect(effects.size).toBe(1000);
    everyKeyOnce(
      effects,
      messages.map((m) => `msg:${m.id}`),
    );
    // DynamoDB Local takes ~2 writes per event here: seconds on an idle machine, more on a loaded one.
  }, 120_000);

  it('enqueues nothing for a missing, wrong or foreign signature, and accepts a rotated secret', async () => {
    pipeline = await createPipeline('signatures');
    const [message, rotated] = inboundMessages(2, 'sig') as [InboundMessage, InboundMessage];
    const body = envelope([messagesChange([message])]);

    const answers = [
      await pipeline.post(body, { signature: null }),
      await pipeline.post(body, { signature: 'sha256=deadbeef' }),
      await pipeline.post(body, { signature: sign(body, 'some-other-app-secret') }),
      await pipeline.post(body, { signature: sign(`${body} `) }),
    ];

    expect(answers.map((answer) => answer.statusCode)).toEqual([401, 401, 401, 401]);
    expect(await pipeline.queueDepth()).toBe(0);
    expect(await pipeline.queueDepth(pipeline.queues.dlqUrl)).toBe(0);

    const rotatedBody = envelope([messagesChange([rotated])]);
    expect(
      (await pipeline.post(rotatedBody, { signature: sign(rotatedBody, SECOND_APP_SECRET) })).statusCode,
    ).toBe(200);
    const source = await pipeline.startConsumer();
    await drained(pipeline, source);
    everyKeyOnce(pipeline.effects(), [`msg:${rotated.id}`]);
  });

  it('quarantines a truncated signed body in the DLQ with its reason, and runs nothing', async () => {
    pipeline = await createPipeline('truncated');
    const full = Buffer.from(envelope([messagesChange(inboundMessages(2, 'tr'))]));
    const truncated = full.subarray(0, Math.floor(full.length / 2));

    const answer = await pipeline.post(truncated);

    expect(answer.statusCode).toBe(200);
    expect(await pipeline.queueDepth()).toBe(0);
    const dead = await pipeline.drainDeadLetters();
    expect(dead).toHaveLength(1);
    expect(dead[0]?.MessageAttributes?.reason?.StringValue).toBe('invalid-json');
    expect(Buffer.from(dead[0]?.Body ?? '', 'base64').equals(truncated)).toBe(true);
    expect(pipeline.effects().size).toBe(0);
  });

  it('has the consumer quarantine an unusable queued record once, with its reason, and go on', async () => {
    pipeline = await createPipeline('consumer-quarantine');
    const p = pipeline;
    const [message] = inboundMessages(1, 'cq') as [InboundMessage];
    await pipeline.enqueueRaw('{"object":"page","entry":[]}');
    expect((await pipeline.post(envelope([messagesChange([message])]))).statusCode).toBe(200);

    const source = await pipeline.startConsumer();
    await drained(pipeline, source);

    const dead = await pipeline.drainDeadLetters();
    expect(dead.map((m) => m.MessageAttributes?.reason?.StringValue)).toEqual(['not-whatsapp-envelope']);
    expect(Buffer.from(dead[0]?.Body ?? '', 'base64').toString('utf8')).toBe('{"object":"page","entry":[]}');
    everyKeyOnce(pipeline.effects(), [`msg:${message.id}`]);
    await waitFor(
      async () => (await p.queueDepth()) === 0,
      5_000,
      () => 'the quarantined record is still in the delivery queue',
    );
  });
});
