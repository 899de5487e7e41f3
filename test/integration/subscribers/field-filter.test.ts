/**
 * Field filters (docs/design.md, "7. Subscribers"): a subscriber sees only the webhook fields it asked for.
 * The receiver keeps the deliveries holding none of them away from its queue; in a delivery it does get, the
 * events of other fields are skipped by its consumer without a claim (no item in the table) and never reach
 * its handlers.
 *
 * Statuses arrive under the `messages` field, as Meta sends them: a `messages` subscriber gets them.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  inboundMessages,
  messagesChange,
  statusesBody,
  wamidFactory,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import type { WebhookEventContext, WebhookHandlers } from '../../../functions/consumer/handler-api.ts';
import { createPipeline, type Pipeline, restoreEnvironment } from '../../support/pipeline-fixture.ts';
import {
  drainEvery,
  expectEveryKeyOnce,
  expectNothingDeadOrQuarantined,
  startEveryConsumer,
} from '../../support/subscriber-checks.ts';

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/webhooks/${name}`, import.meta.url), 'utf8');
const fixtureKeys = (name: string) =>
  fixture(name)
    .split('\n')
    .filter((line) => line !== '');

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});
afterAll(() => restoreEnvironment());

/** Handlers for every kind that remember the fields they were called with. */
function recordingFields(fields: string[]): WebhookHandlers {
  const seen = ({ field }: WebhookEventContext) => void fields.push(field);
  return { onMessage: seen, onStatus: seen, onError: seen, onManagementEvent: seen };
}

async function threeSubscribers(label: string) {
  const seen = { bot: [] as string[], ops: [] as string[], crm: [] as string[] };
  pipeline = await createPipeline(
    label,
    {},
    {},
    {
      subscribers: [
        { name: 'bot', fields: ['messages'], handlers: recordingFields(seen.bot) },
        { name: 'ops', fields: ['account_update'], handlers: recordingFields(seen.ops) },
        { name: 'crm', handlers: recordingFields(seen.crm) },
      ],
    },
  );
  return { pipeline, seen };
}

describe('a subscriber with a field filter', () => {
  it("never has a delivery of other fields in its queue, and effects only its fields' events", async () => {
    const { pipeline, seen } = await threeSubscribers('field-filter-routing');
    const wamid = wamidFactory('filter');
    const status = { id: wamid(1), status: 'read', recipientId: '16505550001', timestamp: '1749416400' };
    const statusKey = `st:${status.id}:read`;

    for (const body of [
      fixture('message_template_status_update.json'),
      fixture('account_update.json'),
      statusesBody([status]),
    ]) {
      expect((await pipeline.post(body)).statusCode).toBe(200);
    }

    // Before any consumer runs: what each queue was given.
    expect(await pipeline.subscriber('bot').queueDepth()).toBe(1);
    expect(await pipeline.subscriber('ops').queueDepth()).toBe(1);
    expect(await pipeline.subscriber('crm').queueDepth()).toBe(3);

    await drainEvery(await startEveryConsumer(pipeline));
    const templateKeys = fixtureKeys('message_template_status_update.keys');
    const accountKeys = fixtureKeys('account_update.keys');
    expectEveryKeyOnce(pipeline.subscriber('bot').effects(), [statusKey], 'bot');
    expectEveryKeyOnce(pipeline.subscriber('ops').effects(), accountKeys, 'ops');
    expectEveryKeyOnce(
      pipeline.subscriber('crm').effects(),
      [...templateKeys, ...accountKeys, statusKey],
      'crm',
    );
    expect(new Set(seen.bot)).toEqual(new Set(['messages']));
    expect(new Set(seen.ops)).toEqual(new Set(['account_update']));
    await expectNothingDeadOrQuarantined(pipeline);
  }, 90_000);

  it('skips the other fields of a mixed delivery without claiming them', async () => {
    const { pipeline, seen } = await threeSubscribers('field-filter-mixed');
    const messages = inboundMessages(2, `mixed${Date.now()}`);
    const messageKeys = messages.map((message) => `msg:${message.id}`);
    const accountKeys = fixtureKeys('account_update.keys');
    // The account_update fixture with a messages change added to its entry: one delivery, two fields.
    const mixed = JSON.parse(fixture('account_update.json')) as { entry: { changes: object[] }[] };
    mixed.entry[0]?.changes.unshift(messagesChange(messages));

    expect((await pipeline.post(JSON.stringify(mixed))).statusCode).toBe(200);
    for (const name of ['bot', 'ops', 'crm']) expect(await pipeline.subscriber(name).queueDepth()).toBe(1);
    await drainEvery(await startEveryConsumer(pipeline));

    expectEveryKeyOnce(pipeline.subscriber('bot').effects(), messageKeys, 'bot');
    expectEveryKeyOnce(pipeline.subscriber('ops').effects(), accountKeys, 'ops');
    expectEveryKeyOnce(pipeline.subscriber('crm').effects(), [...messageKeys, ...accountKeys], 'crm');
    expect(new Set(seen.bot)).toEqual(new Set(['messages']));
    expect(new Set(seen.ops)).toEqual(new Set(['account_update']));

    // The table holds a claim for what each subscriber wanted, and nothing for the events it skipped.
    const done = (keys: readonly string[]) => Object.fromEntries(keys.map((key) => [key, 'done']));
    const claims = await pipeline.claims();
    expect(Object.fromEntries(claims)).toEqual({
      ...done(messageKeys.map((key) => `bot#${key}`)),
      ...done(accountKeys.map((key) => `ops#${key}`)),
      ...done([...messageKeys, ...accountKeys].map((key) => `crm#${key}`)),
    });
    await expectNothingDeadOrQuarantined(pipeline);
  }, 90_000);
});
