/**
 * The sharpest case the random fault run found, pinned down: DynamoDB applies a claim's PutItem but its answer
 * is lost (a timeout or a reset connection after the write), and the SDK retries the same request. The retry
 * meets the item its own first attempt wrote. That item is this worker's claim, not another worker's: taking
 * it for `duplicate-in-flight` would skip the event, acknowledge its record, and lose the event for good.
 */
import '../support/quiet-logs.ts';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type InboundMessage, inboundMessages, messagesBody } from '../../cli/meta-traffic/webhook-bodies.ts';
import { ClaimStore } from '../../functions/claims/claim-store.ts';
import { createDocumentClient, createDynamoDbClient, createTestClaimTable } from '../support/aws-clients.ts';
import { clientLosingFirstAnswer } from '../support/dynamodb-faults.ts';
import { createPipeline, type Pipeline, restoreEnvironment } from '../support/pipeline-fixture.ts';
import { messageKey } from '../support/webhooks/delivery-workload.ts';
import { keysOfBody } from '../support/webhooks/event-keys.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});
afterAll(() => restoreEnvironment());

describe('a claim whose write was applied but whose answer was lost', () => {
  it('is held by the worker that wrote it when the SDK retries it', async () => {
    const tableName = await createTestClaimTable(createDynamoDbClient(), 'lost-answer');
    const { client, faults } = clientLosingFirstAnswer('claim');
    const store = new ClaimStore({ documentClient: createDocumentClient(client), tableName });

    const claim = await store.claim(
      { key: 'msg:wamid.lost-answer', field: 'messages' },
      { deadlineMs: Date.now() + 5_000 },
    );

    // The fault really was the applied-then-lost kind, and the SDK really did retry.
    expect(faults.report().appliedFaults).toEqual({ claim: 1 });
    expect(faults.calls[0]?.attempts).toBe(2);
    expect(claim.outcome).toBe('fresh');
    if (claim.outcome !== 'fresh') return;
    await expect(store.complete(claim)).resolves.toMatchObject({ key: 'msg:wamid.lost-answer' });
  });

  it('still has its event effected once and done end to end', async () => {
    const { client } = clientLosingFirstAnswer('claim');
    const p = await createPipeline(
      'lost-answer',
      {},
      {},
      { consumer: { documentClient: createDocumentClient(client) } },
    );
    pipeline = p;
    const [message] = inboundMessages(1, 'lostanswer') as [InboundMessage];
    const body = messagesBody([message]);
    // The generator's key, which the extractor must derive too.
    const key = messageKey(message);
    expect(keysOfBody(body)).toEqual([key]);
    expect((await p.post(body)).statusCode).toBe(200);

    const source = await p.startConsumer();
    await source.waitUntilDrained({ timeoutMs: 20_000 });

    expect(Object.fromEntries(p.effects())).toEqual({ [key]: 1 });
    expect(Object.fromEntries(await p.claims())).toEqual({ [key]: 'done' });
  });
});
