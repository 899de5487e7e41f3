/**
 * `onRecord` (functions/consumer/handler-api.ts, consumer-batch.ts): one call per record with its fresh events
 * of every kind, every claim completed when it returns and released when it throws; duplicates left out; a
 * status whose ledger write fails left out before the call, never released after it; on an ordered lane,
 * nothing after an event another delivery holds.
 */
import { ChangeMessageVisibilityBatchCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { inboundMessages, messagesBody, statusesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import {
  DeadLetter,
  defineWebhookHandlers,
  hasHandler,
  InvalidHandlersError,
  type RecordContext,
  RetryLater,
} from '../../../functions/consumer/handler-api.ts';
import {
  captureOutput,
  claimHeldElsewhere,
  createHarness,
  emfDocuments,
  metricValue,
  sqsEvent,
} from '../../support/consumer-harness.ts';

const [first, second, third, fourth] = inboundMessages(4) as [
  ReturnType<typeof inboundMessages>[number],
  ReturnType<typeof inboundMessages>[number],
  ReturnType<typeof inboundMessages>[number],
  ReturnType<typeof inboundMessages>[number],
];
const key = (message: { id: string }) => `msg:${message.id}`;

function recordHarness(onRecord: (context: RecordContext) => void | Promise<void>, ordered = false) {
  const calls: string[][] = [];
  const handler = vi.fn(async (context: RecordContext) => {
    calls.push(context.events.map(({ key }) => key));
    await onRecord(context);
  });
  const built = createHarness(
    defineWebhookHandlers({ onRecord: handler }),
    ordered ? { lane: 'message', ordered: true } : {},
  );
  built.dynamodb.on(PutCommand).resolves({});
  built.dynamodb.on(UpdateCommand).resolves({});
  built.dynamodb.on(DeleteCommand).resolves({});
  built.queue.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
  return { ...built, calls, handler };
}

describe('defineWebhookHandlers with onRecord', () => {
  it('takes it alone, and counts every kind as handled', () => {
    const handlers = defineWebhookHandlers({ onRecord: () => {} });
    for (const kind of ['message', 'status', 'error', 'management'] as const) {
      expect(hasHandler(handlers, { kind, field: 'messages' })).toBe(true);
    }
  });

  it('refuses it beside any other handler or a burst window', () => {
    expect(() => defineWebhookHandlers({ onRecord: () => {}, onStatus: () => {} })).toThrow(
      'onRecord takes every fresh event of a record: define it alone, without onStatus.',
    );
    expect(() => defineWebhookHandlers({ onRecord: () => {}, onConversationTurn: () => {} })).toThrow(
      InvalidHandlersError,
    );
    expect(() => defineWebhookHandlers({ onRecord: () => {}, burstWindowMs: 0 } as never)).toThrow(
      /without burstWindowMs/,
    );
  });
});

describe('a record handler in the consumer', () => {
  it("hands each record's fresh events over in one call, in body order, and completes every claim", async () => {
    const { dynamodb, invoke, calls, handler } = recordHarness(() => {});
    dynamodb.on(PutCommand, { Item: { pk: key(second) } }).rejects(claimHeldElsewhere('done'));
    const { result, lines } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody([first, second, third])], ['rec-2', messagesBody([fourth])])),
    );
    expect(result).toEqual({ batchItemFailures: [] });
    expect(handler).toHaveBeenCalledTimes(2);
    expect(calls.sort()).toEqual([[key(first), key(third)], [key(fourth)]].sort());
    const context = handler.mock.calls.find(([c]) => c.messageId === 'rec-1')?.[0];
    expect(context?.events.map(({ kind, claimedAs, smokeTest }) => [kind, claimedAs, smokeTest])).toEqual([
      ['message', 'fresh', false],
      ['message', 'fresh', false],
    ]);
    expect(context?.receivedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    // One completion per fresh event, no release.
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(3);
    expect(dynamodb.commandCalls(DeleteCommand)).toHaveLength(0);
    expect(metricValue(emfDocuments(lines), 'EventsFresh', 'message')).toBe(3);
    expect(metricValue(emfDocuments(lines), 'EventsDuplicate', 'message')).toBe(1);
  });

  it('releases every claim of the record when it throws, once, and brings the record back', async () => {
    const { dynamodb, invoke, handler } = recordHarness(() => {
      throw new Error('downstream down');
    });
    const { result, lines } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody([first, second, third])])),
    );
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(dynamodb.commandCalls(DeleteCommand)).toHaveLength(3);
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(0);
    expect(metricValue(emfDocuments(lines), 'HandlerErrors', 'message')).toBe(3);
  });

  it("brings the record back after a RetryLater's delay, and moves it to the DLQ on a DeadLetter's receive", async () => {
    const later = recordHarness(() => {
      throw new RetryLater({ afterSeconds: 90, reason: 'busy' });
    });
    const { result } = await captureOutput(() =>
      later.invoke(sqsEvent(['rec-1', messagesBody([first, second])])),
    );
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    const [change] = later.queue.commandCalls(ChangeMessageVisibilityBatchCommand);
    expect(change?.args[0].input.Entries?.[0]?.VisibilityTimeout).toBe(90);
    expect(later.dynamodb.commandCalls(DeleteCommand)).toHaveLength(2);

    const refused = recordHarness(() => {
      throw new DeadLetter({ reason: 'http-422' });
    });
    const dead = await captureOutput(() =>
      refused.invoke(sqsEvent(['rec-1', messagesBody([first, second])])),
    );
    expect(refused.handler).toHaveBeenCalledTimes(1);
    expect(refused.dynamodb.commandCalls(DeleteCommand)).toHaveLength(2);
    const failed = dead.lines.filter((line) =>
      line.includes("Record handler failed; its events' claims are released"),
    );
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0] as string)).toMatchObject({
      reason: 'http-422',
      deadLetterNow: true,
      events: 2,
    });
  });

  it('on an ordered lane, stops before an event another delivery holds: nothing after it is handed over', async () => {
    const { dynamodb, invoke, calls } = recordHarness(() => {}, true);
    dynamodb.on(PutCommand, { Item: { pk: key(second) } }).rejects(claimHeldElsewhere('processing'));
    const { result } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody([first, second, third])])),
    );
    expect(calls).toEqual([[key(first)]]);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    // The first completed; the third, claimed but held behind the second, released unrun.
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(1);
    expect(dynamodb.commandCalls(DeleteCommand).map((call) => call.args[0].input.Key?.pk)).toEqual([
      key(third),
    ]);
  });

  it('merges every status into the ledger before the call, and leaves out one whose ledger write fails', async () => {
    const { dynamodb, invoke, calls } = recordHarness(() => {});
    const view = {
      currentStatus: 'read',
      currentRank: 4,
      change_read: 'advanced',
      at_read: 1749416400,
      wamid: 'wamid.s1',
    };
    const ledgerWrites: string[] = [];
    dynamodb.on(UpdateCommand).callsFake((input: { Key: { pk: string } }) => {
      if (!input.Key.pk.includes('ledger:')) return {};
      ledgerWrites.push(input.Key.pk);
      if (input.Key.pk.includes('wamid.s2')) {
        throw Object.assign(new Error('ledger unavailable'), { name: 'InternalServerError' });
      }
      return { Attributes: view };
    });
    const statuses = statusesBody([
      { id: 'wamid.s1', status: 'read', recipientId: '16505550001', timestamp: '1749416400' },
      { id: 'wamid.s2', status: 'read', recipientId: '16505550002', timestamp: '1749416401' },
    ]);

    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', statuses])));

    // The call had the first status only; the second was released before it and its record comes back.
    expect(ledgerWrites.map((pk) => pk.replace(/^.*ledger:/, ''))).toEqual(['wamid.s1', 'wamid.s2']);
    expect(calls).toEqual([['st:wamid.s1:read']]);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    expect(dynamodb.commandCalls(DeleteCommand).map((call) => call.args[0].input.Key?.pk)).toEqual([
      'st:wamid.s2:read',
    ]);
  });

  it('is not called for a record with nothing fresh', async () => {
    const { dynamodb, invoke, handler } = recordHarness(() => {});
    dynamodb.on(PutCommand).rejects(claimHeldElsewhere('done'));
    const { result } = await captureOutput(() => invoke(sqsEvent(['rec-1', messagesBody([first, second])])));
    expect(result).toEqual({ batchItemFailures: [] });
    expect(handler).not.toHaveBeenCalled();
  });
});
