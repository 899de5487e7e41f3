/**
 * Lambda's SQS event source at scale: pollers that receive batches (up to the batch size, waiting up to the
 * batching window on a standard queue), take an execution from the account (lambda-account.ts) and invoke the
 * real consumer, then delete the records it did not report as failed. Scaling: "Lambda starts processing five
 * batches at a time with five concurrent invocations. If messages are still available, Lambda increases the
 * number of processes that are reading batches by up to 300 more instances per minute", up to
 * `maxConcurrency`. https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
 * On a FIFO queue the queue itself bounds the concurrency: it hands out no group with a message in flight.
 * https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html
 *
 * A throttled invocation (no execution left in the account) is retried by the event source after a second;
 * its records stay in flight meanwhile (an assumption: Lambda documents the retry, not its delay).
 */

import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createLambdaContext } from '../../cli/local/lambda-context.ts';
import { parseBatchResponse, toLambdaRecord } from '../../cli/local/lambda-sqs-batch.ts';
import {
  EVENT_SOURCE_CONCURRENCY_ADDED_PER_MINUTE,
  EVENT_SOURCE_INITIAL_CONCURRENCY,
} from '../../contract/capacity.ts';
import type { Engine } from '../virtual-time/engine.ts';
import type { LambdaAccount } from './lambda-account.ts';
import type { LaneQueue, Received } from './lane-queues.ts';
import type { Latency } from './latency.ts';

export type BatchFunction = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface EventSourceOptions {
  readonly name: string;
  readonly engine: Engine;
  readonly queue: LaneQueue;
  readonly queueArn: string;
  readonly account: LambdaAccount;
  readonly batchFunction: BatchFunction;
  readonly batchSize: number;
  readonly batchingWindowMs: number;
  readonly maxConcurrency: number;
  readonly functionTimeoutMs: number;
  /** CPU milliseconds per record (lab/bench/results.json), added to each invocation's virtual duration. */
  readonly cpuMsPerRecord: number;
  readonly latency: { readonly receive: Latency; readonly invoke: Latency };
}

/** Long polling waits up to 20 s. https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html */
const LONG_POLL_MS = 20_000;
const SCALE_STEP_MS = 1_000;
const THROTTLE_RETRY_MS = 1_000;

export class EventSource {
  readonly #options: EventSourceOptions;
  readonly #waiting: (() => void)[] = [];
  #pollers = 0;
  #busy = 0;
  #stopped = false;
  invocations = 0;
  records = 0;
  /** Virtual ms spent in invocations, for the bill. */
  invocationMs = 0;
  throttledInvocations = 0;
  peakPollers = 0;

