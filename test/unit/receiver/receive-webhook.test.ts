/** The orchestration with an in-memory queue port: the paths that are awkward to reach through SQS mocks. */
import { describe, expect, it } from 'vitest';
import type {
  DeliveryMeta,
  DeliveryQueuePort,
  EnqueueResult,
  QuarantineReason,
} from '../../../functions/queue/delivery-queue-port.ts';
import { EnqueueFailedError } from '../../../functions/queue/errors.ts';
import { WebhookSecretsUnavailableError } from '../../../functions/receiver/errors.ts';
import {
  type ReceiverDependencies,
  receiveWebhook,
  type WebhookRequest,
} from '../../../functions/receiver/receive-webhook.ts';
import { signBody } from '../../../functions/receiver/signature.ts';
import type { WebhookSecretsSource } from '../../../functions/receiver/webhook-secrets.ts';
import { keysOfEnvelope } from '../../support/webhooks/event-keys.ts';
import { privateMessagesBody } from '../../support/webhooks/webhook-bodies.ts';

const SECRET = 'secret';

class MemoryQueue implements DeliveryQueuePort {
  readonly enqueued: string[][] = [];
  readonly quarantined: { raw: Buffer; reason: QuarantineReason; meta: DeliveryMeta }[] = [];
  constructor(
    readonly maximumBodyBytes: number,
    private readonly behaviour: { reject?: number[]; failEnqueue?: boolean } = {},
  ) {}
  async enqueue(parts: readonly string[]): Promise<EnqueueResult> {
    if (this.behaviour.failEnqueue)
      throw new EnqueueFailedError('delivery', parts.length, parts.length, 'InternalError');
    this.enqueued.push([...parts]);
    return {
      rejected: (this.behaviour.reject ?? []).map((part) => ({ part, code: 'InvalidMessageContents' })),
    };
  }
  async quarantine(raw: Uint8Array, reason: QuarantineReason, meta: DeliveryMeta) {
    this.quarantined.push({ raw: Buffer.from(raw), reason, meta });
    return { messages: 1 };
  }
}

function setup(queue: MemoryQueue, secrets?: WebhookSecretsSource) {
  const metrics: Record<string, number> = {};
  const logs: unknown[] = [];
  const log = (message: string, fields: Record<string, unknown>) => {
    logs.push({ message, ...fields });
  };
  const deps: ReceiverDependencies = {
    secrets: secrets ?? { origin: 'test', load: async () => ({ appSecrets: [SECRET], verifyToken: 'tok' }) },
    queue,
    metrics: {
      addMetric: (name, _unit, value) => {
        metrics[name] = (metrics[name] ?? 0) + value;
      },
    },
    logger: { info: log, warn: log, error: log },
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
    const fits = new MemoryQueue(bytes);
    await receiveWebhook(post(body), setup(fits).deps);
    expect(fits.enqueued).toEqual([[body]]);

    const tooBig = new MemoryQueue(bytes - 1);
    await receiveWebhook(post(body), setup(tooBig).deps);
    expect(tooBig.enqueued[0]?.length).toBeGreaterThan(1);
    expect(tooBig.enqueued[0]?.flatMap(keysOfEnvelope)).toEqual(keysOfEnvelope(body));
  });

  it('stamps queue messages with the delivery id, the arrival time and a retry deadline after it', async () => {
    const queue = new MemoryQueue(10_000);
    await receiveWebhook(post('not json'), setup(queue).deps);
    expect(queue.quarantined[0]?.meta).toEqual({
      deliveryId: 'req-9',
      receivedAt: '2026-01-01T00:00:00.000Z',
      retryDeadline: Date.UTC(2026, 0, 1) + 3_000,
    });
  });

  it('counts the retry budget from arrival, before the secret read, so a slow read cannot add to it', async () => {
    const queue = new MemoryQueue(10_000);
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
    const queue = new MemoryQueue(100_000);
    const tokenOnly: WebhookSecretsSource = {
      origin: 'test',
      load: async () => ({ appSecrets: [], verifyToken: 'tok' }),
    };
    const { deps, metrics, logs } = setup(queue, tokenOnly);
    expect((await receiveWebhook(post(privateMessagesBody(1)), deps)).statusCode).toBe(401);
    expect((await receiveWebhook(post(privateMessagesBody(1), ''), deps)).statusCode).toBe(401);
    expect(queue.enqueued).toEqual([]);
    expect(queue.quarantined).toEqual([]);
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
    const queue = new MemoryQueue(100_000, { reject: [0] });
    const { deps, metrics } = setup(queue);
    const body = privateMessagesBody(2);
    expect((await receiveWebhook(post(body), deps)).statusCode).toBe(200);
    expect(queue.quarantined.map(({ raw, reason }) => [raw.toString('utf8'), reason])).toEqual([
      [body, 'rejected-by-queue'],
    ]);
    expect(metrics).toMatchObject({ DeliveriesAccepted: 1, DeliveriesQuarantined: 1, EventsPerDelivery: 2 });
  });

  it('answers 503 and counts EnqueueFailures when a part cannot be stored', async () => {
    const { deps, metrics } = setup(new MemoryQueue(100_000, { failEnqueue: true }));
    expect((await receiveWebhook(post(privateMessagesBody(2)), deps)).statusCode).toBe(503);
    expect(metrics).toEqual({ EnqueueFailures: 1 });
  });

  it('writes U+FFFE and U+FFFF, which SQS refuses, as JSON escapes without changing any key', async () => {
    const body = privateMessagesBody(2).replace('wamid.', 'wamid.\uFFFE\uFFFF');
    const queue = new MemoryQueue(100_000);
    expect((await receiveWebhook(post(body), setup(queue).deps)).statusCode).toBe(200);
    const sent = queue.enqueued[0]?.[0] ?? '';
    expect(sent).not.toMatch(/[\uFFFE\uFFFF]/);
    expect(sent).toContain('wamid.\\ufffe\\uffff');
    expect(keysOfEnvelope(sent)).toEqual(keysOfEnvelope(body));
  });

  it('acknowledges a signed empty body without writing anything (SQS refuses empty messages)', async () => {
    const queue = new MemoryQueue(100_000);
    const { deps, metrics, logs } = setup(queue);
    expect((await receiveWebhook(post(''), deps)).statusCode).toBe(200);
    expect(queue.enqueued).toEqual([]);
    expect(queue.quarantined).toEqual([]);
    expect(metrics).toEqual({});
    expect(JSON.stringify(logs)).toContain('empty body');
  });

  it('refuses an unsigned empty body', async () => {
    const { deps } = setup(new MemoryQueue(100_000));
    expect((await receiveWebhook({ ...post(''), headers: {} }, deps)).statusCode).toBe(401);
  });

  it('answers 503 when the secrets cannot be read, before looking at the body', async () => {
    const queue = new MemoryQueue(100_000);
    const unavailable = {
      origin: 'test',
      load: async () => {
        throw new WebhookSecretsUnavailableError('throttled');
      },
    };
    expect(
      (await receiveWebhook(post(privateMessagesBody(1)), setup(queue, unavailable).deps)).statusCode,
    ).toBe(503);
    expect(queue.enqueued).toEqual([]);
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
    const { deps, metrics, logs } = setup(new MemoryQueue(100_000));
    expect((await receiveWebhook(post(body), deps)).statusCode).toBe(200);
    expect(metrics).toMatchObject({ DeliveriesAccepted: 1, EventsPerDelivery: 2 });
    expect(JSON.stringify(logs)).toContain('a_field_from_the_future');
  });
});
