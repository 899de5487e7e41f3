/** The receiver's archive copy (docs/design.md, "Archive"): what it hands the archive lane, and when it fails. */
import { describe, expect, it } from 'vitest';
import { envelope, inboundMessages, messagesChange } from '../../../cli/meta-traffic/webhook-bodies.ts';
import type { SubscriberQueue } from '../../../contract/subscribers.ts';
import type { ArchiveCopy, ArchivePort, DeliveryMeta } from '../../../functions/queue/delivery-queue-port.ts';
import { EnqueueFailedError } from '../../../functions/queue/errors.ts';
import {
  type ReceiverDependencies,
  receiveWebhook,
  type WebhookRequest,
} from '../../../functions/receiver/receive-webhook.ts';
import { signBody } from '../../../functions/receiver/signature.ts';
import { RecordingQueues } from '../../support/recording-queues.ts';

const SECRET = 'secret';
const BOT: SubscriberQueue = { name: 'bot', queueUrl: 'memory://bot', fields: ['messages'] };
const CRM: SubscriberQueue = { name: 'crm', queueUrl: 'memory://crm' };
const TEMPLATES: SubscriberQueue = {
  name: 'templates',
  queueUrl: 'memory://templates',
  fields: ['message_template_status_update'],
};

interface ArchivedCopy extends ArchiveCopy {
  readonly raw: Buffer;
  readonly meta: DeliveryMeta;
}

class RecordingArchive implements ArchivePort {
  readonly copies: ArchivedCopy[] = [];
  constructor(private readonly unavailable = false) {}
  async archive(raw: Uint8Array, copy: ArchiveCopy, meta: DeliveryMeta) {
    if (this.unavailable) throw new EnqueueFailedError('archive', 1, 1, 'ServiceUnavailable');
    this.copies.push({ ...copy, raw: Buffer.from(raw), meta });
    return { messages: 1 };
  }
}

function setup(
  archive: ArchivePort | undefined,
  subscribers: readonly SubscriberQueue[] = [BOT, CRM, TEMPLATES],
) {
  const queue = new RecordingQueues(100_000);
  const metrics: Record<string, number> = {};
  const logs: Record<string, unknown>[] = [];
  const log = (message: string, fields: Record<string, unknown>) => void logs.push({ message, ...fields });
  const deps: ReceiverDependencies = {
    secrets: { origin: 'test', load: async () => ({ appSecrets: [SECRET], verifyToken: 'tok' }) },
    subscribers,
    fanOut: queue,
    quarantine: queue,
    archive,
    metrics: {
      addMetric: (name, _unit, value) => {
        metrics[name] = (metrics[name] ?? 0) + value;
      },
    },
    logger: { info: log, warn: log, error: log },
    clock: () => Date.UTC(2026, 11, 1, 14),
  };
  return { deps, queue, metrics, logs };
}

function post(body: string | Buffer, secret = SECRET): WebhookRequest {
  return {
    method: 'POST',
    path: '/webhook',
    query: {},
    headers: { 'x-hub-signature-256': signBody(body, secret) },
    body,
    requestId: 'req-42',
  };
}

describe('the receiver archive copy', () => {
  it('copies an accepted delivery byte for byte, naming the subscribers it went to, in their order', async () => {
    const archive = new RecordingArchive();
    const { deps, queue } = setup(archive);
    const body = envelope([messagesChange(inboundMessages(2))]);
    expect((await receiveWebhook(post(body), deps)).statusCode).toBe(200);
    expect(archive.copies).toHaveLength(1);
    const [copy] = archive.copies;
    expect(copy?.raw.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(copy?.verdict).toBe('accepted');
    expect(copy?.subscribers).toEqual(['bot', 'crm']);
    expect(copy?.meta).toEqual({
      deliveryId: 'req-42',
      receivedAt: '2026-12-01T14:00:00.000Z',
      retryDeadline: Date.UTC(2026, 11, 1, 14) + 3_000,
    });
    expect(queue.storedFor('bot')).toHaveLength(1);
  });

  it('copies a quarantined body as the bytes Meta signed, verdict quarantined, routed to nobody', async () => {
    const archive = new RecordingArchive();
    const { deps, queue } = setup(archive);
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x22]);
    expect((await receiveWebhook(post(bytes), deps)).statusCode).toBe(200);
    expect(queue.quarantined).toHaveLength(1);
    expect(
      archive.copies.map(({ raw, verdict, subscribers }) => ({ raw: [...raw], verdict, subscribers })),
    ).toEqual([{ raw: [...bytes], verdict: 'quarantined', subscribers: [] }]);
  });

  it('copies a delivery that no subscriber wants, accepted and routed to nobody', async () => {
    const archive = new RecordingArchive();
    const { deps, metrics } = setup(archive, [BOT]);
    const body = envelope([{ field: 'account_update', value: { event: 'PARTNER_ADDED' } }]);
    expect((await receiveWebhook(post(body), deps)).statusCode).toBe(200);
    expect(metrics.DeliveriesUnrouted).toBe(1);
    expect(archive.copies.map(({ verdict, subscribers }) => ({ verdict, subscribers }))).toEqual([
      { verdict: 'accepted', subscribers: [] },
    ]);
  });

  it('copies nothing of an unsigned or empty request', async () => {
    const archive = new RecordingArchive();
    const { deps } = setup(archive);
    expect((await receiveWebhook(post(envelope([]), 'wrong'), deps)).statusCode).toBe(401);
    expect((await receiveWebhook(post(''), deps)).statusCode).toBe(200);
    expect(archive.copies).toEqual([]);
  });

  it.each([
    ['a routed delivery', envelope([messagesChange(inboundMessages(1))])],
    ['a quarantined body', 'not json'],
    ['an unrouted delivery', envelope([{ field: 'account_update', value: { event: 'PARTNER_ADDED' } }])],
  ])('answers 503 when the copy of %s cannot be stored, so that Meta retries it', async (_case, body) => {
    const { deps, metrics, logs } = setup(new RecordingArchive(true), [BOT, CRM]);
    const response = await receiveWebhook(post(body), deps);
    expect(response.statusCode).toBe(503);
    expect(metrics.EnqueueFailures).toBe(1);
    expect(metrics.DeliveriesAccepted).toBeUndefined();
    expect(logs).toContainEqual(expect.objectContaining({ step: 'archive', requestId: 'req-42' }));
    expect(JSON.stringify(logs)).not.toContain('PARTNER_ADDED');
  });

  it('archives nothing and answers as before when no archive is wired', async () => {
    const { deps, queue } = setup(undefined);
    expect(
      (await receiveWebhook(post(envelope([messagesChange(inboundMessages(1))])), deps)).statusCode,
    ).toBe(200);
    expect(queue.storedFor('bot')).toHaveLength(1);
  });
});
