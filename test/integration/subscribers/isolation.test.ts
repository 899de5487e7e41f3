/**
 * Isolation between subscribers (docs/design.md, "7. Subscribers"): one subscriber's handler being slow or
 * crashing never delays or blocks another's effects, and each subscriber's DLQ holds only its own failed
 * records.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { envelope, inboundMessages, messagesChange } from '../../../cli/meta-traffic/webhook-bodies.ts';
import type { WebhookHandlers } from '../../../functions/consumer/handler-api.ts';
import { createPipeline, type Pipeline, restoreEnvironment } from '../../support/pipeline-fixture.ts';
import {
  drainEvery,
  drainSubscriber,
  expectEveryKeyOnce,
  startEveryConsumer,
} from '../../support/subscriber-checks.ts';
import { waitFor } from '../../support/wait-for.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});
afterAll(() => restoreEnvironment());

/** One delivery per message, and the messages' keys. */
function deliveries(count: number, label: string): { bodies: string[]; keys: string[] } {
  const messages = inboundMessages(count, `${label}${Date.now()}`);
  return {
    bodies: messages.map((message) => envelope([messagesChange([message])])),
    keys: messages.map((message) => `msg:${message.id}`),
  };
}

describe('one subscriber slow or crashing', () => {
  it("does not delay the other: the bot effects everything while the CRM's first handler call still waits", async () => {
    let openCrm: () => void = () => undefined;
    const crmMayFinish = new Promise<void>((resolve) => {
      openCrm = resolve;
    });
    let crmCalls = 0;
    const slowCrm: WebhookHandlers = {
      onMessage: async () => {
        crmCalls++;
        await crmMayFinish;
      },
    };
    pipeline = await createPipeline(
      'isolation-slow',
      {},
      {},
      {
        subscribers: [{ name: 'bot' }, { name: 'crm', handlers: slowCrm }],
      },
    );
    const { bodies, keys } = deliveries(4, 'slow');
    for (const body of bodies) expect((await pipeline.post(body)).statusCode).toBe(200);

    const sources = await startEveryConsumer(pipeline);
    const bot = pipeline.subscriber('bot');
    const crm = pipeline.subscriber('crm');
    await waitFor(
      () => crmCalls > 0,
      20_000,
      () => 'the CRM handler was never called',
    );
    await drainSubscriber(sources, 'bot', 20_000);

    // The bot is done while the CRM is stuck in its first handler calls, with nothing effected.
    expectEveryKeyOnce(bot.effects(), keys, 'bot');
    expect(crm.effects().size).toBe(0);
    expect(await crm.queueDepth()).toBe(bodies.length);

    openCrm();
    await drainEvery(sources);
    expectEveryKeyOnce(crm.effects(), keys, 'crm');
    expectEveryKeyOnce(bot.effects(), keys, 'bot, at the end');
    expect(await bot.deadLetterDepth()).toBe(0);
    expect(await crm.deadLetterDepth()).toBe(0);
  }, 90_000);

  it("leaves the bot's effects alone while every CRM record fails its way into the CRM's DLQ, and only there", async () => {
    const crmAttempts = new Map<string, number>();
    const crashingCrm: WebhookHandlers = {
      onMessage: ({ key }) => {
        crmAttempts.set(key, (crmAttempts.get(key) ?? 0) + 1);
        throw new Error('CRM client crashed');
      },
    };
    pipeline = await createPipeline(
      'isolation-crash',
      {},
      {},
      {
        subscribers: [
          { name: 'bot' },
          {
            name: 'crm',
            handlers: crashingCrm,
            // Five receives, 1-4 s apart (at least 7 s from the first to the fifth), and a 12 s visibility
            // timeout for a record whose return time could not be set.
            settings: {
              maxReceiveCount: 5,
              retryBaseDelaySeconds: 2,
              retryMaxDelaySeconds: 4,
              consumerTimeoutSeconds: 2,
              leaseMarginMs: 1_000,
            },
          },
        ],
      },
    );
    const { bodies, keys } = deliveries(3, 'crash');
    for (const body of bodies) expect((await pipeline.post(body)).statusCode).toBe(200);

    const sources = await startEveryConsumer(pipeline);
    const bot = pipeline.subscriber('bot');
    const crm = pipeline.subscriber('crm');
    await drainSubscriber(sources, 'bot', 20_000);
    // The bot is done while the CRM's records are still being retried.
    expectEveryKeyOnce(bot.effects(), keys, 'bot');
    expect(await crm.queueDepth()).toBeGreaterThan(0);

    const p = pipeline;
    await waitFor(
      async () => (await crm.deadLetterDepth()) === bodies.length,
      60_000,
      () => `the CRM's DLQ holds ${[...crmAttempts.values()]} attempts' records: not all ${bodies.length}`,
    );
    await drainEvery(sources);

    // Every CRM record was received maxReceiveCount times, then moved to the CRM's DLQ, as it was queued.
    expect(Object.fromEntries(crmAttempts)).toEqual(Object.fromEntries(keys.map((key) => [key, 5])));
    const dead = await crm.drainDeadLetters();
    expect(dead.map((message) => message.Body).sort()).toEqual([...bodies].sort());
    expect(crm.effects().size).toBe(0);
    expect(await crm.claims()).toEqual(new Map());
    // The bot's DLQ and the quarantine queue stay empty; the bot effected each key once and no more.
    expect(await bot.deadLetterDepth()).toBe(0);
    expect(await p.drainQuarantine()).toEqual([]);
    expectEveryKeyOnce(bot.effects(), keys, 'bot, at the end');
  }, 120_000);
});
