/**
 * A forward subscriber's handlers (functions/forward/forward-handlers.ts) inside the consumer, POSTing to a
 * real HTTP server on the loopback: a 2xx completes, a 503 with `Retry-After` brings the record back then, a
 * refusal fails the record with its status logged and the answer's text never logged, and the smoke test's
 * synthetic events are not forwarded. The claims are mocked here (this is about the answers); the
 * exactly-once of claims is the consumer's, tested against DynamoDB Local elsewhere.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChangeMessageVisibilityBatchCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inboundMessages, messagesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { smokeBody } from '../../../cli/ops/smoke/smoke-body.ts';
import { forwardWebhookHandlers } from '../../../functions/forward/forward-handlers.ts';
import { captureOutput, createHarness, sqsRecord } from '../../support/consumer-harness.ts';

let server: Server;
let url: string;
let answer: { status: number; headers?: Record<string, string>; body?: string };
let posts: { signature: string | undefined; body: string }[];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      posts.push({
        signature: request.headers['x-hub-signature-256'] as string | undefined,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(answer.status, answer.headers).end(answer.body ?? '');
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
});

function forwarding() {
  const built = createHarness(
    forwardWebhookHandlers({ url, shape: 'meta', secret: 'app-secret', timeoutMs: 2_000 }),
  );
  built.dynamodb.on(PutCommand).resolves({});
  built.dynamodb.on(UpdateCommand).resolves({});
  built.dynamodb.on(DeleteCommand).resolves({});
  built.queue.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
  return built;
}

const [message] = inboundMessages(1);
const record = sqsRecord(messagesBody([message as never]), 'rec-1');

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
