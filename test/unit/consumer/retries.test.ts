/**
 * When failed records come back: a backoff from the record's receive count after a handler error, the delay a
 * handler asked for with `RetryLater`, one ChangeMessageVisibilityBatch per invocation for all of them; and a
 * visibility change that fails loses nothing (the records already failed) but is counted.
 */

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ChangeMessageVisibilityBatchCommand, SQSServiceException } from '@aws-sdk/client-sqs';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { inboundMessages, messagesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { backoffCeilingSeconds, backoffFloorSeconds } from '../../../contract/retry-budget.ts';
import { DEFAULT_SETTINGS } from '../../../contract/settings.ts';
import { logDigest } from '../../../functions/commons/log-digest.ts';
import { RetryLater, type WebhookHandlers } from '../../../functions/consumer/handler-api.ts';
import {
  captureOutput,
  createHarness,
  DELIVERY_QUEUE_URL,
  emfDocuments,
  metricValue,
  sqsRecord,
} from '../../support/consumer-harness.ts';

const messages = inboundMessages(4);
const keyOf = (index: number) => `msg:${messages[index]?.id}`;

/** Records `rec-<i>` carrying message i, received `receiveCounts[i]` times. */
function event(...receiveCounts: number[]): SQSEvent {
  return {
    Records: receiveCounts.map((count, index) => {
      const record = sqsRecord(messagesBody([messages[index] as (typeof messages)[number]]), `rec-${index}`);
      return { ...record, attributes: { ...record.attributes, ApproximateReceiveCount: String(count) } };
    }),
  };
}

function harness(handlers: WebhookHandlers) {
  const built = createHarness(handlers);
  built.dynamodb.on(PutCommand).resolves({});
  built.dynamodb.on(UpdateCommand).resolves({});
  built.dynamodb.on(DeleteCommand).resolves({});
  built.queue.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
  return built;
}

/** ReceiptHandle → VisibilityTimeout of every visibility change, and the number of requests. */
function visibilityChanges(queue: ReturnType<typeof createHarness>['queue']) {
  const calls = queue.commandCalls(ChangeMessageVisibilityBatchCommand).map((call) => call.args[0].input);
  const timeouts = new Map<string, number>();
  for (const input of calls) {
    expect(input.QueueUrl).toBe(DELIVERY_QUEUE_URL);
    for (const entry of input.Entries ?? [])
      timeouts.set(entry.ReceiptHandle ?? '', entry.VisibilityTimeout ?? -1);
  }
  return { requests: calls.length, timeouts };
}

const failingFor =
  (failures: ReadonlyMap<string, () => Error>) =>
  ({ key }: { key: string }) => {
    const failure = failures.get(key);
    if (failure !== undefined) throw failure();
  };

describe('a handler error', () => {
  it.each([1, 3, 8, 40])(
    'on receive %i brings the record back after a backoff between half the ceiling and the ceiling',
    async (receiveCount) => {
      const { queue, invoke } = harness({
        onMessage: failingFor(new Map([[keyOf(0), () => new Error('down')]])),
      });

      const { result, lines } = await captureOutput(() => invoke(event(receiveCount)));

      expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'rec-0' }]);
      const delay = visibilityChanges(queue).timeouts.get('rh-rec-0') as number;
      expect(delay).toBeGreaterThanOrEqual(backoffFloorSeconds(receiveCount, DEFAULT_SETTINGS));
      expect(delay).toBeLessThanOrEqual(backoffCeilingSeconds(receiveCount, DEFAULT_SETTINGS));
      const documents = emfDocuments(lines);
      expect(metricValue(documents, 'HandlerErrors', 'message')).toBe(1);
      expect(metricValue(documents, 'RetriesDeferred', 'message')).toBe(0);
    },
  );

  it('gives every failed record of the invocation its delay in one request, and none to the records that succeeded', async () => {
    const { queue, invoke } = harness({
      onMessage: failingFor(
        new Map([
          [keyOf(0), () => new Error('down')],
          [keyOf(2), () => new RetryLater({ afterSeconds: 90 })],
          [keyOf(3), () => new Error('down')],
        ]),
      ),
    });

    const { result } = await captureOutput(() => invoke(event(1, 1, 1, 9)));

    expect(result.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual([
      'rec-0',
      'rec-2',
      'rec-3',
    ]);
    const { requests, timeouts } = visibilityChanges(queue);
    expect(requests).toBe(1);
    expect([...timeouts.keys()].sort()).toEqual(['rh-rec-0', 'rh-rec-2', 'rh-rec-3']);
    expect(timeouts.get('rh-rec-2')).toBe(90);
    expect(timeouts.get('rh-rec-3')).toBeGreaterThanOrEqual(backoffFloorSeconds(9, DEFAULT_SETTINGS));
  });
});