  constructor(options: EventSourceOptions) {
    this.#options = options;
    options.queue.onArrival(() => this.#waiting.shift()?.());
  }

  get pollers(): number {
    return this.#pollers;
  }

  /** `scaled`: the traffic has been running, and the source has already scaled to its `maxConcurrency`. */
  start(options: { scaled?: boolean } = {}): void {
    const { maxConcurrency } = this.#options;
    const initial = options.scaled === true ? maxConcurrency : EVENT_SOURCE_INITIAL_CONCURRENCY;
    for (let index = 0; index < Math.min(initial, maxConcurrency); index++) this.#addPoller();
    this.#scaleLater();
  }

  stop(): void {
    this.#stopped = true;
    for (const wake of this.#waiting.splice(0)) wake();
  }

  /** Every second: more pollers, up to 300 a minute, while every poller is busy and messages wait. */
  #scaleLater(): void {
    const { engine, queue, maxConcurrency } = this.#options;
    engine.after(SCALE_STEP_MS, () => {
      if (this.#stopped) return;
      const step = Math.round((EVENT_SOURCE_CONCURRENCY_ADDED_PER_MINUTE * SCALE_STEP_MS) / 60_000);
      if (queue.visible > 0 && this.#busy >= this.#pollers) {
        const add = Math.min(step, maxConcurrency - this.#pollers);
        for (let index = 0; index < add; index++) this.#addPoller();
      }
      this.#scaleLater();
    });
  }

  #addPoller(): void {
    this.#pollers++;
    this.peakPollers = Math.max(this.peakPollers, this.#pollers);
    this.#poll().catch((error: unknown) => {
      this.#options.engine.failure ??= error;
    });
  }

  #arrivalOrTimeout(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let done = false;
      const wake = () => {
        if (done) return;
        done = true;
        resolve();
      };
      this.#waiting.push(wake);
      this.#options.engine.after(ms, () => {
        if (done) return;
        const index = this.#waiting.indexOf(wake);
        if (index >= 0) this.#waiting.splice(index, 1);
        wake();
      });
    });
  }

  async #poll(): Promise<void> {
    const { engine, queue, batchSize, batchingWindowMs, latency } = this.#options;
    while (!this.#stopped) {
      await engine.sleep(latency.receive.draw());
      let batch = queue.receive(batchSize);
      if (batch.length === 0) {
        await this.#arrivalOrTimeout(LONG_POLL_MS);
        continue;
      }
      const windowEnds = engine.now + batchingWindowMs;
      while (batch.length < batchSize && engine.now < windowEnds && !this.#stopped) {
        await this.#arrivalOrTimeout(windowEnds - engine.now);
        batch = batch.concat(queue.receive(batchSize - batch.length));
      }
      this.#busy++;
      try {
        await this.#invoke(batch);
      } finally {
        this.#busy--;
      }
    }
  }

  async #invoke(batch: readonly Received[]): Promise<void> {
    const {
      engine,
      account,
      name,
      latency,
      queue,
      queueArn,
      batchFunction,
      functionTimeoutMs,
      cpuMsPerRecord,
    } = this.#options;
    while (!account.acquire(name)) {
      this.throttledInvocations++;
      await engine.sleep(THROTTLE_RETRY_MS);
    }
    const startedAt = engine.now;
    let response: SQSBatchResponse | undefined;
    try {
      await engine.sleep(latency.invoke.draw() + cpuMsPerRecord * batch.length);
      const context = createLambdaContext({
        functionName: name,
        region: 'us-east-1',
        deadlineMs: engine.now + functionTimeoutMs,
        clock: () => engine.now,
      });
      this.invocations++;
      this.records += batch.length;
      response = await batchFunction(
        { Records: batch.map((received) => toRecord(received, queueArn)) },
        context,
      );
    } catch {
      response = undefined;
    } finally {
      this.invocationMs += engine.now - startedAt;
      account.release(name);
    }
    if (response === undefined) return;
    const { outcome, failedIds: failed } = parseBatchResponse(
      response,
      batch.map((received) => ({ messageId: received.message.messageId })),
    );
    if (outcome === 'invalid-response') return;
    const succeeded = batch.filter((received) => !failed.has(received.message.messageId));
    if (succeeded.length === 0) return;
    await engine.sleep(latency.receive.draw());
    for (const received of succeeded) queue.delete(received.receiptHandle);
  }
}

/** The received message as ReceiveMessage returns it, so that the record is built as the local stack builds it. */
function toRecord(received: Received, queueArn: string): SQSRecord {
  const { message } = received;
  // A FIFO message's ids (a standard message's MessageGroupId is left out: StandardLaneQueue).
  const fifo =
    message.sequenceNumber === undefined
      ? {}
      : {
          MessageGroupId: message.groupId ?? '',
          MessageDeduplicationId: message.deduplicationId ?? '',
          SequenceNumber: message.sequenceNumber,
        };
  return toLambdaRecord(
    {
      MessageId: message.messageId,
      ReceiptHandle: received.receiptHandle,
      Body: message.body,
      MD5OfBody: '',
      Attributes: {
        ApproximateReceiveCount: String(message.receiveCount),
        SentTimestamp: String(message.sentAt),
        SenderId: '000000000000',
        ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? message.sentAt),
        ...fifo,
      },
      MessageAttributes: message.attributes,
    },
    queueArn,
  );
}
