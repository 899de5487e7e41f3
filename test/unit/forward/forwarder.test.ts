/**
 * The forwarder (functions/forward/forwarder.ts) against a real HTTP server on the loopback: the destination
 * verifies what it receives the way real consumers do (whatsapp-api-js for the `meta` shape, the Standard
 * Webhooks reference library for the `event` shape), and each kind of answer, a timeout and a broken
 * connection mean what docs/design.md says.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WhatsAppAPI } from 'whatsapp-api-js';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import type { WebhookEvent } from '../../../functions/events/types.ts';
import {
  ForwardHeadersError,
  type ForwardTarget,
  forwardEvents,
  forwardRequest,
  forwardTarget,
  KEPT_ANSWER_BYTES,
} from '../../../functions/forward/forwarder.ts';
import { messagesBody, textMessage } from './messages-body.ts';

const APP_SECRET = 'the-app-secret';
const STANDARD_SECRET = `whsec_${Buffer.from('a Standard Webhooks secret of 32 bytes').toString('base64')}`;

interface Received {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

type Answer = (request: Received, response: ServerResponse) => void;

let server: Server;
let base: string;
const received: Received[] = [];
const answers = new Map<string, Answer>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const got = {
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(got);
      (answers.get(got.path) ?? ((_, res) => res.writeHead(200).end()))(got, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const body = messagesBody(
  [{ profile: { name: 'Zoë' }, wa_id: '15551230001' }],
  [textMessage('wamid.A', '15551230001', 'olá 😀'), textMessage('wamid.B', '15551230001', 'two', '2')],
);
const extraction = extractEvents(body);
const events: WebhookEvent[] = extraction.ok ? extraction.events : [];
const [first] = events as [WebhookEvent];

const target = (path: string, overrides: Partial<ForwardTarget> = {}): ForwardTarget => ({
  url: `${base}${path}`,
  shape: 'meta',
  secret: APP_SECRET,
  timeoutMs: 2_000,
  ...overrides,
});
const context = { receivedAt: '2026-12-03T10:00:00.000Z' };

describe('the meta shape, received by a consumer written for Meta', () => {
  it('is verified and parsed event by event, the emoji included, and completes on 2xx', async () => {
    const api = new WhatsAppAPI({ token: 'unused', appSecret: APP_SECRET, v: 'v24.0' });
    const texts: string[] = [];
    api.on.message = ({ message }) => {
      texts.push(message.type === 'text' ? message.text.body : '');
    };
    answers.set('/meta', (request, response) => {
      api
        .post(JSON.parse(request.body), request.body, String(request.headers['x-hub-signature-256']))
        .then(() => response.writeHead(200).end())
        .catch(() => response.writeHead(401).end());
    });
    for (const event of events) {
      expect(await forwardEvents([event], target('/meta'), context)).toMatchObject({
        kind: 'delivered',
        status: 200,
      });
    }
    expect(texts).toEqual(['olá 😀', 'two']);
    const keys = received
      .filter(({ path }) => path === '/meta')
      .map(({ headers }) => headers['idempotency-key']);
    expect(new Set(keys).size).toBe(2);
  });

  it('sends the same bytes and the same Idempotency-Key when it sends again', async () => {
    await forwardEvents([first], target('/again'), context);
    await forwardEvents([first], target('/again'), { ...context, now: () => new Date(Date.now() + 60_000) });
    const [a, b] = received.filter(({ path }) => path === '/again');
    expect(b?.body).toBe(a?.body);
    expect(b?.headers['idempotency-key']).toBe(a?.headers['idempotency-key']);
    expect(a?.body).toMatch(/^[\0-~]*$/);
  });
});

describe('the event shape, received by a Standard Webhooks consumer', () => {
  it('is verified by the reference library and names the event by its key', async () => {
    answers.set('/event', (request, response) => {
      try {
        const payload = new Webhook(STANDARD_SECRET).verify(
          request.body,
          request.headers as Record<string, string>,
        );
        response.writeHead(204).end(JSON.stringify(payload));
      } catch {
        response.writeHead(400).end('bad signature');
      }
    });
    const result = await forwardEvents(
      [first],
      target('/event', { shape: 'event', secret: STANDARD_SECRET }),
      context,
    );
    expect(result).toMatchObject({ kind: 'delivered', status: 204 });
    const [request] = received.filter(({ path }) => path === '/event');
    expect(request?.headers['webhook-id']).toBe(first.key);
    expect(JSON.parse(request?.body ?? '{}')).toMatchObject({
      key: first.key,
      field: 'messages',
      kind: 'message',
      receivedAt: context.receivedAt,
      event: { id: 'wamid.A' },
    });
  });

  it('refuses to put two events in one request', async () => {
    await expect(forwardEvents(events, target('/event', { shape: 'event' }), context)).rejects.toThrow(
      RangeError,
    );
  });
});

describe('what the answer means', () => {
  it('retries a 503 after its Retry-After, and a 429 after its date', async () => {
    answers.set('/busy', (_, response) => response.writeHead(503, { 'retry-after': '120' }).end());
    expect(await forwardEvents([first], target('/busy'), context)).toMatchObject({
      kind: 'retry',
      status: 503,
      afterSeconds: 120,
    });
    const now = new Date('2026-12-03T10:00:00Z');
    answers.set('/limited', (_, response) =>
      response.writeHead(429, { 'retry-after': 'Thu, 03 Dec 2026 10:00:30 GMT' }).end(),
    );
    expect(await forwardEvents([first], target('/limited'), { ...context, now: () => now })).toMatchObject({
      kind: 'retry',
      status: 429,
      afterSeconds: 30,
    });
  });

  it('keeps the status and the first bytes of a refusal, and follows no redirect', async () => {
    answers.set('/refuse', (_, response) =>
      response.writeHead(422).end(`invalid payload ${'x'.repeat(1_000)}`),
    );
    const refused = await forwardEvents([first], target('/refuse'), context);
    expect(refused).toMatchObject({ kind: 'refused', status: 422 });
    expect(refused.answerStart?.startsWith('invalid payload')).toBe(true);
    expect(refused.answerStart).toHaveLength(KEPT_ANSWER_BYTES);

    answers.set('/moved', (_, response) => response.writeHead(301, { location: `${base}/meta` }).end());
    const before = received.length;
    expect(await forwardEvents([first], target('/moved'), context)).toMatchObject({
      kind: 'refused',
      status: 301,
    });
    expect(received.length).toBe(before + 1);
  });

  it('retries a destination that does not answer in time, or drops the connection', async () => {
    answers.set('/slow', (_, response) => setTimeout(() => response.writeHead(200).end(), 1_000));
    expect(await forwardEvents([first], target('/slow', { timeoutMs: 100 }), context)).toEqual({
      kind: 'retry',
      reason: 'timeout',
    });
    answers.set('/drop', (request) => {
      void request;
      server.closeAllConnections();
    });
    expect(await forwardEvents([first], target('/drop'), context)).toEqual({
      kind: 'retry',
      reason: 'connection',
    });
  });
});

describe("the user's headers", () => {
  const forward = { url: 'https://hooks.example.com/wa', shape: 'meta' as const, timeoutSeconds: 10 };

  it("go with the request, beside the shape's own, in both shapes", () => {
    const meta = forwardTarget(forward, APP_SECRET, { Authorization: 'Bearer abc' });
    const sentAt = new Date('2026-12-03T10:00:00Z');
    expect(forwardRequest([first], meta, { ...context, sentAt }).headers).toMatchObject({
      Authorization: 'Bearer abc',
      'x-hub-signature-256': expect.stringMatching(/^sha256=/),
      'idempotency-key': expect.any(String),
    });
    const event = forwardTarget({ ...forward, shape: 'event' }, STANDARD_SECRET, { 'X-Api-Key': 'k' });
    expect(forwardRequest([first], event, { ...context, sentAt }).headers).toMatchObject({
      'X-Api-Key': 'k',
      'webhook-id': first.key,
    });
  });

  it('may not replace a header of ours, and the refusal names the header, never a value', () => {
    for (const headers of [
      { 'X-Hub-Signature-256': 'sha256=forged' },
      { 'Idempotency-Key': 'mine' },
      { 'webhook-id': 'mine' },
      { Host: 'elsewhere.example.com' },
    ]) {
      expect(() => forwardTarget(forward, APP_SECRET, headers)).toThrow(ForwardHeadersError);
    }
    expect(() => forwardTarget(forward, APP_SECRET, { 'content-type': 'text/plain-secret' })).toThrow(
      /may not set content-type/,
    );
    expect(() => forwardTarget(forward, APP_SECRET, '{"Authorization":"x"}')).toThrow(/JSON object/);
    expect(forwardTarget(forward, APP_SECRET).headers).toBeUndefined();
  });

  it('reach the destination', async () => {
    await forwardEvents([first], target('/headers', { headers: { Authorization: 'Bearer abc' } }), context);
    const [request] = received.filter(({ path }) => path === '/headers');
    expect(request?.headers.authorization).toBe('Bearer abc');
  });
});
