/** The orchestration with an in-memory queue port: the paths that are awkward to reach through SQS mocks. */
import { describe, expect, it } from 'vitest';
import {
  envelope,
  type InboundMessage,
  inboundMessages,
  messagesBody,
  messagesChange,
  privateMessagesBody,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import type { SubscriberQueue } from '../../../contract/subscribers.ts';
import { WebhookSecretsUnavailableError } from '../../../functions/receiver/errors.ts';
import {
  type ReceiverDependencies,
  receiveWebhook,
  type WebhookRequest,
} from '../../../functions/receiver/receive-webhook.ts';
import { signBody } from '../../../functions/receiver/signature.ts';
import type { WebhookSecretsSource } from '../../../functions/receiver/webhook-secrets.ts';
import { DEFAULT_SUBSCRIBERS, RecordingQueues } from '../../support/recording-queues.ts';
import { keysOfEnvelope } from '../../support/webhooks/event-keys.ts';

const SECRET = 'secret';

function setup(
  queue: RecordingQueues,
  secrets?: WebhookSecretsSource,
  subscribers: readonly SubscriberQueue[] = DEFAULT_SUBSCRIBERS,
) {
  const metrics: Record<string, number> = {};
  const logs: Record<string, unknown>[] = [];
  const at = (level: string) => (message: string, fields: Record<string, unknown>) => {
    logs.push({ level, message, ...fields });
  };
  const deps: ReceiverDependencies = {
    secrets: secrets ?? { origin: 'test', load: async () => ({ appSecrets: [SECRET], verifyToken: 'tok' }) },
    subscribers,
    fanOut: queue,
    quarantine: queue,
    metrics: {
      addMetric: (name, _unit, value) => {
        metrics[name] = (metrics[name] ?? 0) + value;
      },
    },
    logger: { debug: at('DEBUG'), info: at('INFO'), warn: at('WARN'), error: at('ERROR') },
    clock: () => Date.UTC(2026, 0, 1),
  };
  return { deps, metrics, logs };
}

function post(body: string | Buffer, secret = SECRET): WebhookRequest {
  return {
    method: 'POST',
    path: '/webhook',
    query: {},
    headers: { 'x-hub-signature-256': signBody(body, secret) },
    body,
    requestId: 'req-9',
  };
}

describe('receiveWebhook', () => {
  it('enqueues a body that fits as its exact text, and one byte more is split', async () => {
    const body = privateMessagesBody(10);
    const bytes = Buffer.byteLength(body);
    const fits = new RecordingQueues(bytes);
    await receiveWebhook(post(body), setup(fits).deps);
    expect(fits.storedFor('default')).toEqual([[body]]);

    const tooBig = new RecordingQueues(bytes - 1);
    await receiveWebhook(post(body), setup(tooBig).deps);
    const [parts] = tooBig.storedFor('default');
    expect(parts?.length).toBeGreaterThan(1);
    expect(parts?.flatMap(keysOfEnvelope)).toEqual(keysOfEnvelope(body));
  });

  it('stamps queue messages with the delivery id, the arrival time and a retry deadline after it', async () => {
    const queue = new RecordingQueues(10_000);
    await receiveWebhook(post('not json'), setup(queue).deps);
    expect(queue.quarantined[0]?.meta).toEqual({
      deliveryId: 'req-9',
      receivedAt: '2026-01-01T00:00:00.000Z',
      retryDeadline: Date.UTC(2026, 0, 1) + 3_000,
    });
  });

  it('counts the retry budget from arrival, before the secret read, so a slow read cannot add to it', async () => {
    const queue = new RecordingQueues(10_000);
    let clock = Date.UTC(2026, 0, 1);
    const slowSecrets: WebhookSecretsSource = {
      origin: 'test',
      load: async () => {
        clock += 2_500;
        return { appSecrets: [SECRET], verifyToken: 'tok' };
      },
    };
    const { deps } = setup(queue, slowSecrets);
    await receiveWebhook(post('not json'), { ...deps, clock: () => clock });
    expect(queue.quarantined[0]?.meta.retryDeadline).toBe(Date.UTC(2026, 0, 1) + 3_000);
  });

  it('refuses a signed POST with 401 while no app secret is configured, and logs it as an error', async () => {
    const queue = new RecordingQueues(100_000);
    const tokenOnly: WebhookSecretsSource = {
      origin: 'test',
      load: async () => ({ appSecrets: [], verifyToken: 'tok' }),
    };
    const { deps, metrics, logs } = setup(queue, tokenOnly);
    expect((await receiveWebhook(post(privateMessagesBody(1)), deps)).statusCode).toBe(401);
    expect((await receiveWebhook(post(privateMessagesBody(1), ''), deps)).statusCode).toBe(401);
    expect(queue.touched).toBe(false);
    expect(metrics).toEqual({ SignatureRejected: 2 });
    expect(logs).toContainEqual(
      expect.objectContaining({ message: expect.stringContaining('no app secret') }),
    );

    const handshake = await receiveWebhook(
      {
        ...post(''),
        method: 'GET',
        query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'tok', 'hub.challenge': 'c' },
      },
      deps,
    );
    expect(handshake).toMatchObject({ statusCode: 200, body: 'c' });
  });

  it('quarantines a part the queue refused as the sender fault, and still answers 200', async () => {
    const queue = new RecordingQueues(100_000, { refuse: { default: [0] } });
    const { deps, metrics } = setup(queue);
    const body = privateMessagesBody(2);
    expect((await receiveWebhook(post(body), deps)).statusCode).toBe(200);
    expect(queue.quarantined.map(({ raw, reason }) => [raw.toString('utf8'), reason])).toEqual([
      [body, 'rejected-by-queue'],
    ]);
    expect(metrics).toMatchObject({ DeliveriesAccepted: 1, DeliveriesQuarantined: 1, EventsPerDelivery: 2 });
  });

  it('answers 503 and counts EnqueueFailures when a part cannot be stored', async () => {
    const { deps, metrics } = setup(new RecordingQueues(100_000, { unavailable: ['default'] }));
    expect((await receiveWebhook(post(privateMessagesBody(2)), deps)).statusCode).toBe(503);
    expect(metrics).toEqual({ EnqueueFailures: 1 });
  });

  it('writes U+FFFE and U+FFFF, which SQS refuses, as JSON escapes without changing any key', async () => {
    const body = privateMessagesBody(2).replace('wamid.', 'wamid.\uFFFE\uFFFF');
    const queue = new RecordingQueues(100_000);
    expect((await receiveWebhook(post(body), setup(queue).deps)).statusCode).toBe(200);
    const sent = queue.storedFor('default')[0]?.[0] ?? '';
    expect(sent).not.toMatch(/[\uFFFE\uFFFF]/);
    expect(sent).toContain('wamid.\\ufffe\\uffff');
    expect(keysOfEnvelope(sent)).toEqual(keysOfEnvelope(body));
  });

  it('acknowledges a signed empty body without writing anything (SQS refuses empty messages)', async () => {
    const queue = new RecordingQueues(100_000);
    const { deps, metrics, logs } = setup(queue);
    expect((await receiveWebhook(post(''), deps)).statusCode).toBe(200);
    expect(queue.touched).toBe(false);
    expect(metrics).toEqual({});
    expect(JSON.stringify(logs)).toContain('empty body');
  });

  it('refuses an unsigned empty body', async () => {
    const { deps } = setup(new RecordingQueues(100_000));
    expect((await receiveWebhook({ ...post(''), headers: {} }, deps)).statusCode).toBe(401);
  });

  it('answers 503 when the secrets cannot be read, before looking at the body', async () => {
    const queue = new RecordingQueues(100_000);
    const unavailable = {
      origin: 'test',
      load: async () => {
        throw new WebhookSecretsUnavailableError('throttled');
      },
    };
    expect(
      (await receiveWebhook(post(privateMessagesBody(1)), setup(queue, unavailable).deps)).statusCode,
    ).toBe(503);
    expect(queue.touched).toBe(false);
  });

  it('counts events of every field, including those of unknown fields as none', async () => {
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1',
          time: 2,
          changes: [
            {
              field: 'calls',
              value: {
                calls: [
                  { id: 'c1', event: 'connect', timestamp: '3' },
                  { id: 'c2', event: 'terminate', timestamp: '4' },
                ],
              },
            },
            { field: 'a_field_from_the_future', value: {} },
          ],
        },
      ],
    });
    const { deps, metrics, logs } = setup(new RecordingQueues(100_000));
    expect((await receiveWebhook(post(body), deps)).statusCode).toBe(200);
    expect(metrics).toMatchObject({ DeliveriesAccepted: 1, EventsPerDelivery: 2 });
    expect(JSON.stringify(logs)).toContain('a_field_from_the_future');
  });
});

