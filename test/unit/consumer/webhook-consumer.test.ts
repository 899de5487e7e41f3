import {
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
} from '@aws-sdk/client-dynamodb';
import {
  ChangeMessageVisibilityBatchCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
} from '@aws-sdk/client-sqs';
import { DeleteCommand, PutCommand, type PutCommandInput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { inboundMessages, messagesBody, statusesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { logDigest } from '../../../functions/commons/log-digest.ts';
import type { WebhookEventContext } from '../../../functions/consumer/handler-api.ts';
import {
  captureOutput,
  claimHeldElsewhere,
  createHarness,
  DELIVERY_QUEUE_URL,
  DLQ_URL,
  emfDocuments,
  metricValue,
  sqsEvent,
} from '../../support/consumer-harness.ts';

const throttled = () =>
  new ProvisionedThroughputExceededException({
    message: 'Rate exceeded',
    $metadata: { httpStatusCode: 400 },
  });

const [first, second, third] = inboundMessages(3) as [
  ReturnType<typeof inboundMessages>[number],
  ReturnType<typeof inboundMessages>[number],
  ReturnType<typeof inboundMessages>[number],
];

function recorder() {
  const keys: string[] = [];
  const handle = vi.fn(({ key }: WebhookEventContext) => {
    keys.push(key);
  });
  return { keys, handle };
}

function putKeys(dynamodb: ReturnType<typeof createHarness>['dynamodb']): string[] {
  return dynamodb
    .commandCalls(PutCommand)
    .map((call) => String((call.args[0].input as PutCommandInput).Item?.pk));
}

describe('consumer: claim failures', () => {
  it('reports a record whose claim is throttled, without throwing, and handles the others', async () => {
    const { keys, handle } = recorder();
    const { dynamodb, invoke } = createHarness({ onMessage: handle });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(PutCommand, { Item: { pk: `msg:${second.id}` } }).rejects(throttled());
    dynamodb.on(UpdateCommand).resolves({});

    const { result, lines } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody([first])], ['rec-2', messagesBody([second])])),
    );

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-2' }] });
    expect(keys).toEqual([`msg:${first.id}`]);
    const completed = dynamodb.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key?.pk);
    expect(completed).toEqual([`msg:${first.id}`]);
    expect(metricValue(emfDocuments(lines), 'EventsFresh', 'message')).toBe(1);
    expect(metricValue(emfDocuments(lines), 'ClaimFailures')).toBe(1);
  });

  it('fails every record that holds events when the whole batch cannot be claimed', async () => {
    const { keys, handle } = recorder();
    const { dynamodb, invoke } = createHarness({ onMessage: handle });
    dynamodb.on(PutCommand).rejects(throttled());

    const { result } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody([first])], ['rec-2', messagesBody([second, third])])),
    );

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'rec-1' }, { itemIdentifier: 'rec-2' }]);
    expect(keys).toEqual([]);
  });
});

describe('consumer: handler failures', () => {
  it('releases the claim with its owner condition, reports the record and still handles its other events', async () => {
    const handled: string[] = [];
    const { dynamodb, invoke } = createHarness({
      onMessage: ({ key }) => {
        if (key === `msg:${first.id}`) throw new Error('CRM unavailable');
        handled.push(key);
      },
    });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    dynamodb.on(DeleteCommand).resolves({});

    const { result, lines } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody([first, second])], ['rec-2', messagesBody([third])])),
    );

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    expect(handled.sort()).toEqual([`msg:${second.id}`, `msg:${third.id}`].sort());

    const put = dynamodb
      .commandCalls(PutCommand)
      .find((call) => call.args[0].input.Item?.pk === `msg:${first.id}`);
    const deletes = dynamodb.commandCalls(DeleteCommand);
    expect(deletes).toHaveLength(1);
    const release = deletes[0]?.args[0].input;
    expect(release?.Key).toEqual({ pk: `msg:${first.id}` });
    expect(release?.ConditionExpression).toBe('#owner = :me');
    expect(release?.ExpressionAttributeNames).toEqual({ '#owner': 'owner' });
    expect(release?.ExpressionAttributeValues?.[':me']).toBe(put?.args[0].input.Item?.owner);
    // The failed event is not completed; the other two are.
    const completed = dynamodb.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key?.pk);
    expect(completed.sort()).toEqual([`msg:${second.id}`, `msg:${third.id}`].sort());

    const documents = emfDocuments(lines);
    expect(metricValue(documents, 'HandlerErrors', 'message')).toBe(1);
    expect(metricValue(documents, 'ClaimReleases', 'message')).toBe(1);
    expect(metricValue(documents, 'EventsFresh', 'message')).toBe(3);
  });

  it('fails every record when every record fails, as a list rather than an exception', async () => {
    const { dynamodb, invoke } = createHarness({
      onMessage: () => {
        throw new Error('down');
      },
    });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(DeleteCommand).resolves({});

    const { result } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody([first])], ['rec-2', messagesBody([second])])),
    );

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'rec-1' }, { itemIdentifier: 'rec-2' }]);
  });
});

