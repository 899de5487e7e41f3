/**
 * Every handler context says when the receiver took the delivery (`receivedAt`): the queue message's
 * `receivedAt` attribute, which the receiver writes on every part, else SQS's enqueue time.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { inboundMessages, messagesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { receivedAtOf } from '../../../functions/consumer/consumer-batch.ts';
import { captureOutput, createHarness, sqsRecord } from '../../support/consumer-harness.ts';

describe('receivedAt', () => {
  const clock = () => Date.parse('2026-12-03T12:00:00.000Z');

  it("is the record's receivedAt attribute, else its enqueue time, else now", () => {
    const record = sqsRecord('{}', 'm-1');
    const attribute = { dataType: 'String', stringValue: '2026-12-03T10:00:00.123Z' };
    expect(receivedAtOf({ ...record, messageAttributes: { receivedAt: attribute } }, clock)).toBe(
      '2026-12-03T10:00:00.123Z',
    );
    expect(receivedAtOf(record, clock)).toBe(new Date(Number(record.attributes.SentTimestamp)).toISOString());
    expect(receivedAtOf({ ...record, attributes: {} }, clock)).toBe('2026-12-03T12:00:00.000Z');
    const unreadable = { dataType: 'String', stringValue: 'yesterday' };
    expect(receivedAtOf({ ...record, messageAttributes: { receivedAt: unreadable } }, clock)).toBe(
      new Date(Number(record.attributes.SentTimestamp)).toISOString(),
    );
  });

  it("reaches the handler's context", async () => {
    const seen: string[] = [];
    const { dynamodb, invoke } = createHarness({ onMessage: ({ receivedAt }) => void seen.push(receivedAt) });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    const record = sqsRecord(messagesBody(inboundMessages(1) as never), 'm-1');
    const receivedAt = { dataType: 'String', stringValue: '2026-12-03T10:00:00.123Z' };
    await captureOutput(() => invoke({ Records: [{ ...record, messageAttributes: { receivedAt } }] }));
    expect(seen).toEqual(['2026-12-03T10:00:00.123Z']);
  });
});
