/**
 * `npm start` with a forward subscriber, end to end on the emulators: a destination written for Meta's
 * webhook (whatsapp-api-js 6.3, verifying the signature over what it receives and handing each message to its
 * handler) behind a real HTTP server on the loopback. Meta's retry of a body and a re-batched retry reach it
 * once per message, emoji text passes its signature check, and a 503 with `Retry-After` is honoured. A `batch`
 * subscriber gets each delivery part's fresh events in one signed body, and Meta's retries never again.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WhatsAppAPI } from 'whatsapp-api-js';
import { spawnTestStack } from '../../../test/support/test-local-stack.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { DEV_APP_SECRET } from '../../local/stack/local-config.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import type { SpawnedLocalStack } from '../../local/stack/spawn-local-stack.ts';
import {
  envelope,
  inboundMessagesWithIds,
  messagesChange,
  statusesChange,
  wamidFactory,
} from '../../meta-traffic/webhook-bodies.ts';

/** The subscriber that forwards every event to the Meta consumer (forward-subscribers.ts). */
const FORWARDING = 'chatwoot';
let destination: Server;
let stack: SpawnedLocalStack;
let client: LocalStackClient;
/** wamid → the texts the destination's handler was given for it. */
const handled = new Map<string, string[]>();
/** wamids the destination answers 503 (`Retry-After: 1`) once, before it takes them. */
const busyOnce = new Set<string>();
let refusedSignatures = 0;
/** wamid → POSTs the refusing path got for it. */
const refusals = new Map<string, number>();
let busyAnswers = 0;
/** What the batching path got: each POST's event ids, its Idempotency-Key, and whether its signature held. */
const batches: { ids: string[]; idempotencyKey: string; signed: boolean }[] = [];

/** Every message and status id of a forwarded body, in order. */
function eventIds(body: { entry?: { changes?: { value?: Record<string, unknown> }[] }[] }): string[] {
  return (body.entry ?? []).flatMap(({ changes }) =>
    (changes ?? []).flatMap(({ value }) =>
      ['messages', 'statuses'].flatMap((list) =>
        ((value?.[list] as { id: string; status?: string }[] | undefined) ?? []).map(({ id, status }) =>
          status === undefined ? id : `${id}:${status}`,
        ),
      ),
    ),
  );
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

beforeAll(async () => {
  const api = new WhatsAppAPI({ token: 'unused', appSecret: DEV_APP_SECRET, v: 'v24.0' });
  api.on.message = ({ message }) => {
    const text = message.type === 'text' ? message.text.body : '';
    handled.set(message.id, [...(handled.get(message.id) ?? []), text]);
  };
  destination = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (request.url?.endsWith('/batched')) {
        const signature = `sha256=${createHmac('sha256', DEV_APP_SECRET).update(body).digest('hex')}`;
        batches.push({
          ids: eventIds(JSON.parse(body)),
          idempotencyKey: String(request.headers['idempotency-key']),
          signed: request.headers['x-hub-signature-256'] === signature,
        });
        response.writeHead(200).end();
        return;
      }
      const id = (JSON.parse(body).entry?.[0]?.changes?.[0]?.value?.messages?.[0]?.id as string) ?? '';
      if (request.url?.endsWith('/refuse')) {
        refusals.set(id, (refusals.get(id) ?? 0) + 1);
        response.writeHead(422).end('cannot parse the message from +4915112345678');
        return;
      }
      if (busyOnce.delete(id)) {
        busyAnswers += 1;
        response.writeHead(503, { 'retry-after': '1' }).end();
        return;
      }
      api
        .post(JSON.parse(body), body, String(request.headers['x-hub-signature-256']))
        .then(() => response.writeHead(200).end())
        .catch(() => {
          refusedSignatures += 1;
          response.writeHead(401).end();
        });
    });
  });
  await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
  const { port } = destination.address() as AddressInfo;
  stack = await spawnTestStack({
    env: {
      LOCAL_SUBSCRIBERS: 'test/support/local-subscribers/forward-subscribers.ts',
      E2E_FORWARD_URL: `http://127.0.0.1:${port}/webhooks/whatsapp`,
    },
  });
  client = new LocalStackClient(stack.url);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  destination?.closeAllConnections();
  await new Promise((resolve) => destination?.close(resolve));
});

