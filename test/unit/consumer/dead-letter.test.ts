/**
 * `DeadLetter` (functions/consumer/handler-api.ts): a handler that gives up on an event has its claim
 * released and its record retried until the receive it named, on which the consumer moves the record to the
 * lane's DLQ itself, with the reason and details, and reports it done; if the move fails, or the lane has no
 * DLQ, the record stays failed and comes back.
 */
import { ChangeMessageVisibilityBatchCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { inboundMessages, messagesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { ConsumerMetric } from '../../../contract/metric-names.ts';
import { DeadLetter } from '../../../functions/consumer/handler-api.ts';
import {
  DEAD_LETTER_DETAILS_ATTRIBUTE,
  DEAD_LETTER_REASON_ATTRIBUTE,
  DEAD_LETTERED_BY_ATTRIBUTE,
} from '../../../functions/queue/sqs-conversation-dead-letters.ts';
import {
  captureOutput,
  createHarness,
  emfDocuments,
  metricValue,
  sqsRecord,
} from '../../support/consumer-harness.ts';

const DLQ_URL = 'https://sqs.eu-west-1.amazonaws.com/000000000000/webhook-deliveries-dlq';
const [message] = inboundMessages(1);

function received(count: number) {
  const record = sqsRecord(messagesBody([message as never]), 'rec-1');
  return {
    Records: [{ ...record, attributes: { ...record.attributes, ApproximateReceiveCount: String(count) } }],
  };
}

function givingUp(withDlq = true) {
  const built = createHarness(
    {
      onMessage: () => {
        throw new DeadLetter({ reason: 'crm-422', afterReceives: 3, details: { status: '422' } });
      },
    },
    withDlq ? { laneDeadLetters: { queueUrl: DLQ_URL, maxReceives: 60 } } : {},
  );
  built.dynamodb.on(PutCommand).resolves({});
  built.dynamodb.on(UpdateCommand).resolves({});
  built.dynamodb.on(DeleteCommand).resolves({});
  built.queue.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
  return built;
}

describe('DeadLetter', () => {
  it('retries the record before the receive the handler named, its claim released', async () => {
    const { dynamodb, queue, invoke } = givingUp();
    const { result } = await captureOutput(() => invoke(received(2)));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-1' }] });
    expect(queue.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
    expect(dynamodb.commandCalls(DeleteCommand)).toHaveLength(1);
  });

  it('moves the record to the DLQ on that receive, with the reason and details, and reports it done', async () => {
    const { dynamodb, queue, invoke } = givingUp();
    const { result, lines } = await captureOutput(() => invoke(received(3)));
    expect(result).toEqual({ batchItemFailures: [] });
    const [move] = queue.commandCalls(SendMessageBatchCommand);
    expect(move?.args[0].input.QueueUrl).toBe(DLQ_URL);
    const [entry] = move?.args[0].input.Entries ?? [];
    expect(entry?.MessageBody).toBe(received(3).Records[0]?.body);
    expect(entry?.MessageAttributes).toMatchObject({
      [DEAD_LETTERED_BY_ATTRIBUTE]: { StringValue: 'consumer' },
      [DEAD_LETTER_REASON_ATTRIBUTE]: { StringValue: 'crm-422' },
      [DEAD_LETTER_DETAILS_ATTRIBUTE]: { StringValue: '{"status":"422"}' },
    });
    expect(dynamodb.commandCalls(DeleteCommand)).toHaveLength(1);
    expect(metricValue(emfDocuments(lines), ConsumerMetric.RecordsDeadLettered)).toBe(1);
    // It is not also brought back: its visibility is left alone.
    expect(queue.commandCalls(ChangeMessageVisibilityBatchCommand)).toHaveLength(0);
  });

  it('keeps the record failed when the move fails, or the lane has no DLQ', async () => {
    const failing = givingUp();
    failing.queue.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: '0', Code: 'InternalError', SenderFault: false }],
    });
    expect((await captureOutput(() => failing.invoke(received(3)))).result).toEqual({
      batchItemFailures: [{ itemIdentifier: 'rec-1' }],
    });
    const without = givingUp(false);
    expect((await captureOutput(() => without.invoke(received(5)))).result).toEqual({
      batchItemFailures: [{ itemIdentifier: 'rec-1' }],
    });
    expect(without.queue.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('refuses a receive below 1 and details beyond 2 KiB', () => {
    expect(() => new DeadLetter({ reason: 'x', afterReceives: 0 })).toThrow(RangeError);
    expect(() => new DeadLetter({ reason: 'x', details: { answer: 'x'.repeat(2_100) } })).toThrow(RangeError);
    expect(new DeadLetter({ reason: 'x' }).afterReceives).toBe(1);
  });
});