describe('consumer: completion failures', () => {
  it('retries a throttled complete, then counts the failure, without re-running the effect or failing the record', async () => {
    const { keys, handle } = recorder();
    const { dynamodb, invoke } = createHarness({ onMessage: handle });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).rejects(throttled());

    const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-1', messagesBody([first])])));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(handle).toHaveBeenCalledTimes(1);
    expect(keys).toEqual([`msg:${first.id}`]);
    // 1 attempt + 2 retries (the harness's policy)
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(3);
    expect(dynamodb.commandCalls(DeleteCommand)).toHaveLength(0);
    expect(metricValue(emfDocuments(lines), 'CompletionFailures')).toBe(1);
  });

  it('succeeds on a retry of complete after a throttled first attempt', async () => {
    const { handle } = recorder();
    const { dynamodb, invoke } = createHarness({ onMessage: handle });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).rejectsOnce(throttled()).resolves({});

    const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-1', messagesBody([first])])));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(2);
    expect(metricValue(emfDocuments(lines), 'CompletionFailures')).toBe(0);
  });

  it('does not retry a complete whose claim was taken over by another worker', async () => {
    const { handle } = recorder();
    const { dynamodb, invoke } = createHarness({ onMessage: handle });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: { httpStatusCode: 400 },
        Item: { owner: { S: 'another-worker' }, state: { S: 'processing' } },
      }),
    );

    const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-1', messagesBody([first])])));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(handle).toHaveBeenCalledTimes(1);
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(1);
    expect(metricValue(emfDocuments(lines), 'CompletionFailures')).toBe(1);
    expect(lines.some((line) => line.includes('"claimLost":true'))).toBe(true);
  });
});

describe('consumer: unusable records', () => {
  it.each([
    ['invalid-json', '{"object":"whatsapp_business_account","entry":[{"id":"1","chan'],
    ['not-whatsapp-envelope', '{"object":"page","entry":[]}'],
  ])(
    'quarantines a %s body to the DLQ with its reason, once, and acknowledges the record',
    async (reason, body) => {
      const { keys, handle } = recorder();
      const { dynamodb, queue, invoke } = createHarness({ onMessage: handle });
      dynamodb.on(PutCommand).resolves({});
      dynamodb.on(UpdateCommand).resolves({});

      const { result, lines } = await captureOutput(() =>
        invoke(sqsEvent(['rec-bad', body], ['rec-good', messagesBody([first])])),
      );

      expect(result).toEqual({ batchItemFailures: [] });
      expect(keys).toEqual([`msg:${first.id}`]);
      const sends = queue.commandCalls(SendMessageBatchCommand);
      expect(sends).toHaveLength(1);
      const input = sends[0]?.args[0].input as SendMessageBatchCommandInput;
      expect(input.QueueUrl).toBe(DLQ_URL);
      const entry = input.Entries?.[0];
      expect(entry?.MessageAttributes?.reason?.StringValue).toBe(reason);
      expect(entry?.MessageAttributes?.deliveryId?.StringValue).toBe('rec-bad');
      expect(Buffer.from(entry?.MessageBody ?? '', 'base64').toString('utf8')).toBe(body);
      expect(metricValue(emfDocuments(lines), 'Quarantined')).toBe(1);
    },
  );

  it('fails the record when the DLQ cannot take it, so that it is not lost', async () => {
    const { dynamodb, queue, invoke } = createHarness({});
    dynamodb.on(PutCommand).resolves({});
    queue
      .on(SendMessageBatchCommand)
      .rejects(Object.assign(new Error('throttled'), { name: 'RequestThrottled' }));

    const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-bad', 'not json'])));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-bad' }] });
    expect(metricValue(emfDocuments(lines), 'Quarantined')).toBe(0);
  });
});

