/**
 * Lambda's SQS event source, in memory, for the consumer benchmark: `containers` warm function instances,
 * each running one batch of up to `batchSize` records at a time (so at most `containers` invocations at
 * once, like `maxConcurrency`), batches taken in queue order.
 *
 * A record listed in `batchItemFailures` goes back to the END of the queue at once, as if its visibility
 * timeout were zero. Real SQS would hide it for the visibility timeout (minutes), so this is the most
 * favourable redelivery a contestant that fails records can get; its extra requests still count.
 */

import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createLambdaContext } from '../../../cli/local/lambda-context.ts';
import { parseBatchResponse } from '../../../cli/local/lambda-sqs-batch.ts';
import { DEFAULT_CONSUMER_MEMORY_MB } from '../../../lib/defaults.ts';
import { CONSUMER_FUNCTION_NAME } from '../support/lambda-names.ts';

export type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface DrainOptions {
  readonly records: readonly SQSRecord[];
  /** One handler per warm container (each built with its own module state and clients). */
  readonly containers: readonly SqsBatchHandler[];
  readonly batchSize: number;
  /** Lambda's function timeout: each invocation's context counts down from it. */
  readonly functionTimeoutMs: number;
  /** A record failed more often than this aborts the run (it would go to the DLQ in AWS). */
  readonly maxReceives: number;
}

export interface DrainResult {
  readonly wallMs: number;
  readonly invocations: number;
  /** Invocations that threw: Lambda then redelivers all their records. */
  readonly failedInvocations: number;
  /** Records handed to a handler, redeliveries included. */
  readonly deliveredRecords: number;
  /** Records that came back after a `batchItemFailures` entry. */
  readonly redeliveries: number;
  /** Their message ids, once per return. */
  readonly redeliveredIds: readonly string[];
  /** Duration of each invocation that returned. */
  readonly invocationMs: readonly number[];
}

export class RedeliveryLimitError extends Error {
  constructor(messageId: string, receives: number) {
    super(`Record ${messageId} failed ${receives} times; the benchmark aborts rather than drop it.`);
    this.name = 'RedeliveryLimitError';
  }
}

export async function drainQueue(options: DrainOptions): Promise<DrainResult> {
  const queue = options.records.map((record) => ({ record, receives: 0 }));
  let inFlight = 0;
  let invocations = 0;
  let deliveredRecords = 0;
  let redeliveries = 0;
  const redeliveredIds: string[] = [];
  let failedInvocations = 0;
  const invocationMs: number[] = [];
  let wake: (() => void) | undefined;
  let failure: unknown;

  const invoke = async (handler: SqsBatchHandler, batch: typeof queue) => {
    const records = batch.map((entry) => {
      entry.receives++;
      return {
        ...entry.record,
        attributes: { ...entry.record.attributes, ApproximateReceiveCount: String(entry.receives) },
      };
    });
    invocations++;
    deliveredRecords += records.length;
    const context = createLambdaContext({
      functionName: CONSUMER_FUNCTION_NAME,
      memoryLimitInMB: DEFAULT_CONSUMER_MEMORY_MB,
      region: 'us-east-1',
      deadlineMs: Date.now() + options.functionTimeoutMs,
    });
    let failed: Set<string>;
    const invoked = performance.now();
    try {
      // As the Lambda runtime does: the event arrives as JSON and is parsed for each invocation.
      const event = JSON.parse(JSON.stringify({ Records: records })) as SQSEvent;
      const response = await handler(event, context);
      invocationMs.push(performance.now() - invoked);
      failed = parseBatchResponse(response, records).failedIds;
    } catch {
      // Lambda retries the whole batch of a function error (Powertools throws when every record failed).
      failedInvocations++;
      failed = new Set(records.map((record) => record.messageId));
    }
    for (const entry of batch) {
      if (!failed.has(entry.record.messageId)) continue;
      if (entry.receives >= options.maxReceives) {
        throw new RedeliveryLimitError(entry.record.messageId, entry.receives);
      }
      redeliveries++;
      redeliveredIds.push(entry.record.messageId);
      queue.push(entry);
    }
  };

  const container = async (handler: SqsBatchHandler) => {
    while (failure === undefined) {
      if (queue.length === 0) {
        if (inFlight === 0) return;
        // Another container may still hand records back; wait for it to finish a batch.
        await new Promise<void>((resolve) => {
          const previous = wake;
          wake = () => {
            previous?.();
            resolve();
          };
        });
        continue;
      }
      const batch = queue.splice(0, options.batchSize);
      inFlight++;
      try {
        await invoke(handler, batch);
      } catch (error) {
        failure ??= error;
      } finally {
        inFlight--;
        const waiting = wake;
        wake = undefined;
        waiting?.();
      }
    }
  };

  const started = performance.now();
  await Promise.all(options.containers.map(container));
  const wallMs = performance.now() - started;
  if (failure !== undefined) throw failure;
  return {
    wallMs,
    invocations,
    failedInvocations,
    deliveredRecords,
    redeliveries,
    redeliveredIds,
    invocationMs,
  };
}
