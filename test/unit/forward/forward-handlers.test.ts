/**
 * A forward subscriber's handlers (functions/forward/forward-handlers.ts) inside the consumer, POSTing to a
 * real HTTP server on the loopback: a 2xx completes, a 503 with `Retry-After` brings the record back then, a
 * refusal fails the record with its status logged and the answer's text never logged, and the smoke test's
 * synthetic events are not forwarded. The claims are mocked here (this is about the answers); the
 * exactly-once of claims is the consumer's, tested against DynamoDB Local elsewhere.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ChangeMessageVisibilityBatchCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inboundMessages, messagesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { smokeBody } from '../../../cli/ops/smoke/smoke-body.ts';
import type { WebhookEventContext } from '../../../functions/consumer/handler-api.ts';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import {
  answerClassOf,
  ForwardFailedError,
  type ForwardHandlerOptions,
  forwardWebhookHandlers,
} from '../../../functions/forward/forward-handlers.ts';
import type { ForwardTarget } from '../../../functions/forward/forwarder.ts';
import {
  captureOutput,
  createHarness,
  emfDocuments,
  sqsEvent,
  sqsRecord,
} from '../../support/consumer-harness.ts';

let server: Server;
let url: string;
let answer: { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };
let posts: { signature: string | undefined; body: string; headers: IncomingHttpHeaders }[];
/** POSTs the destination holds at once now, and the most it held. */
let inFlight = 0;
let mostInFlight = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    request.on('end', () => {
      posts.push({
        signature: request.headers['x-hub-signature-256'] as string | undefined,
        body: Buffer.concat(chunks).toString('utf8'),
        headers: request.headers,
      });
      setTimeout(() => {
        inFlight -= 1;
        response.writeHead(answer.status, answer.headers).end(answer.body ?? '');
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  posts = [];
  answer = { status: 200 };
  mostInFlight = 0;
});

const target = (overrides: Partial<ForwardTarget> = {}): ForwardTarget => ({
  url,
  shape: 'meta',
  secret: 'app-secret',
  timeoutMs: 2_000,
  ...overrides,
});

function forwarding(options: ForwardHandlerOptions = {}, overrides: Partial<ForwardTarget> = {}) {
  const built = createHarness(forwardWebhookHandlers(target(overrides), options));
  built.dynamodb.on(PutCommand).resolves({});
  built.dynamodb.on(UpdateCommand).resolves({});
  built.dynamodb.on(DeleteCommand).resolves({});
  built.queue.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
  return built;
}

const [message] = inboundMessages(1);
const record = sqsRecord(messagesBody([message as never]), 'rec-1');
const three = inboundMessages(3, 'batch');
const keysOf = (messages: readonly { id: string }[]) => messages.map(({ id }) => `msg:${id}`);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const forwardedIds = (body: string): string[] =>
  JSON.parse(body).entry.flatMap((entry: { changes: { value: { messages?: { id: string }[] } }[] }) =>
    entry.changes.flatMap(({ value }) => (value.messages ?? []).map(({ id }) => id)),
  );

describe('a forward subscriber', () => {
  it('POSTs each fresh event once, signed, and completes its claim on a 2xx', async () => {
    const { dynamodb, invoke } = forwarding();
    const { result } = await captureOutput(() => invoke({ Records: [record] }));
    expect(result).toEqual({ batchItemFailures: [] });
    expect(posts).toHaveLength(1);
    expect(posts[0]?.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    const forwarded = JSON.parse(posts[0]?.body ?? '{}').entry[0].changes[0].value.messages;
    expect(forwarded.map(({ id }: { id: string }) => id)).toEqual([message?.id]);
    expect(dynamodb.commandCalls(DeleteCommand)).toHaveLength(0);
  });

  it("brings the record back after the destination's Retry-After, its claim released", async () => {
    answer = { status: 503, headers: { 'retry-after': '120' } };
    const { dynamodb, queue, invoke } = forwarding();
    const { result } = await captureOutput(() => invoke({ Records: [record] }));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    const [change] = queue.commandCalls(ChangeMessageVisibilityBatchCommand);
    expect(change?.args[0].input.Entries?.[0]?.VisibilityTimeout).toBe(120);
    expect(dynamodb.commandCalls(DeleteCommand)).toHaveLength(1);
  });

  it("fails a refused record with the status in the log, never the answer's text", async () => {
    answer = { status: 422, body: 'cannot parse message from +4915112345678' };
    const { invoke } = forwarding();
    const { result, lines } = await captureOutput(() => invoke({ Records: [record] }));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    const refusal = lines.find((line) => line.includes('Destination refused the event'));
    expect(JSON.parse(refusal ?? '{}')).toMatchObject({ status: 422 });
    expect(lines.join('\n')).not.toContain('4915112345678');
    const gaveUp = lines.find((line) => line.includes('Handler gave up on the event'));
    expect(JSON.parse(gaveUp ?? '{}')).toMatchObject({ reason: 'http-422', deadLetterNow: false });
  });

  it('counts each answer by its class in the consumer metrics of the invocation, one document per class', async () => {
    answer = { status: 503 };
    const failing = forwarding();
    const refused = await captureOutput(() => failing.invoke({ Records: [record] }));
    answer = { status: 200 };
    const delivering = forwarding();
    const delivered = await captureOutput(() =>
      delivering.invoke(
        sqsEvent(['rec-a', messagesBody(three.slice(0, 2))], ['rec-b', messagesBody(three.slice(2))]),
      ),
    );
    const answers = (lines: readonly string[]) =>
      emfDocuments(lines)
        .filter(({ values }) => values.AnswerClass !== undefined)
        .map(({ dimensions, values }) => [dimensions, values.AnswerClass, values.ForwardAnswers]);
    expect(answers(refused.lines)).toEqual([[[['service', 'Subscriber', 'AnswerClass']], '5xx', 1]]);
    expect(answers(delivered.lines)).toEqual([[[['service', 'Subscriber', 'AnswerClass']], '2xx', 3]]);
  });

  it("does not forward ops smoke's synthetic events", async () => {
    const { dynamodb, invoke } = forwarding();
    const smoke = smokeBody('run-1', Date.now());
    // The status ledger's write answers with the merged item.
    dynamodb.on(UpdateCommand, { ReturnValues: 'ALL_NEW' }).resolves({
      Attributes: {
        wamid: 'wamid.SMOKE_TEST.run-1.reply',
        currentStatus: 'delivered',
        at_delivered: 1,
        change_delivered: 'advanced',
      },
    });
    const { result } = await captureOutput(() => invoke({ Records: [sqsRecord(smoke.body, 'rec-smoke')] }));
    expect(result).toEqual({ batchItemFailures: [] });
    expect(posts).toEqual([]);
  });
});

describe('a forward subscriber with batch', () => {
  it("POSTs each record's fresh events in one signed Meta envelope, keyed by their keys, and completes them all", async () => {
    const { dynamodb, invoke } = forwarding({ batch: true });
    const { result } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody(three)], ['rec-2', messagesBody([message as never])])),
    );
    expect(result).toEqual({ batchItemFailures: [] });
    expect(posts).toHaveLength(2);
    const batched = posts.find(({ body }) => forwardedIds(body).length === 3);
    expect(forwardedIds(batched?.body ?? '{}')).toEqual(three.map(({ id }) => id));
    // One entry for the WABA, the change's metadata, and each message's contact.
    const value = JSON.parse(batched?.body ?? '{}').entry[0].changes[0].value;
    expect(value.metadata.phone_number_id).toBeDefined();
    expect(value.contacts.map(({ wa_id }: { wa_id: string }) => wa_id)).toEqual(
      three.map(({ from }) => from),
    );
    expect(batched?.body).toMatch(/^[\0-~]*$/);
    expect(batched?.signature).toBe(
      `sha256=${createHmac('sha256', 'app-secret')
        .update(batched?.body ?? '')
        .digest('hex')}`,
    );
    expect(batched?.headers['idempotency-key']).toBe(sha256(keysOf(three).join('\n')));
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(4);
    expect(dynamodb.commandCalls(DeleteCommand)).toHaveLength(0);
  });

  it('leaves out the events already done, and releases every claim when the destination fails', async () => {
    answer = { status: 503 };
    const { dynamodb, invoke } = forwarding({ batch: true });
    dynamodb.on(PutCommand, { Item: { pk: `msg:${three[1]?.id}` } }).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: { httpStatusCode: 400 },
        Item: { state: { S: 'done' }, owner: { S: 'someone' } },
      }),
    );
    const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-1', messagesBody(three)])));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    expect(posts).toHaveLength(1);
    expect(forwardedIds(posts[0]?.body ?? '{}')).toEqual([three[0]?.id, three[2]?.id]);
    expect(posts[0]?.headers['idempotency-key']).toBe(
      sha256(keysOf([three[0], three[2]] as never).join('\n')),
    );
    expect(dynamodb.commandCalls(DeleteCommand)).toHaveLength(2);
    const warned = lines.find((line) => line.includes('Destination did not take the event'));
    expect(JSON.parse(warned ?? '{}')).toMatchObject({ reason: 'http-503', events: 2 });
  });

  it('is one body per record however the records are cut: each POST holds its own record only', async () => {
    const { invoke } = forwarding({ batch: true });
    await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody(three.slice(0, 2))], ['rec-2', messagesBody(three.slice(2))])),
    );
    expect(posts.map(({ body }) => forwardedIds(body)).sort()).toEqual(
      [three.slice(0, 2).map(({ id }) => id), [three[2]?.id]].sort(),
    );
  });
});