describe('npm start with a forward subscriber', () => {
  it('shows the destination by its origin only', async () => {
    const [subscriber] = (await client.info()).subscribers;
    expect(subscriber?.entry).toMatch(/^forward → http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("hands each message to a Meta consumer once, through Meta's retry and a re-batched retry", async () => {
    const wamid = wamidFactory('forward');
    const [a, b, c] = [wamid(1), wamid(2), wamid(3)];
    const [ma, mb, mc] = inboundMessagesWithIds([a, b, c]).map((message) => ({ ...message, text: 'olá 😀' }));
    const first = envelope([messagesChange([ma, mb] as never)]);
    const rebatched = envelope([messagesChange([mb, mc] as never)]);
    for (const body of [first, first, rebatched]) {
      expect((await client.postWebhook(body, DEV_APP_SECRET)).status).toBe(200);
    }
    await waitFor(() => [a, b, c].every((id) => handled.has(id)), 60_000);
    await client.drained();
    expect([a, b, c].map((id) => handled.get(id))).toEqual([['olá 😀'], ['olá 😀'], ['olá 😀']]);
    expect(refusedSignatures).toBe(0);
  }, 120_000);

  it('comes back after a 503 with Retry-After and is then taken once', async () => {
    const id = wamidFactory('forward-busy')(1);
    busyOnce.add(id);
    const before = busyAnswers;
    expect(
      (await client.postWebhook(envelope([messagesChange(inboundMessagesWithIds([id], 1))]), DEV_APP_SECRET))
        .status,
    ).toBe(200);
    await waitFor(() => handled.has(id), 60_000);
    expect(busyAnswers).toBe(before + 1);
    expect(handled.get(id)).toHaveLength(1);
    // The dashboard's answers by class: the 503 and the 2xx that followed, from the consumer's metrics.
    await waitFor(async () => {
      const counters = (await client.stats()).subscribers[FORWARDING]?.totals.counters ?? {};
      return (counters['ForwardAnswers/5xx'] ?? 0) >= 1 && (counters['ForwardAnswers/2xx'] ?? 0) >= 1;
    }, 30_000);
  }, 120_000);

  it('sends a refused event to the DLQ on its third receive, after at most three POSTs, with the status and the answer kept there', async () => {
    const id = wamidFactory('forward-refused')(1);
    const body = envelope([messagesChange(inboundMessagesWithIds([id], 1))]);
    expect((await client.postWebhook(body, DEV_APP_SECRET)).status).toBe(200);
    let record: { deadLetterReason?: string; deadLetterDetails?: Record<string, string> } | undefined;
    await waitFor(async () => {
      const { body: views } = await client.get<{
        subscribers: {
          subscriber: string;
          lane: string;
          newest: (typeof record & { pendingKeys: string[] })[];
        }[];
      }>('/local/dead-letters');
      record = views.subscribers
        .filter(({ subscriber }) => subscriber === 'strict')
        .flatMap(({ newest }) => newest)
        .find(({ pendingKeys }) => pendingKeys.includes(`msg:${id}`));
      return record !== undefined;
    }, 90_000);
    // Three receives, and a POST on each one that reached the handler: a receive the event source returns
    // unrun (its poller was ahead of the consumers) counts too, as it does toward maxReceiveCount in AWS.
    expect(refusals.get(id)).toBeGreaterThanOrEqual(1);
    expect(refusals.get(id)).toBeLessThanOrEqual(3);
    expect(record?.deadLetterReason).toBe('http-422');
    expect(record?.deadLetterDetails).toEqual({
      status: '422',
      answer: 'cannot parse the message from +4915112345678',
    });
    // The destination's echo of a phone number stays in the DLQ: no log line of the stack carries it.
    expect(stack.output()).not.toContain('4915112345678');
  }, 120_000);

  it("with batch, POSTs each delivery part's fresh events in one signed body, and Meta's retries never again", async () => {
    const wamid = wamidFactory('forward-batch');
    const [a, b, c, d] = [wamid(1), wamid(2), wamid(3), wamid(4)];
    // One customer's three messages: one conversation, so one part of the message lane.
    const [ma, mb, mc, md] = inboundMessagesWithIds([a, b, c, d]).map((message) => ({
      ...message,
      from: '16505550001',
      name: 'Zoë',
      text: 'olá 😀',
    }));
    const first = envelope([messagesChange([ma, mb, mc] as never)]);
    const rebatched = envelope([messagesChange([mc, md] as never)]);
    const statuses = envelope([
      statusesChange(
        ['sent', 'delivered', 'read'].map((status, index) => ({
          id: wamid(9),
          status,
          recipientId: '16505550001',
          timestamp: String(1_749_416_400 + index),
        })),
      ),
    ]);
    for (const body of [first, first, statuses, rebatched]) {
      expect((await client.postWebhook(body, DEV_APP_SECRET)).status).toBe(200);
    }
    const ours = () => batches.filter(({ ids }) => ids.some((id) => id.startsWith('wamid.forward-batch.')));
    await waitFor(() => ours().flatMap(({ ids }) => ids).length >= 7, 60_000);
    await client.drained();
    const posts = ours();
    expect(posts.map(({ ids }) => ids)).toEqual(
      expect.arrayContaining([
        [a, b, c],
        [d],
        [`${wamid(9)}:sent`, `${wamid(9)}:delivered`, `${wamid(9)}:read`],
      ]),
    );
    expect(posts).toHaveLength(3);
    expect(posts.every(({ signed }) => signed)).toBe(true);
    const keys = (ids: string[]) => ids.map((id) => `msg:${id}`).join('\n');
    expect(posts.find(({ ids }) => ids.length === 3 && ids[0] === a)?.idempotencyKey).toBe(
      sha256(keys([a, b, c])),
    );
  }, 120_000);
});