describe('receiveWebhook, fanned out to subscribers', () => {
  const BOT: SubscriberQueue = { name: 'bot', queueUrl: 'memory://bot', fields: ['messages'] };
  const CRM: SubscriberQueue = { name: 'crm', queueUrl: 'memory://crm' };
  const TEMPLATES: SubscriberQueue = {
    name: 'templates',
    queueUrl: 'memory://templates',
    fields: ['message_template_status_update', 'account_update'],
  };
  const accountUpdate = {
    field: 'account_update',
    value: { phone_number: '15556013472', event: 'PARTNER_ADDED' },
  };
  const messages = envelope([messagesChange(inboundMessages(2))]);
  const accountOnly = envelope([accountUpdate]);
  const mixed = envelope([messagesChange(inboundMessages(1)), accountUpdate]);

  it('stores the same parts in every subscriber queue that wants the delivery, and logs who got it', async () => {
    const queue = new RecordingQueues(100_000);
    const { deps, metrics, logs } = setup(queue, undefined, [BOT, CRM, TEMPLATES]);
    expect((await receiveWebhook(post(mixed), deps)).statusCode).toBe(200);
    for (const name of ['bot', 'crm', 'templates']) expect(queue.storedFor(name), name).toEqual([[mixed]]);
    expect(queue.quarantined).toEqual([]);
    expect(metrics).toEqual({ DeliveriesAccepted: 1, EventsPerDelivery: 2 });
    expect(logs).toContainEqual({
      level: 'INFO',
      message: 'Delivery accepted',
      requestId: 'req-9',
      events: 2,
      fields: ['messages', 'account_update'],
      subscribers: ['bot', 'crm', 'templates'],
    });
  });

  it('logs at INFO what follows the delivery (its id, events, fields, subscribers), how it was cut up at DEBUG', async () => {
    const queue = new RecordingQueues(100_000);
    const { deps, logs } = setup(queue, undefined, [BOT, CRM, TEMPLATES]);
    await receiveWebhook(post(mixed), deps);
    expect(logs.filter(({ level }) => level === 'INFO').map(({ message }) => message)).toEqual([
      'Delivery accepted',
    ]);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'DEBUG',
        message: 'Delivery accepted, in detail',
        requestId: 'req-9',
        parts: 1,
        quarantined: 0,
        secretIndex: 0,
        subscriberCount: 3,
      }),
    );
    const info = logs.find(({ level }) => level === 'INFO') ?? {};
    for (const moved of ['bodyBytes', 'parts', 'quarantined', 'secretIndex', 'subscriberCount']) {
      expect(info).not.toHaveProperty(moved);
    }
  });

  it('logs at INFO which secret matched when it is not the first, for retiring an old one', async () => {
    const rotating: WebhookSecretsSource = {
      origin: 'test',
      load: async () => ({ appSecrets: ['new-secret', SECRET], verifyToken: 'tok' }),
    };
    const { deps, logs } = setup(new RecordingQueues(100_000), rotating);
    await receiveWebhook(post(messages), deps);
    await receiveWebhook(post(messages, 'new-secret'), deps);
    expect(logs.filter(({ level }) => level === 'INFO').map((line) => line.secretIndex ?? 'first')).toEqual([
      1,
      'first',
    ]);
  });

  it('leaves a subscriber with fields out of a delivery holding none of its fields', async () => {
    const queue = new RecordingQueues(100_000);
    const { deps, logs } = setup(queue, undefined, [BOT, CRM, TEMPLATES]);
    expect((await receiveWebhook(post(messages), deps)).statusCode).toBe(200);
    expect((await receiveWebhook(post(accountOnly), deps)).statusCode).toBe(200);
    expect(queue.storedFor('bot')).toEqual([[messages]]);
    expect(queue.storedFor('templates')).toEqual([[accountOnly]]);
    expect(queue.storedFor('crm')).toEqual([[messages], [accountOnly]]);
    expect(
      logs.filter(({ message }) => message === 'Delivery accepted').map((log) => log.subscribers),
    ).toEqual([
      ['bot', 'crm'],
      ['crm', 'templates'],
    ]);
  });

  it('acknowledges a delivery no subscriber wants without storing it, counted and logged without content', async () => {
    const queue = new RecordingQueues(100_000);
    const { deps, metrics, logs } = setup(queue, undefined, [BOT]);
    const body = envelope([
      accountUpdate,
      { field: 'account_update', value: { phone_number: '447700900123', event: 'ACCOUNT_VIOLATION' } },
    ]);
    expect((await receiveWebhook(post(body), deps)).statusCode).toBe(200);
    expect(queue.touched).toBe(false);
    expect(metrics).toEqual({ DeliveriesUnrouted: 1 });
    expect(logs).toEqual([
      expect.objectContaining({
        message: 'Delivery wanted by no subscriber: acknowledged, not enqueued',
        fields: ['account_update'],
        events: 2,
      }),
    ]);
    expect(JSON.stringify(logs)).not.toContain('447700900123');
  });

  it('routes a delivery without events (only an unknown field) to subscribers without fields only', async () => {
    const queue = new RecordingQueues(100_000);
    const { deps, metrics } = setup(queue, undefined, [BOT, CRM]);
    const body = envelope([{ field: 'a_field_from_the_future', value: {} }]);
    expect((await receiveWebhook(post(body), deps)).statusCode).toBe(200);
    expect(queue.storedFor('crm')).toEqual([[body]]);
    expect(queue.storedFor('bot')).toEqual([]);
    expect(metrics).toMatchObject({ DeliveriesAccepted: 1, EventsPerDelivery: 0 });
  });

  it('answers 503 naming the subscriber whose queue stays unavailable, after the others stored it', async () => {
    const queue = new RecordingQueues(100_000, { unavailable: ['crm'] });
    const { deps, metrics, logs } = setup(queue, undefined, [BOT, CRM]);
    expect((await receiveWebhook(post(messages), deps)).statusCode).toBe(503);
    // The bot has it; Meta's retry reaches the bot again, whose claims skip it as a duplicate.
    expect(queue.storedFor('bot')).toEqual([[messages]]);
    expect(queue.storedFor('crm')).toEqual([]);
    expect(metrics).toEqual({ EnqueueFailures: 1 });
    expect(logs).toContainEqual(
      expect.objectContaining({
        message: 'Delivery not stored: answering 503 so that Meta retries',
        step: 'enqueue',
        subscribers: ['crm'],
        problem: expect.stringContaining('subscriber crm'),
      }),
    );
  });

  it('does not ask an unavailable queue of a subscriber that does not want the delivery', async () => {
    const queue = new RecordingQueues(100_000, { unavailable: ['templates'] });
    const { deps } = setup(queue, undefined, [BOT, TEMPLATES]);
    expect((await receiveWebhook(post(messages), deps)).statusCode).toBe(200);
  });

  it('quarantines a part refused by several subscriber queues once, naming them in the log', async () => {
    const queue = new RecordingQueues(100_000, { refuse: { bot: [0], crm: [0] } });
    const { deps, metrics, logs } = setup(queue, undefined, [BOT, CRM, TEMPLATES]);
    expect((await receiveWebhook(post(mixed), deps)).statusCode).toBe(200);
    expect(queue.quarantined.map(({ raw, reason }) => [raw.toString('utf8'), reason])).toEqual([
      [mixed, 'rejected-by-queue'],
    ]);
    expect(queue.storedFor('templates')).toEqual([[mixed]]);
    expect(metrics).toMatchObject({ DeliveriesAccepted: 1, DeliveriesQuarantined: 1 });
    expect(logs).toContainEqual(
      expect.objectContaining({
        message: 'Part refused by the queue, quarantined',
        part: 0,
        subscribers: ['bot', 'crm'],
        codes: ['InvalidMessageContents'],
      }),
    );
  });

  it('quarantines a body that is not an envelope once, whatever the number of subscribers', async () => {
    const queue = new RecordingQueues(100_000);
    const { deps, metrics } = setup(queue, undefined, [BOT, CRM, TEMPLATES]);
    expect((await receiveWebhook(post('{"object":"page"}'), deps)).statusCode).toBe(200);
    expect(queue.quarantined.map(({ reason }) => reason)).toEqual(['not-whatsapp-envelope']);
    expect(queue.stored.size).toBe(0);
    expect(metrics).toEqual({ DeliveriesQuarantined: 1 });
  });

  it("tells the sender in the 200's body that the body was quarantined and why, never quoting it", async () => {
    const { deps } = setup(new RecordingQueues(100_000));
    const notJson = await receiveWebhook(post('{"secret text": "hello'), deps);
    expect(notJson).toMatchObject({ statusCode: 200, body: 'quarantined: invalid-json' });
    const notEnvelope = await receiveWebhook(post('{"object":"page"}'), deps);
    expect(notEnvelope).toMatchObject({ statusCode: 200, body: 'quarantined: not-whatsapp-envelope' });
    const accepted = await receiveWebhook(post(envelope([messagesChange(inboundMessages(1))])), deps);
    expect(accepted).toMatchObject({ statusCode: 200, body: '' });
  });

  it('quarantines an event too large for a queue message once, and sends the rest to every subscriber', async () => {
    const small = inboundMessages(3);
    const [big] = inboundMessages(1, 'big');
    const body = envelope([
      messagesChange([...small, { ...(big as InboundMessage), text: 'x'.repeat(3_000) }]),
    ]);
    const queue = new RecordingQueues(2_000);
    const { deps } = setup(queue, undefined, [BOT, CRM]);
    expect((await receiveWebhook(post(body), deps)).statusCode).toBe(200);
    expect(queue.quarantined.map(({ reason }) => reason)).toEqual(['event-too-large']);
    const [botParts] = queue.storedFor('bot');
    expect(queue.storedFor('crm')).toEqual([botParts]);
    expect(botParts?.flatMap(keysOfEnvelope)).toEqual(keysOfEnvelope(messagesBody(small)));
  });
});