describe('consumer: events without identity', () => {
  const idless = (text: string) => ({
    from: '16505551234',
    timestamp: '1781175600',
    type: 'text',
    text: { body: text },
  });
  const bodyWith = (messages: unknown[]) =>
    JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '104882371930562',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
                messages,
              },
            },
          ],
        },
      ],
    });

  it('runs none of three id-less messages, claims no `msg:-`, quarantines the record once and runs its keyed message', async () => {
    const { keys, handle } = recorder();
    const { dynamodb, queue, invoke } = createHarness({ onMessage: handle });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    const body = bodyWith([idless('one'), idless('two'), { ...idless('three'), id: '' }, first]);

    const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-1', body])));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(keys).toEqual([`msg:${first.id}`]);
    expect(putKeys(dynamodb)).toEqual([`msg:${first.id}`]);
    const sends = queue.commandCalls(SendMessageBatchCommand);
    expect(sends).toHaveLength(1);
    const input = sends[0]?.args[0].input as SendMessageBatchCommandInput;
    const entry = input.Entries?.[0];
    expect(entry?.MessageAttributes?.reason?.StringValue).toBe('event-without-id');
    expect(Buffer.from(entry?.MessageBody ?? '', 'base64').toString('utf8')).toBe(body);
    expect(metricValue(emfDocuments(lines), 'Quarantined')).toBe(1);
    const logged = lines.join('\n');
    expect(logged).toContain('message without a usable id');
    expect(logged).not.toContain('16505551234');
  });

  it('fails the record when the quarantine cannot take it, so that the id-less event is not lost', async () => {
    const { dynamodb, queue, invoke } = createHarness({});
    dynamodb.on(PutCommand).resolves({});
    queue
      .on(SendMessageBatchCommand)
      .rejects(Object.assign(new Error('throttled'), { name: 'RequestThrottled' }));

    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', bodyWith([idless('x')])])));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
  });
});

describe('consumer: repeated keys', () => {
  it('runs the handler once for a key repeated within a body and across records, with one claim request', async () => {
    const { keys, handle } = recorder();
    const { dynamodb, invoke } = createHarness({ onMessage: handle });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});

    const { result, lines } = await captureOutput(() =>
      invoke(
        sqsEvent(
          ['rec-1', messagesBody([first, first])],
          ['rec-2', messagesBody([first])],
          ['rec-3', messagesBody([second, first])],
        ),
      ),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(keys.sort()).toEqual([`msg:${first.id}`, `msg:${second.id}`].sort());
    expect(putKeys(dynamodb).sort()).toEqual([`msg:${first.id}`, `msg:${second.id}`].sort());
    const documents = emfDocuments(lines);
    expect(metricValue(documents, 'EventsFresh', 'message')).toBe(2);
    expect(metricValue(documents, 'EventsDuplicate', 'message')).toBe(3);
  });

  it('skips duplicate-done and duplicate-in-flight events and counts them apart', async () => {
    const { keys, handle } = recorder();
    const { dynamodb, invoke } = createHarness({ onMessage: handle });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(PutCommand, { Item: { pk: `msg:${first.id}` } }).rejects(claimHeldElsewhere('done', 60_000));
    dynamodb
      .on(PutCommand, { Item: { pk: `msg:${second.id}` } })
      .rejects(claimHeldElsewhere('processing', 60_000));
    dynamodb.on(UpdateCommand).resolves({});

    const { result, lines } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody([first, second, third])])),
    );

    // The record stays for its event in flight: it comes back when the holder's lease ends.
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    expect(keys).toEqual([`msg:${third.id}`]);
    const documents = emfDocuments(lines);
    expect(metricValue(documents, 'EventsDuplicate', 'message')).toBe(1);
    expect(metricValue(documents, 'EventsDuplicateInFlight', 'message')).toBe(1);
    expect(metricValue(documents, 'EventsFresh', 'message')).toBe(1);
    const skipped = lines.filter((line) => line.includes('Duplicate event skipped'));
    expect(
      skipped.some((line) => line.includes(logDigest(`msg:${first.id}`)) && line.includes('"level":"INFO"')),
    ).toBe(true);
    const waiting = lines.filter((line) => line.includes('the record waits for the lease'));
    expect(waiting.some((line) => line.includes(logDigest(`msg:${second.id}`)))).toBe(true);
  });
});

