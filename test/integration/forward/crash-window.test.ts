/**
 * The one repeat forwarding documents (docs/forwarding.md, "The one repeat"): the destination took the POST,
 * and the claim's completion never landed (the consumer died, or `complete` kept failing). On DynamoDB Local,
 * with the consumer users deploy: once the lease lapses, Meta's retry takes the claim over and POSTs again,
 * the same bytes under the same `Idempotency-Key`, so a destination that keys on it effects the event once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@aws-lambda-powertools/logger';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboundMessages, messagesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { SERVICE_NAME } from '../../../contract/metric-names.ts';
import { createConsumerHandler } from '../../../functions/consumer/create-consumer.ts';
import { forwardWebhookHandlers } from '../../../functions/forward/forward-handlers.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  createSqsClient,
  createTestClaimTable,
} from '../../support/aws-clients.ts';
import { sqsEvent, testConsumerConfig } from '../../support/consumer-harness.ts';

const dynamodb = createDynamoDbClient();
const documentClient = createDocumentClient(dynamodb);
const REMAINING_MS = 1_500;
const LEASE_MARGIN_MS = 500;

let tableName: string;
let server: Server;
let url: string;
const posts: { idempotencyKey: string; body: string }[] = [];
/** What a destination that keys on `Idempotency-Key` effects: one entry per key. */
const effected = new Set<string>();

beforeAll(async () => {
  tableName = await createTestClaimTable(dynamodb, 'forward-crash');
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const idempotencyKey = String(request.headers['idempotency-key']);
      posts.push({ idempotencyKey, body: Buffer.concat(chunks).toString('utf8') });
      effected.add(idempotencyKey);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The forward consumer, whose claim completions fail while `completions.fail` is set. */
function forwardConsumer(completions: { fail: boolean }) {
  const client = {
    send: (command: unknown) =>
      completions.fail && command instanceof UpdateCommand
        ? Promise.reject(Object.assign(new Error('completion lost'), { name: 'InternalServerError' }))
        : documentClient.send(command as never),
  } as unknown as typeof documentClient;
  const handler = createConsumerHandler(testConsumerConfig({ tableName, leaseMarginMs: LEASE_MARGIN_MS }), {
    documentClient: client,
    sqs: createSqsClient(),
    handlers: forwardWebhookHandlers({ url, shape: 'meta', secret: 'app-secret', timeoutMs: 1_000 }),
    logger: new Logger({ serviceName: SERVICE_NAME, logLevel: 'SILENT' }),
    completionRetry: { retries: 1, baseDelayMs: 1, deadlineReserveMs: 0 },
  });
  return (event: SQSEvent): Promise<SQSBatchResponse> =>
    handler(event, { getRemainingTimeInMillis: () => REMAINING_MS });
}

describe('a forward subscriber between the POST and the completion', () => {
  it('POSTs again after the lease lapses, the same bytes under the same Idempotency-Key, which the destination drops', async () => {
    const body = messagesBody(inboundMessages(1, `crash${Date.now()}`) as never);
    const completions = { fail: true };

    // The destination takes the POST; the completion never lands. The record is acknowledged all the same
    // (running the effect again could only double it), so only Meta's retry brings the event back.
    expect(await forwardConsumer(completions)(sqsEvent(['first', body]))).toEqual({ batchItemFailures: [] });
    expect(posts).toHaveLength(1);

    // Meta's retry while the lease still runs: the claim is held, nothing is POSTed.
    completions.fail = false;
    const early = await forwardConsumer(completions)(sqsEvent(['retry-early', body]));
    expect(early.batchItemFailures).toHaveLength(1);
    expect(posts).toHaveLength(1);

    // After the lease: a takeover, the same body again, then done.
    await new Promise((resolve) => setTimeout(resolve, REMAINING_MS + LEASE_MARGIN_MS + 500));
    expect(await forwardConsumer(completions)(sqsEvent(['retry-late', body]))).toEqual({
      batchItemFailures: [],
    });
    expect(posts).toHaveLength(2);
    expect(posts[1]).toEqual(posts[0]);
    expect(effected.size).toBe(1);

    const key = JSON.parse(body).entry[0].changes[0].value.messages[0].id as string;
    const claim = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: { pk: `msg:${key}` } }),
    );
    expect(claim.Item?.state).toBe('done');
  }, 30_000);
});
