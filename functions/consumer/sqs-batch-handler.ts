import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { LaneName } from '../../contract/lanes.ts';
import type { ConsumerBatch } from './consumer-batch.ts';
import { publishTally } from './consumer-metrics.ts';
import { planTurns, runInConversationOrder } from './conversation-turns.ts';
import { handlesTurns, type WebhookHandlers } from './handler-api.ts';
import type { WebhookConsumer } from './webhook-consumer.ts';

export interface SqsBatchHandlerDependencies {
  readonly consumer: WebhookConsumer;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** The lane this consumer reads: the `Lane` dimension of `EventWaitTime`. @default 'status' */
  readonly lane?: LaneName;
  /**
   * The records come from a FIFO queue grouped by conversation: run each group's records in order. Needs the
   * handlers, for `onConversationTurn` and its burst window. @default - unordered
   */
  readonly ordered?: { readonly handlers: WebhookHandlers; readonly clock?: () => number };
}

export type ConsumerContext = Pick<Context, 'getRemainingTimeInMillis'>;

/**
 * Lambda's SQS event source to the consumer domain, with Powertools batch for the partial batch response.
 *
 * Claims are taken for the whole batch BEFORE Powertools sees a record: `claimMany` must see every key at
 * once to claim a key repeated across records only once, and it overlaps the batch's PutItems. Powertools
 * then drives the per-record phase (side effects, completion), records in parallel and each record's events
 * in order, and turns the records whose handler threw into `batchItemFailures` (`itemIdentifier` =
 * messageId). `throwOnFullBatchFailure: false`: when every record fails the same list is returned rather
 * than an exception, which Lambda would treat the same way but log as a function error.
 *
 * On an ordered lane the records are run by conversation instead (conversation-turns.ts): groups in
 * parallel, a group's records one after the other, the rest of a group failed unrun after a failure.
 * Powertools' FIFO processor would run the whole batch one record at a time, so that one conversation's slow
 * handler delayed up to nine others.
 *
 * Records held back (a lease, a burst window, a failure ahead in their conversation) are then given their
 * return time.
 *
 * A fresh BatchProcessor per invocation: it keeps per-batch state, and the local event source runs several
 * invocations at once in one process.
 */
export function createSqsBatchHandler(dependencies: SqsBatchHandlerDependencies) {
  const { consumer, metrics, logger, ordered } = dependencies;
  const lane = dependencies.lane ?? 'status';
  return async (event: SQSEvent, context: ConsumerContext): Promise<SQSBatchResponse> => {
    const invocation = { remainingTimeMs: () => context.getRemainingTimeInMillis() };
    let batch: ConsumerBatch | undefined;
    try {
      if (ordered === undefined) {
        batch = await consumer.prepareBatch(event.Records, invocation);
        const prepared = batch;
        const processor = new BatchProcessor(EventType.SQS);
        const response = await processPartialResponse(
          event,
          async (record: SQSRecord) => {
            try {
              await prepared.processRecord(record);
            } catch (error) {
              // A record a handler gave up on goes to the DLQ now, and is then done for this queue.
              if (!(await prepared.deadLetterIfGivenUp(record))) throw error;
            }
          },
          processor,
          { throwOnFullBatchFailure: false },
        );
        await batch.scheduleRedeliveries();
        return { batchItemFailures: response.batchItemFailures };
      }
      const plan = planTurns(event.Records, {
        burstWindowMs: ordered.handlers.burstWindowMs ?? 0,
        handlesTurns: handlesTurns(ordered.handlers),
        now: (ordered.clock ?? Date.now)(),
      });
      batch = await consumer.prepareBatch(plan.ready, invocation);
      for (const { record, delaySeconds } of plan.held) batch.holdForBurst(record, delaySeconds);
      const failed = await runInConversationOrder(plan.groups, batch);
      await batch.scheduleRedeliveries();
      return {
        batchItemFailures: [...failed, ...plan.held.map(({ record }) => record.messageId)].map(
          (itemIdentifier) => ({ itemIdentifier }),
        ),
      };
    } finally {
      if (batch !== undefined) {
        // Each event's digest, field and outcome, to follow it; the counts are the EMF documents' too.
        logger.info('Batch processed', {
          lane,
          records: event.Records.length,
          failedRecords: batch.failedRecords,
          events: batch.quietOutcomes,
          ...(batch.unlistedOutcomes > 0 && { eventsUnlisted: batch.unlistedOutcomes }),
        });
        logger.debug('Batch counts', { counts: batch.tally.toRecord() });
        publishTally(metrics, batch.tally.snapshot(), lane);
      }
    }
  };
}
