import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { publishTally } from './consumer-metrics.ts';
import type { WebhookConsumer } from './webhook-consumer.ts';

export interface SqsBatchHandlerDependencies {
  readonly consumer: WebhookConsumer;
  readonly metrics: Metrics;
  readonly logger: Logger;
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
 * Records held back for a lease (the same message in flight elsewhere) are then given their return time.
 *
 * A fresh BatchProcessor per invocation: it keeps per-batch state, and the local event source runs several
 * invocations at once in one process.
 */
export function createSqsBatchHandler(dependencies: SqsBatchHandlerDependencies) {
  const { consumer, metrics, logger } = dependencies;
  return async (event: SQSEvent, context: ConsumerContext): Promise<SQSBatchResponse> => {
    const batch = await consumer.prepareBatch(event.Records, {
      remainingTimeMs: () => context.getRemainingTimeInMillis(),
    });
    try {
      const processor = new BatchProcessor(EventType.SQS);
      const response = await processPartialResponse(
        event,
        (record: SQSRecord) => batch.processRecord(record),
        processor,
        { throwOnFullBatchFailure: false },
      );
      await batch.scheduleRedeliveries();
      return { batchItemFailures: response.batchItemFailures };
    } finally {
      logger.info('Batch processed', {
        records: batch.records,
        failedRecords: batch.failedRecords,
        counts: batch.tally.toRecord(),
      });
      publishTally(metrics, batch.tally.snapshot());
    }
  };
}
