/**
 * Per-number metrics (docs/design.md §10): the numbers a subscriber declares in `numbers` get their own fresh,
 * duplicate, handler-error and wait metrics (`PhoneNumberId` dimension); other numbers add none.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { envelope, inboundMessages, messagesChange } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { ConsumerTally } from '../../../functions/consumer/consumer-tally.ts';
import { captureOutput, createHarness, emfDocuments, sqsEvent } from '../../support/consumer-harness.ts';

const SAO_PAULO = { display_phone_number: '551155550100', phone_number_id: '201' };
const MONTERREY = { display_phone_number: '528155550100', phone_number_id: '202' };

describe('ConsumerTally per number', () => {
  it('counts fresh, duplicate and failed events and waits of declared numbers only, besides their fields', () => {
    const tally = new ConsumerTally(['201']);
    const ofNumber = (phoneNumberId: string | undefined) => ({ metricField: 'message', phoneNumberId });
    tally.countForEvent('EventsFresh', ofNumber('201'));
    tally.countForEvent('EventsFresh', ofNumber('202'));
    tally.countForEvent('EventsDuplicate', ofNumber('201'));
    tally.countForEvent('HandlerErrors', ofNumber('201'));
    tally.countForEvent('LeaseTakeovers', ofNumber('201'));
    tally.countForEvent('EventsFresh', ofNumber(undefined));
    tally.observeWait(40, '201');
    tally.observeWait(70, '202');

    expect(tally.toRecord()).toEqual({
      'EventsFresh/message': 3,
      'EventsDuplicate/message': 1,
      'HandlerErrors/message': 1,
      'LeaseTakeovers/message': 1,
      'EventsFresh/number 201': 1,
      'EventsDuplicate/number 201': 1,
      'HandlerErrors/number 201': 1,
    });
    const { waitsMs, waitsMsByNumber } = tally.snapshot();
    expect(waitsMs).toEqual([40, 70]);
    expect([...waitsMsByNumber]).toEqual([['201', [40]]]);
  });
});

describe('the consumer of a subscriber with numbers', () => {
  it("emits its declared number's counts and waits under PhoneNumberId, and nothing per number for another", async () => {
    const { dynamodb, invoke } = createHarness(
      { onMessage: () => undefined },
      { subscriberName: 'latam', keyNamespace: 'latam', numbers: ['201'], wabas: ['102290129340398'] },
    );
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    const body = envelope([
      messagesChange(inboundMessages(2, 'sp'), SAO_PAULO),
      messagesChange(inboundMessages(1, 'mty'), MONTERREY),
    ]);

    const { lines } = await captureOutput(() => invoke(sqsEvent(['rec-1', body])));

    const documents = emfDocuments(lines);
    const perNumber = documents.filter(({ dimensions }) => dimensions.flat().includes('PhoneNumberId'));
    expect(perNumber.map(({ values }) => values.PhoneNumberId)).toEqual(['201', '201']);
    const [counts, waits] = perNumber;
    expect(counts?.dimensions).toEqual([['service', 'Subscriber', 'PhoneNumberId']]);
    expect(counts?.values.EventsFresh).toBe(2);
    expect(waits?.dimensions).toEqual([['service', 'Subscriber', 'Lane', 'PhoneNumberId']]);
    expect(waits?.values.EventWaitTime).toEqual(expect.any(Number));
    // The field's own count holds both numbers.
    const messageCounts = documents.find(({ values }) => values.Field === 'message');
    expect(messageCounts?.values.EventsFresh).toBe(3);
  });
});
