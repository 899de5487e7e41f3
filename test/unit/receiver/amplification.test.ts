/**
 * No signed body multiplies itself into the queues (docs/receiver.md, "Amplification"): a conversation's part
 * copies what belongs to it only, every subscriber's view of a delivery stays within `OutputBudget.forBody`,
 * and a body past it is quarantined whole (`amplifying-body`), answered 200, before more than the budget is
 * built.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../cli/local/seeded-random.ts';
import { metaJson, metaShapedWamid } from '../../../cli/meta-traffic/webhook-bodies.ts';
import type { SubscriberQueue } from '../../../contract/subscribers.ts';
import {
  AMPLIFICATION_ALLOWANCE_BYTES,
  AMPLIFICATION_FACTOR,
  OutputBudget,
} from '../../../functions/receiver/output-budget.ts';
import { planDelivery } from '../../../functions/receiver/plan-delivery.ts';
import { splitByLane } from '../../../functions/receiver/split-by-lane.ts';
import { splitDelivery } from '../../../functions/receiver/split-delivery.ts';
import { RecordingQueues } from '../../support/recording-queues.ts';
import { deliverSigned } from '../../support/signed-delivery.ts';
import { keysOfBody, keysOfEnvelope } from '../../support/webhooks/event-keys.ts';

const _SECRET = 'secret';
const BOT: SubscriberQueue = {
  name: 'bot',
  queueUrl: 'memory://bot',
  messageQueueUrl: 'memory://bot-messages.fifo',
  messageLaneOrdered: true,
};
const LEGACY: SubscriberQueue = { name: 'legacy', queueUrl: 'memory://legacy' };
const METADATA = { display_phone_number: '15550783881', phone_number_id: '106540352242922' };
const WABA_ID = '102290129340398';

async function deliver(body: string, subscribers: readonly SubscriberQueue[], queue = new RecordingQueues()) {
  const { status, metrics } = await deliverSigned(body, subscribers, queue);
  const stored = (subscriber: string) => (queue.storedFor(subscriber)[0] ?? []) as string[];
  return {
    status,
    queue,
    metrics,
    stored,
    storedBytes: (subscriber: string) =>
      stored(subscriber).reduce((sum, part) => sum + Buffer.byteLength(part, 'utf8'), 0),
  };
}

const bound = (body: string) =>
  AMPLIFICATION_FACTOR * Buffer.byteLength(body) + AMPLIFICATION_ALLOWANCE_BYTES;

const envelopeOf = (value: object) =>
  metaJson({
    object: 'whatsapp_business_account',
    entry: [{ id: WABA_ID, changes: [{ value, field: 'messages' }] }],
  });

/** `count` text messages from distinct customers, Meta's shape with a one-character text. */
function shortMessages(count: number, from = (index: number) => `1650555${String(index).padStart(4, '0')}`) {
  const random = seededRandom(7);
  return Array.from({ length: count }, (_, index) => ({
    from: from(index),
    id: metaShapedWamid(index, random),
    timestamp: String(1_749_416_383 + index),
    type: 'text',
    text: { body: 'k' },
  }));
}

function expectQuarantinedWhole(
  result: Awaited<ReturnType<typeof deliver>>,
  body: string,
  reason = 'amplifying-body',
) {
  expect(result.status).toBe(200);
  expect(result.queue.stored.size).toBe(0);
  expect(result.queue.quarantined).toHaveLength(1);
  expect(result.queue.quarantined[0]?.reason).toBe(reason);
  expect(result.queue.quarantined[0]?.raw.equals(Buffer.from(body))).toBe(true);
  expect(result.metrics.DeliveriesQuarantined).toBe(1);
  expect(result.metrics.DeliveriesAccepted).toBeUndefined();
}

describe('what a conversation part copies', () => {
  it('keeps each conversation to its own contacts and a few anonymous ones, where every part once copied them all', async () => {
    const messages = shortMessages(300);
    const anonymous = Array.from({ length: 2_500 }, (_, index) => ({ profile: { name: `guest ${index}` } }));
    const body = envelopeOf({
      messaging_product: 'whatsapp',
      metadata: METADATA,
      contacts: [...anonymous, ...messages.map(({ from }) => ({ profile: { name: 'c' }, wa_id: from }))],
      messages,
    });
    const result = await deliver(body, [BOT]);
    expect(result.status).toBe(200);
    expect(result.queue.quarantined).toEqual([]);
    expect(result.stored('bot').flatMap((part) => keysOfEnvelope(part))).toEqual(keysOfBody(body));
    expect(result.storedBytes('bot')).toBeLessThanOrEqual(bound(body));
  });

  it('leaves large members it does not know out of every part, and enqueues every message', async () => {
    const messages = shortMessages(300);
    const decoy = 'x'.repeat(100_000);
    const body = metaJson({
      object: 'whatsapp_business_account',
      decoy,
      entry: [
        {
          id: WABA_ID,
          decoy,
          changes: [
            {
              field: 'messages',
              decoy,
              value: { messaging_product: 'whatsapp', metadata: METADATA, decoy, messages },
            },
          ],
        },
      ],
    });
    const result = await deliver(body, [BOT]);
    expect(result.queue.quarantined).toEqual([]);
    expect(result.stored('bot').flatMap((part) => keysOfEnvelope(part))).toEqual(keysOfBody(body));
    // The rest holds no event, so nothing but the messages is stored, each in an envelope of its own.
    expect(result.stored('bot')).toHaveLength(300);
    for (const part of result.stored('bot')) expect(Buffer.byteLength(part)).toBeLessThan(1_000);
  });

  it('stays under 3 times a body of a thousand customers with the shortest messages (why the factor is 4)', async () => {
    const messages = shortMessages(1_000);
    const body = envelopeOf({
      messaging_product: 'whatsapp',
      metadata: METADATA,
      contacts: messages.map(({ from }) => ({ profile: { name: 'k' }, wa_id: from })),
      messages,
      statuses: [{ id: 'wamid.out', status: 'read', timestamp: '1749416383', recipient_id: '16505550000' }],
    });
    const result = await deliver(body, [BOT]);
    expect(result.queue.quarantined).toEqual([]);
    expect(result.stored('bot')).toHaveLength(1_001);
    expect(result.storedBytes('bot') / Buffer.byteLength(body)).toBeLessThan(3);
  });
});

