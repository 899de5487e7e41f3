/**
 * Two subscribers on one webhook (docs/design.md, "7. Subscribers"): the example bot (messages only) and the
 * example CRM, the CRM's backend down for its first attempt at each message. Each is deduplicated and retried
 * on its own: the CRM's retry never runs the bot's effect again, and the CRM effects each event once after
 * its retry.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  envelope,
  inboundMessages,
  messagesChange,
  statusesChange,
  wamidFactory,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import { defineWebhookHandlers } from '../../../functions/consumer/handler-api.ts';
import { webhookHandlers as bot } from '../../../functions/examples/subscribers/bot.ts';
import { webhookHandlers as crm } from '../../../functions/examples/subscribers/crm.ts';
import { createPipeline, type Pipeline, restoreEnvironment } from '../../support/pipeline-fixture.ts';
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

describe('two subscribers, the CRM failing its first attempt', () => {
  it('effects the bot once and never again, and the CRM once after its retry; no DLQ holds anything', async () => {
    const attempts = new Map<string, number>();
    const crmDownOnce = defineWebhookHandlers({
      async onMessage(context) {
        const attempt = (attempts.get(context.key) ?? 0) + 1;
        attempts.set(context.key, attempt);
        if (attempt === 1) throw new Error('CRM answered 503');
        await crm.onMessage(context);
      },
      onStatus: crm.onStatus,
    });
    pipeline = await createPipeline(
      'two-subscribers',
      {},
      {},
      {
        subscribers: [
          { name: 'bot', fields: ['messages'], handlers: bot },
          { name: 'crm', handlers: crmDownOnce },
        ],
      },
    );
    const wamid = wamidFactory('two');
    const messages = inboundMessages(3, `two${Date.now()}`);
    const status = { id: wamid(1), status: 'delivered', recipientId: '16505550001', timestamp: '1749416400' };
    const messageKeys = messages.map((message) => `msg:${message.id}`);
    const statusKey = `st:${status.id}:delivered`;

    const answer = await pipeline.post(envelope([messagesChange(messages), statusesChange([status])]));
    expect(answer.statusCode).toBe(200);
    const sources = await startEveryConsumer(pipeline);
    await drainEvery(sources);

    const botSubscriber = pipeline.subscriber('bot');
    const crmSubscriber = pipeline.subscriber('crm');
    // The bot handles messages only: the status is claimed as done for it, with no effect.
    expectEveryKeyOnce(botSubscriber.effects(), messageKeys, 'bot');
    expectEveryKeyOnce(crmSubscriber.effects(), [...messageKeys, statusKey], 'crm');
    expect(Object.fromEntries(attempts)).toEqual(Object.fromEntries(messageKeys.map((key) => [key, 2])));
    const everyKeyDone = Object.fromEntries([...messageKeys, statusKey].map((key) => [key, 'done']));
    expect(Object.fromEntries(await botSubscriber.claims())).toEqual(everyKeyDone);
    expect(Object.fromEntries(await crmSubscriber.claims())).toEqual(everyKeyDone);
    await expectNothingDeadOrQuarantined(pipeline);

    // Meta retries the same delivery later: both subscribers skip it as a duplicate.
    expect(
      (await pipeline.post(envelope([messagesChange(messages), statusesChange([status])]))).statusCode,
    ).toBe(200);
    await drainEvery(sources);
    expectEveryKeyOnce(botSubscriber.effects(), messageKeys, 'bot after the repeat');
    expectEveryKeyOnce(crmSubscriber.effects(), [...messageKeys, statusKey], 'crm after the repeat');
    expect([...attempts.values()]).toEqual([2, 2, 2]);
  }, 90_000);
});