describe('a forward subscriber with headers', () => {
  it('adds them to every POST, beside its own signature and identity', async () => {
    const { invoke } = forwarding({}, { headers: { Authorization: 'Bearer token-1', 'X-Tenant': 'acme' } });
    await captureOutput(() => invoke({ Records: [record] }));
    expect(posts[0]?.headers).toMatchObject({ authorization: 'Bearer token-1', 'x-tenant': 'acme' });
    expect(posts[0]?.headers['x-hub-signature-256']).toMatch(/^sha256=/);
    expect(posts[0]?.headers['content-type']).toBe('application/json');
  });
});

describe('a forward subscriber with maxInFlight', () => {
  it('never holds more POSTs at once than its bound, over the concurrent handler calls of a batch', async () => {
    answer = { status: 200, delayMs: 40 };
    const records = inboundMessages(8, 'bound').map((each, index) =>
      sqsRecord(messagesBody([each]), `rec-${index}`),
    );
    const { invoke } = forwarding({ maxInFlight: 2 });
    const { result } = await captureOutput(() => invoke({ Records: records }));
    expect(result).toEqual({ batchItemFailures: [] });
    expect(posts).toHaveLength(8);
    expect(mostInFlight).toBe(2);
  });

  it('holds the bound with batch too, and is unbounded without it', async () => {
    answer = { status: 200, delayMs: 40 };
    const records = inboundMessages(6, 'free').map((each, index) =>
      sqsRecord(messagesBody([each]), `r-${index}`),
    );
    await captureOutput(() => forwarding({ batch: true, maxInFlight: 3 }).invoke({ Records: records }));
    expect(mostInFlight).toBe(3);
    mostInFlight = 0;
    await captureOutput(() => forwarding().invoke({ Records: records }));
    expect(mostInFlight).toBeGreaterThan(3);
  });

  it('does not start a POST that waited for its turn when its timeout no longer fits in the invocation', async () => {
    answer = { status: 200, delayMs: 60 };
    const handlers = forwardWebhookHandlers(target({ timeoutMs: 2_000 }), { maxInFlight: 1 });
    const extraction = extractEvents(messagesBody(inboundMessages(2, 'late')));
    const [a, b] = extraction.ok ? extraction.events : [];
    const answers: string[] = [];
    const context = (event: unknown, remainingMs: number) =>
      ({
        event,
        smokeTest: false,
        receivedAt: '2026-12-03T10:00:00.000Z',
        remainingTimeMs: () => remainingMs,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
        metrics: {
          count: (_: string, dimension?: { value: string }) => answers.push(dimension?.value ?? ''),
        },
      }) as unknown as WebhookEventContext & { kind: 'message' };
    const first = handlers.onMessage?.(context(a, 30_000));
    const late = handlers.onMessage?.(context(b, 1_000));
    await expect(first).resolves.toBeUndefined();
    await expect(late).rejects.toThrow(ForwardFailedError);
    await expect(late).rejects.toMatchObject({ reason: 'no-time-left' });
    expect(posts).toHaveLength(1);
    expect(answers).toEqual(['2xx', 'not-started']);
  });
});

describe('answerClassOf', () => {
  it.each([
    [{ kind: 'delivered', status: 204 }, '2xx'],
    [{ kind: 'refused', status: 302, reason: 'http-302' }, '3xx'],
    [{ kind: 'retry', status: 429, reason: 'http-429' }, '4xx'],
    [{ kind: 'refused', status: 422, reason: 'http-422' }, '4xx'],
    [{ kind: 'retry', status: 503, reason: 'http-503' }, '5xx'],
    [{ kind: 'retry', reason: 'timeout' }, 'timeout'],
    [{ kind: 'retry', reason: 'connection' }, 'connection'],
    [{ kind: 'retry', reason: 'no-time-left' }, 'not-started'],
  ] as const)('classes %o as %s', (result, expected) => {
    expect(answerClassOf(result)).toBe(expected);
  });
});