describe('bodies past the bound', () => {
  it('quarantines a body whose metadata every conversation must copy, past the bound', async () => {
    const messages = shortMessages(300);
    const body = envelopeOf({
      messaging_product: 'whatsapp',
      metadata: { ...METADATA, padding: 'p'.repeat(20_000) },
      messages,
    });
    expectQuarantinedWhole(await deliver(body, [BOT]), body);
  });

  it('quarantines contacts that name the phone number of hundreds of conversations', async () => {
    // One phone number, 500 BSUIDs: each conversation's own contacts are all 2000 of that number.
    const messages = shortMessages(500, () => '16505550000').map((message, index) => ({
      ...message,
      from_user_id: `US.${index}`,
    }));
    const contacts = Array.from({ length: 2_000 }, () => ({ profile: { name: 'n' }, wa_id: '16505550000' }));
    const body = envelopeOf({ messaging_product: 'whatsapp', metadata: METADATA, contacts, messages });
    expectQuarantinedWhole(await deliver(body, [BOT]), body);
  });

  it('quarantines a body of more conversations than any Meta sends, however small each', async () => {
    const random = seededRandom(5);
    const messages = Array.from({ length: 3_000 }, (_, index) => ({
      from: `${index}`,
      id: metaShapedWamid(index, random),
    }));
    const body = envelopeOf({ messages });
    // Within the bound in bytes: it is the count of queue messages that is past it.
    const partBytes = splitByLane(body).messageParts.reduce(
      (sum, part) => sum + Buffer.byteLength(part.text),
      0,
    );
    expect(partBytes).toBeLessThan(bound(body));
    expectQuarantinedWhole(await deliver(body, [BOT]), body);
  });

  it('quarantines a 3 MB body whose size split would repeat a member of a message in thousands of parts', async () => {
    // Each part would hold the 1 MiB member and two statuses: 4 GB in all. The budget stops the split after
    // a dozen parts, so this finishes at once where building the parts ran out of memory.
    const maximumBodyBytes = 1024 * 1024 - 256;
    const random = seededRandom(3);
    const statuses = Array.from({ length: 10_000 }, (_, index) => ({
      id: metaShapedWamid(index, random),
      status: 'read',
      timestamp: '1749416383',
      recipient_id: '16505551234',
      padding: 'p'.repeat(100),
    }));
    const body = envelopeOf({
      messaging_product: 'whatsapp',
      metadata: METADATA,
      padding: 'p'.repeat(maximumBodyBytes - 1_000),
      statuses,
    });
    expect(Buffer.byteLength(body)).toBeGreaterThan(2_900_000);
    expectQuarantinedWhole(await deliver(body, [LEGACY], new RecordingQueues(maximumBodyBytes)), body);
  });

  it('lets splitDelivery stop once its budget is spent', () => {
    const statuses = Array.from({ length: 3_000 }, (_, index) => ({ id: `wamid.${index}`, status: 'read' }));
    const body = envelopeOf({ metadata: METADATA, padding: 'p'.repeat(19_000), statuses });
    const budget = OutputBudget.forBody(Buffer.byteLength(body), 20_000);
    const split = splitDelivery(body, 20_000, budget);
    expect(split.exceeded).toBe(true);
    expect(budget.exceeded).toBe(true);
    const built = [...split.parts, ...split.oversized].reduce((sum, part) => sum + part.length, 0);
    expect(built).toBeLessThanOrEqual(budget.maxBytes);
    // Without a budget, the same body is cut into hundreds of parts of 20 KB each.
    expect(splitDelivery(body, 20_000).parts.length).toBeGreaterThan(100);
  });
});

describe('parts that cannot be read back', () => {
  it('refuses the whole body instead of dropping the part (readDelivery refuses such a body first)', () => {
    const deep = `${'['.repeat(1001)}12345678901234567890${']'.repeat(1001)}`;
    const text = `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"9"},"messages":[{"id":"wamid.a","from":"1"}],"statuses":[{"id":"wamid.s","status":"read","recipient_id":"2"}],"deep":${deep}}}]}]}`;
    expect(
      planDelivery(
        { text, bytes: Buffer.byteLength(text), inboundMessages: 1, eventOrigins: [] },
        [BOT],
        1_000_000,
      ),
    ).toEqual({
      ok: false,
      reason: 'unreadable-part',
      detail: expect.any(String),
    });
  });
});