describe('consumer: a duplicate in flight', () => {
  const inFlight = (holder: string | undefined, leaseUntil: number) =>
    new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      $metadata: { httpStatusCode: 400 },
      Item: {
        state: { S: 'processing' },
        owner: { S: 'the-other-invocation' },
        leaseUntil: { N: String(leaseUntil) },
        ...(holder === undefined ? {} : { messageId: { S: holder } }),
      },
    });

  it('stores the queue message id with every claim', async () => {
    const { dynamodb, invoke } = createHarness({});
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody([first])], ['rec-2', messagesBody([second])])),
    );
    const stored = dynamodb.commandCalls(PutCommand).map((call) => call.args[0].input.Item);
    expect(stored.map((item) => [item?.pk, item?.messageId])).toEqual([
      [`msg:${first.id}`, 'rec-1'],
      [`msg:${second.id}`, 'rec-2'],
    ]);
  });

  it.each([
    ['this same queue message', 'rec-1'],
    ['a holder that recorded no message id', undefined],
  ])('held by %s: keeps the record and brings it back when the lease ends', async (_label, holder) => {
    const { keys, handle } = recorder();
    const { dynamodb, queue, invoke } = createHarness({ onMessage: handle });
    const leaseUntil = Date.now() + 20_500;
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(PutCommand, { Item: { pk: `msg:${first.id}` } }).rejects(inFlight(holder, leaseUntil));
    dynamodb.on(UpdateCommand).resolves({});
    queue.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [{ Id: '0' }], Failed: [] });

    const { result, lines } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody([first, second])])),
    );

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    expect(keys).toEqual([`msg:${second.id}`]);
    const changes = queue.commandCalls(ChangeMessageVisibilityBatchCommand);
    expect(changes).toHaveLength(1);
    const input = changes[0]?.args[0].input;
    expect(input?.QueueUrl).toBe(DELIVERY_QUEUE_URL);
    expect(input?.Entries).toHaveLength(1);
    expect(input?.Entries?.[0]?.ReceiptHandle).toBe('rh-rec-1');
    // 20.5 s of lease left, rounded up, plus one second past it.
    expect(input?.Entries?.[0]?.VisibilityTimeout).toBeGreaterThanOrEqual(21);
    expect(input?.Entries?.[0]?.VisibilityTimeout).toBeLessThanOrEqual(22);
    expect(metricValue(emfDocuments(lines), 'EventsDuplicateInFlight', 'message')).toBe(1);
  });

  it('still fails the record when SQS refuses to change its visibility: it returns after the visibility timeout', async () => {
    const { dynamodb, queue, invoke } = createHarness({});
    dynamodb.on(PutCommand).rejects(inFlight('rec-1', Date.now() + 5_000));
    queue.on(ChangeMessageVisibilityBatchCommand).rejects(throttled());

    const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-1', messagesBody([first])])));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    expect(lines.some((line) => line.includes('Could not set when failed records come back'))).toBe(true);
  });

  it('keeps every record carrying a key found in flight, the holder’s own and the other’s, with one claim request', async () => {
    const { dynamodb, queue, invoke } = createHarness({});
    // msg-001 holds the claim from an earlier delivery whose release failed; SQS now delivers msg-001 again
    // beside msg-003, a Meta retry of the same event, in one batch. The key is claimed once, for msg-003.
    dynamodb.on(PutCommand).rejects(inFlight('msg-001', Date.now() + 5_000));
    queue.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [{ Id: '0' }], Failed: [] });
    const body = messagesBody([first]);

    const { result } = await captureOutput(() => invoke(sqsEvent(['msg-003', body], ['msg-001', body])));

    expect(dynamodb.commandCalls(PutCommand)).toHaveLength(1);
    expect(result.batchItemFailures.map(({ itemIdentifier }) => itemIdentifier).sort()).toEqual([
      'msg-001',
      'msg-003',
    ]);
    const entries = queue.commandCalls(ChangeMessageVisibilityBatchCommand)[0]?.args[0].input.Entries;
    expect(entries?.map((entry) => entry.ReceiptHandle).sort()).toEqual(['rh-msg-001', 'rh-msg-003']);
  });

  it('fails every record carrying a key whose one claim request failed: any of them may hold it', async () => {
    const { dynamodb, invoke } = createHarness({});
    dynamodb.on(PutCommand).rejects(throttled());
    const body = messagesBody([first]);

    const { result } = await captureOutput(() => invoke(sqsEvent(['msg-003', body], ['msg-001', body])));

    expect(dynamodb.commandCalls(PutCommand)).toHaveLength(1);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'msg-003' }, { itemIdentifier: 'msg-001' }]);
  });

  it('keeps the record until the lease ends even when another queue message holds the claim', async () => {
    const { dynamodb, queue, invoke } = createHarness({});
    dynamodb.on(PutCommand).rejects(inFlight('rec-other', Date.now() + 5_000));
    queue.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [{ Id: '0' }], Failed: [] });

    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', messagesBody([first])])));

    // SQS may hand this record's own message to another invocation too: acknowledging it could delete the
    // message that later holds the claim, through this older receipt handle (check:protocol seed 9147).
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    const [change] = queue.commandCalls(ChangeMessageVisibilityBatchCommand);
    expect(change?.args[0].input.Entries?.[0]?.VisibilityTimeout).toBeGreaterThanOrEqual(5);
  });
});