describe('RetryLater', () => {
  it('releases the claim and brings the record back after the delay asked for, rounded up, as a deferral', async () => {
    const { dynamodb, queue, invoke } = harness({
      onMessage: failingFor(
        new Map([[keyOf(0), () => new RetryLater({ afterSeconds: 6.2, reason: 'whatsapp-131056' })]]),
      ),
    });

    const { result, lines } = await captureOutput(() => invoke(event(4)));

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'rec-0' }]);
    expect(visibilityChanges(queue).timeouts.get('rh-rec-0')).toBe(7);
    expect(dynamodb.commandCalls(DeleteCommand).map((call) => call.args[0].input.Key?.pk)).toEqual([
      keyOf(0),
    ]);
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(0);
    const documents = emfDocuments(lines);
    expect(metricValue(documents, 'RetriesDeferred', 'message')).toBe(1);
    expect(metricValue(documents, 'ClaimReleases', 'message')).toBe(1);
    expect(metricValue(documents, 'HandlerErrors', 'message')).toBe(0);
    const logged = lines.find((line) => line.includes('Handler deferred the event'));
    expect(JSON.parse(logged ?? '{}')).toMatchObject({
      retryInSeconds: 7,
      reason: 'whatsapp-131056',
      key: logDigest(keyOf(0)),
    });
  });

  it('is capped at retryMaxDelaySeconds', async () => {
    const { queue, invoke } = harness({
      onMessage: failingFor(new Map([[keyOf(0), () => new RetryLater({ afterSeconds: 86_400 })]])),
    });

    await captureOutput(() => invoke(event(1)));

    expect(visibilityChanges(queue).timeouts.get('rh-rec-0')).toBe(DEFAULT_SETTINGS.retryMaxDelaySeconds);
  });

  it('keeps the longest delay when a record also waits for a lease held under its own message', async () => {
    const { dynamodb, queue, invoke } = harness({
      onMessage: failingFor(new Map([[keyOf(1), () => new RetryLater({ afterSeconds: 5 })]])),
    });
    // The record carries two messages: the first is in flight under this same queue message for 40 s more.
    dynamodb.on(PutCommand, { Item: { pk: keyOf(0) } }).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: { httpStatusCode: 400 },
        Item: {
          state: { S: 'processing' },
          owner: { S: 'another-invocation' },
          leaseUntil: { N: String(Date.now() + 40_000) },
          messageId: { S: 'rec-0' },
        },
      }),
    );
    const record = sqsRecord(
      messagesBody([messages[0], messages[1]] as [(typeof messages)[number], (typeof messages)[number]]),
      'rec-0',
    );

    await captureOutput(() => invoke({ Records: [record] }));

    const delay = visibilityChanges(queue).timeouts.get('rh-rec-0') as number;
    expect(delay).toBeGreaterThanOrEqual(41);
    expect(delay).toBeLessThanOrEqual(42);
  });
});

describe('a visibility change that fails', () => {
  const down = () =>
    new SQSServiceException({
      name: 'InternalError',
      $fault: 'server',
      $metadata: { httpStatusCode: 500 },
      message: 'We encountered an internal error.',
    });

  it('still fails the records, which return after the visibility timeout, and counts them', async () => {
    const { queue, invoke } = harness({ onMessage: () => Promise.reject(new Error('down')) });
    queue.on(ChangeMessageVisibilityBatchCommand).rejects(down());

    const { result, lines } = await captureOutput(() => invoke(event(2, 5)));

    expect(result.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual([
      'rec-0',
      'rec-1',
    ]);
    expect(metricValue(emfDocuments(lines), 'RedeliveriesNotScheduled')).toBe(2);
    const warning = lines.find((line) => line.includes('Could not set when failed records come back'));
    expect(JSON.parse(warning ?? '{}')).toMatchObject({ records: 2, errorName: 'InternalError' });
  });

  it('counts only the entries SQS refused when it changed the others', async () => {
    const { queue, invoke } = harness({ onMessage: () => Promise.reject(new Error('down')) });
    queue.on(ChangeMessageVisibilityBatchCommand).resolves({
      Successful: [{ Id: '0' }, { Id: '2' }],
      Failed: [{ Id: '1', Code: 'ReceiptHandleIsInvalid', SenderFault: true }],
    });

    const { result, lines } = await captureOutput(() => invoke(event(1, 1, 1)));

    expect(result.batchItemFailures).toHaveLength(3);
    expect(metricValue(emfDocuments(lines), 'RedeliveriesNotScheduled')).toBe(1);
  });
});
