/** Handlers' own counts (`context.metrics`): checked, tallied, emitted once per invocation and dimension value. */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { inboundMessages, messagesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { ConsumerTally } from '../../../functions/consumer/consumer-tally.ts';
import { handlerMetricsOf, InvalidMetricError } from '../../../functions/consumer/handler-metrics.ts';
import { captureOutput, createHarness, emfDocuments, sqsEvent } from '../../support/consumer-harness.ts';

describe('handlerMetricsOf', () => {
  it('adds counts by name and dimension value', () => {
    const tally = new ConsumerTally();
    const metrics = handlerMetricsOf(tally);
    metrics.count('TicketsOpened', { name: 'Queue', value: 'support' });
    metrics.count('TicketsOpened', { name: 'Queue', value: 'support' }, 2);
    metrics.count('TicketsOpened', { name: 'Queue', value: 'sales' });
    metrics.count('RepliesSent');
    expect(tally.toRecord()).toEqual({
      'TicketsOpened/Queue support': 3,
      'TicketsOpened/Queue sales': 1,
      RepliesSent: 1,
    });
  });

  it.each([
    ['a name with a space', () => handlerMetricsOf(new ConsumerTally()).count('Tickets opened')],
    ["one of this project's names", () => handlerMetricsOf(new ConsumerTally()).count('EventsFresh')],
    [
      "one of this project's dimensions",
      () => handlerMetricsOf(new ConsumerTally()).count('T', { name: 'Field', value: 'x' }),
    ],
    [
      'an empty dimension value',
      () => handlerMetricsOf(new ConsumerTally()).count('T', { name: 'Queue', value: '' }),
    ],
    [
      'a value that is no number',
      () => handlerMetricsOf(new ConsumerTally()).count('T', undefined, Number.NaN),
    ],
  ])('refuses %s', (_, count) => {
    expect(count).toThrow(InvalidMetricError);
  });
});

describe("a handler's own counts in the consumer", () => {
  it('reach the EMF output at the end of the invocation, one document per dimension value', async () => {
    const { dynamodb, invoke } = createHarness({
      onMessage: ({ metrics }) => metrics.count('TicketsOpened', { name: 'Queue', value: 'support' }),
    });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    const { lines } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', messagesBody(inboundMessages(3, 'own') as never)])),
    );
    const own = emfDocuments(lines).filter(({ values }) => values.TicketsOpened !== undefined);
    expect(own.map(({ dimensions, values }) => [dimensions, values.Queue, values.TicketsOpened])).toEqual([
      [[['service', 'Subscriber', 'Queue']], 'support', 3],
    ]);
  });
});