describe('consumer: statuses and unregistered handlers', () => {
  const status = { id: 'wamid.out1', status: 'read', recipientId: '16505550001', timestamp: '1749416400' };

  const ledgerItem = {
    Attributes: {
      wamid: 'wamid.out1',
      currentStatus: 'read',
      currentRank: 3,
      at_read: 1749416400,
      change_read: 'advanced',
    },
  };

  it('records an event without a registered handler as done in one write: no lease, no ledger, no completion', async () => {
    const { dynamodb, invoke } = createHarness({ onMessage: () => undefined });
    dynamodb.on(PutCommand).resolves({});

    const { result, lines } = await captureOutput(() => invoke(sqsEvent(['rec-1', statusesBody([status])])));

    expect(result).toEqual({ batchItemFailures: [] });
    const puts = dynamodb.commandCalls(PutCommand).map((call) => call.args[0].input.Item);
    expect(puts).toHaveLength(1);
    expect(puts[0]).toMatchObject({ pk: 'st:wamid.out1:read', state: 'done', messageId: 'rec-1' });
    expect(puts[0]?.leaseUntil).toBeUndefined();
    expect(puts[0]?.doneAt).toEqual(expect.any(Number));
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(0);
    expect(metricValue(emfDocuments(lines), 'EventsFresh', 'status')).toBe(1);
  });

  it('with statusLedger "always", a status without handler is claimed, recorded in the ledger and completed', async () => {
    const { dynamodb, invoke } = createHarness({}, { statusLedger: 'always' });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    dynamodb.on(UpdateCommand, { Key: { pk: 'ledger:wamid.out1' } }).resolves(ledgerItem);

    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', statusesBody([status])])));

    expect(result).toEqual({ batchItemFailures: [] });
    const updates = dynamodb.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key?.pk);
    expect(updates).toEqual(['ledger:wamid.out1', 'st:wamid.out1:read']);
    expect(dynamodb.commandCalls(PutCommand)[0]?.args[0].input.Item?.state).toBe('processing');
  });

  it('with claimUnhandledEvents off, an event without handler costs no request and no metric', async () => {
    const { dynamodb, invoke } = createHarness(
      { onMessage: () => undefined },
      { claimUnhandledEvents: false },
    );
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});

    const { result, lines } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', statusesBody([status])], ['rec-2', messagesBody([first])])),
    );

    expect(result).toEqual({ batchItemFailures: [] });
    const claimed = dynamodb.commandCalls(PutCommand).map((call) => call.args[0].input.Item?.pk);
    expect(claimed).toEqual([`msg:${first.id}`]);
    expect(metricValue(emfDocuments(lines), 'EventsFresh', 'status')).toBe(0);
  });

  it('releases the claim and fails the record when the ledger write fails, without calling the handler', async () => {
    const onStatus = vi.fn();
    const { dynamodb, invoke } = createHarness({ onStatus });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).rejects(throttled());
    dynamodb.on(DeleteCommand).resolves({});

    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', statusesBody([status])])));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    expect(onStatus).not.toHaveBeenCalled();
    expect(dynamodb.commandCalls(DeleteCommand)[0]?.args[0].input.Key).toEqual({ pk: 'st:wamid.out1:read' });
  });
});
