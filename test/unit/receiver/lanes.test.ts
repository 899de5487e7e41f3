/** The receiver's lanes (docs/design.md §8): which part of a delivery each subscriber queue stores. */
import { describe, expect, it } from 'vitest';
import {
  envelope,
  inboundMessages,
  messagesChange,
  PHONE_NUMBER_ID,
  statusesChange,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import type { SubscriberQueue } from '../../../contract/subscribers.ts';
import { RecordingQueues } from '../../support/recording-queues.ts';
import { deliverSigned } from '../../support/signed-delivery.ts';
import { keysOfEnvelope } from '../../support/webhooks/event-keys.ts';

const _SECRET = 'secret';
const BOT: SubscriberQueue = {
  name: 'bot',
  queueUrl: 'memory://bot',
  messageQueueUrl: 'memory://bot-messages.fifo',
  messageLaneOrdered: true,
};
const CRM: SubscriberQueue = {
  name: 'crm',
  queueUrl: 'memory://crm',
  messageQueueUrl: 'memory://crm-messages',
  messageLaneOrdered: false,
};
const LEGACY: SubscriberQueue = { name: 'legacy', queueUrl: 'memory://legacy' };
const TEMPLATES: SubscriberQueue = {
  name: 'templates',
  queueUrl: 'memory://templates',
  fields: ['account_update'],
  // Not what the contract resolves for such a subscriber, but it must not get messages even so.
  messageQueueUrl: 'memory://templates-messages',
};

function deliver(
  body: string,
  subscribers: readonly SubscriberQueue[],
  queue = new RecordingQueues(100_000),
) {
  return deliverSigned(body, subscribers, queue);
}

/** What one queue stored of the first delivery: each part's conversation and keys, and the route's ordering. */
function storedIn(queue: RecordingQueues, queueUrl: string) {
  const [delivery] = queue.storedIn.get(queueUrl) ?? [];
  if (delivery === undefined) return undefined;
  return {
    ordered: delivery.ordered,
    parts: delivery.parts.map((part) => ({
      conversation: part.conversationId,
      keys: keysOfEnvelope(part.body),
      eventKeys: part.eventKeys,
    })),
  };
}

const accountUpdate = {
  field: 'account_update',
  value: { phone_number: '15556013472', event: 'PARTNER_ADDED' },
};
const [alice, bob] = inboundMessages(2);
if (alice === undefined || bob === undefined) throw new Error('two messages expected');
const status = {
  id: 'wamid.out1',
  status: 'read',
  recipientId: '16505559999',
  timestamp: '1749416390',
};

describe('receiveWebhook with lanes', () => {
  it('sends a body of statuses only to the status lane, whole', async () => {
    const body = envelope([statusesChange([status])]);
    const { status: code, queue } = await deliver(body, [BOT]);
    expect(code).toBe(200);
    expect(queue.storedIn.get(BOT.messageQueueUrl as string)).toBeUndefined();
    expect(queue.storedIn.get(BOT.queueUrl)?.map(({ parts }) => parts)).toEqual([
      [{ body, fairnessGroup: PHONE_NUMBER_ID }],
    ]);
  });

  it('sends a body of messages only to the message lane', async () => {
    const body = envelope([messagesChange([alice])]);
    const { queue } = await deliver(body, [BOT]);
    expect(queue.storedIn.get(BOT.queueUrl)).toBeUndefined();
    expect(storedIn(queue, BOT.messageQueueUrl as string)).toEqual({
      ordered: true,
      parts: [
        {
          conversation: `${PHONE_NUMBER_ID}:${alice.from}`,
          keys: [`msg:${alice.id}`],
          eventKeys: [`msg:${alice.id}`],
        },
      ],
    });
    expect(queue.storedIn.get(BOT.messageQueueUrl as string)?.[0]?.parts[0]?.body).toBe(body);
  });

  it('gives two conversations two messages with their own conversations, and the statuses to the status lane', async () => {
    const body = envelope([
      messagesChange([alice, bob, { ...alice, id: 'wamid.a2' }]),
      statusesChange([status]),
    ]);
    const { queue } = await deliver(body, [BOT]);
    expect(storedIn(queue, BOT.messageQueueUrl as string)?.parts).toEqual([
      {
        conversation: `${PHONE_NUMBER_ID}:${alice.from}`,
        keys: [`msg:${alice.id}`, 'msg:wamid.a2'],
        eventKeys: [`msg:${alice.id}`, 'msg:wamid.a2'],
      },
      {
        conversation: `${PHONE_NUMBER_ID}:${bob.from}`,
        keys: [`msg:${bob.id}`],
        eventKeys: [`msg:${bob.id}`],
      },
    ]);
    expect(storedIn(queue, BOT.queueUrl)?.parts).toEqual([
      { conversation: undefined, keys: ['st:wamid.out1:read'] },
    ]);
  });

  it('groups a message without `from` under `<phone_number_id>:-`', async () => {
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1',
          changes: [
            {
              field: 'messages',
              value: { metadata: { phone_number_id: PHONE_NUMBER_ID }, messages: [{ id: 'wamid.x' }] },
            },
          ],
        },
      ],
    });
    const { queue } = await deliver(body, [BOT]);
    expect(storedIn(queue, BOT.messageQueueUrl as string)?.parts.map((part) => part.conversation)).toEqual([
      `${PHONE_NUMBER_ID}:-`,
    ]);
  });

  it('sends the body whole, as before lanes, to a subscriber without a message lane', async () => {
    const body = envelope([messagesChange([alice, bob]), statusesChange([status]), accountUpdate]);
    const { queue } = await deliver(body, [LEGACY, BOT]);
    expect(queue.storedIn.get(LEGACY.queueUrl)?.map(({ parts }) => parts)).toEqual([
      [{ body, fairnessGroup: PHONE_NUMBER_ID }],
    ]);
    expect(storedIn(queue, BOT.messageQueueUrl as string)?.parts).toHaveLength(2);
    expect(storedIn(queue, BOT.queueUrl)?.parts).toEqual([
      {
        conversation: undefined,
        keys: ['st:wamid.out1:read', 'account_update:102290129340398:-:PARTNER_ADDED:-'],
      },
    ]);
  });

  it('sends an unordered lane its parts without FIFO ordering, and keeps field filters', async () => {
    const body = envelope([messagesChange([alice]), accountUpdate]);
    const { queue } = await deliver(body, [CRM, TEMPLATES]);
    expect(storedIn(queue, CRM.messageQueueUrl as string)?.ordered).toBe(false);
    // Wanting only account_update: never the message parts, and the rest.
    expect(queue.storedIn.get(TEMPLATES.messageQueueUrl as string)).toBeUndefined();
    expect(storedIn(queue, TEMPLATES.queueUrl)?.parts.map((part) => part.keys)).toEqual([
      ['account_update:102290129340398:-:PARTNER_ADDED:-'],
    ]);
  });

  it('sends no rest to a subscriber with a lane that wants none of its fields', async () => {
    const bot = { ...BOT, fields: ['messages'] };
    const { queue } = await deliver(envelope([messagesChange([alice]), accountUpdate]), [bot]);
    expect(queue.storedIn.get(bot.queueUrl)).toBeUndefined();
    expect(storedIn(queue, bot.messageQueueUrl as string)?.parts).toHaveLength(1);
  });

  it('splits a conversation part above the message size, each part with its own keys', async () => {
    const many = Array.from({ length: 40 }, (_, index) => ({
      ...alice,
      id: `wamid.big${index}`,
      text: 'x'.repeat(200),
    }));
    const body = envelope([messagesChange(many), statusesChange([status])]);
    const { status: code, queue } = await deliver(body, [BOT], new RecordingQueues(3_000));
    expect(code).toBe(200);
    const parts = storedIn(queue, BOT.messageQueueUrl as string)?.parts ?? [];
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      expect(part.conversation).toBe(`${PHONE_NUMBER_ID}:${alice.from}`);
      expect(part.eventKeys).toEqual(part.keys);
    }
    expect(parts.flatMap((part) => part.keys)).toEqual(many.map(({ id }) => `msg:${id}`));
    expect(queue.quarantined).toEqual([]);
  });

  it('quarantines, never half-enqueues, a body nested past the lossless limit with a number JS cannot hold', async () => {
    // Its rest (the status) could be cut from it but not read back: it was dropped, and the answer 200.
    const deep = `${'['.repeat(1001)}12345678901234567890${']'.repeat(1001)}`;
    const body = `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"9"},"messages":[{"id":"wamid.a","from":"1"}],"statuses":[{"id":"wamid.s","status":"read","recipient_id":"2"}],"deep":${deep}}}]}]}`;
    const { status: code, queue, metrics } = await deliver(body, [BOT]);
    expect(code).toBe(200);
    expect(queue.stored.size).toBe(0);
    expect(queue.quarantined.map(({ reason, raw }) => ({ reason, raw: raw.toString('utf8') }))).toEqual([
      { reason: 'invalid-json', raw: body },
    ]);
    expect(metrics.DeliveriesQuarantined).toBe(1);
  });

  it('sends a rest holding only a change of an unknown field to the subscribers that want every field', async () => {
    const unknown = { field: 'brand_new_field', value: { anything: true } };
    const body = envelope([messagesChange([alice]), unknown]);
    const bot = { ...BOT, fields: ['messages'] };
    const { queue } = await deliver(body, [CRM, bot]);
    expect(storedIn(queue, CRM.queueUrl)?.parts).toEqual([{ conversation: undefined, keys: [] }]);
    const rest = queue.storedIn.get(CRM.queueUrl)?.[0]?.parts[0]?.body ?? '';
    expect(JSON.parse(rest).entry[0].changes[1]).toEqual(unknown);
    // A subscriber that names its fields never asked for it.
    expect(queue.storedIn.get(bot.queueUrl)).toBeUndefined();
  });

  it('sends a rest holding only a status without an id to the status lane, for its consumer to quarantine', async () => {
    const idless = {
      field: 'messages',
      value: { metadata: { phone_number_id: PHONE_NUMBER_ID }, statuses: [{ status: 'read' }] },
    };
    const { queue } = await deliver(envelope([messagesChange([alice]), idless]), [BOT]);
    expect(storedIn(queue, BOT.queueUrl)?.parts).toEqual([{ conversation: undefined, keys: [] }]);
  });

  it('answers 503 when one lane of a subscriber is not stored', async () => {
    const body = envelope([messagesChange([alice]), statusesChange([status])]);
    const { status: code, metrics } = await deliver(
      body,
      [BOT, LEGACY],
      new RecordingQueues(100_000, { unavailable: ['bot'] }),
    );
    expect(code).toBe(503);
    expect(metrics.EnqueueFailures).toBe(1);
  });
});
