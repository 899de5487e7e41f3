/**
 * Lambda's SQS event source in virtual time: several pollers, each receiving up to `batchSize` messages and
 * invoking the function with them, one invocation at a time, with a Lambda context whose remaining time runs
 * on the virtual clock. After the invocation returns, the records not listed in `batchItemFailures` are
 * deleted by their receipt handles (a response naming a message outside the batch fails the whole batch, as
 * Lambda does); a thrown invocation, a timed-out one and a crashed one delete nothing. The journal keeps which
 * records each invocation that returned reported failed.
 *
 * Deaths: an invocation is killed at its deadline (function timeout), and, by seed, crashes at one of its
 * await points: when its n-th operation would complete, it dies instead, with everything it had in flight.
 *
 * On a FIFO queue (fifo-queue.ts) it is Lambda's FIFO event source: the queue hands out no group in flight,
 * records carry `MessageGroupId`, `MessageDeduplicationId` and `SequenceNumber`, and at most 10 per batch.
 * Several sources share one scheduler (one per lane): the runner installs their fire guards together
 * ({@link LambdaEventSource.beforeFire}).
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createLambdaContext } from '../../cli/local/lambda-context.ts';
import { parseBatchResponse, toLambdaRecord } from '../../cli/local/lambda-sqs-batch.ts';
import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import type { DeliveryAttributeName } from '../../functions/queue/outgoing-message.ts';
import type { FaultPlan, FaultTally } from './faults.ts';
import { FifoQueue, isFifoMessage, type QueueModel } from './fifo-queue.ts';
import type { InvocationFate, ProtocolJournal } from './protocol-journal.ts';
import type { PendingOperation, Scheduler } from './scheduler.ts';
import type { Delivery } from './standard-queue.ts';
import type { Trace } from './trace.ts';

export type BatchFunction = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface EventSourceSettings {
  readonly pollers: number;
  readonly batchSize: number;
  readonly functionTimeoutMs: number;
}

export interface LambdaEventSourceOptions {
  readonly scheduler: Scheduler;
  readonly queue: QueueModel;
  /** Prefixes its pollers' and invocations' names (`<name>-poller1`, `<name>-inv1`). @default none */
  readonly name?: string;
  readonly queueArn?: string;
  readonly batchFunction: BatchFunction;
  readonly settings: EventSourceSettings;
  readonly plan: FaultPlan;
  readonly random: SeededRandom;
  readonly faults: FaultTally;
  readonly journal: ProtocolJournal;
  readonly trace: Trace;
  /** When the receiver enqueues its next body, if it has any left. */
  readonly nextArrivalAt: () => number | undefined;
}

const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:deliveries';
/** The record's attribute naming its queue message's body (see `toRecord`). */
export const DELIVERY_ID_ATTRIBUTE = 'deliveryId' satisfies DeliveryAttributeName;
/** Crashes land on one of an invocation's first this-many operations. */
const CRASH_POINTS = 40;

type InvocationEnd =
  | { readonly fate: 'returned'; readonly response: SQSBatchResponse }
  | { readonly fate: Exclude<InvocationFate, 'returned'> };

interface LiveInvocation {
  readonly id: string;
  readonly poller: string;
  readonly crashAt: number | undefined;
  operations: number;
  ended: boolean;
  readonly onEnd: (end: InvocationEnd) => void;
}

export class LambdaEventSource {
  readonly #options: LambdaEventSourceOptions;
  readonly #live = new Map<string, LiveInvocation>();
  readonly #pollers: string[] = [];
  #invocations = 0;
  #stopped = false;
  /** The first error a poller hit (a simulator bug): the runner reports it. */
  failure: unknown;

  constructor(options: LambdaEventSourceOptions) {
    if (options.queue instanceof FifoQueue && options.settings.batchSize > 10) {
      throw new Error(
        `Lambda hands out at most 10 records from a FIFO queue, not ${options.settings.batchSize}`,
      );
    }
    this.#options = options;
  }

  #named(worker: string): string {
    return this.#options.name === undefined ? worker : `${this.#options.name}-${worker}`;
  }

  start(): void {
    for (let index = 1; index <= this.#options.settings.pollers; index++) {
      const poller = this.#named(`poller${index}`);
      this.#pollers.push(poller);
      this.#poll(poller).catch((error: unknown) => {
        this.failure ??= error;
      });
    }
  }

  stop(): void {
    this.#stopped = true;
  }

  /** No invocation running. */
  idle(): boolean {
    return this.#live.size === 0;
  }

  /** Every poller and invocation waits on a pending operation (or, for a poller, on its invocation). */
  settled(): boolean {
    const { scheduler } = this.#options;
    for (const invocation of this.#live.values()) {
      if (!scheduler.isBusy(invocation.id)) return false;
    }
    const pollingFor = new Set([...this.#live.values()].map((invocation) => invocation.poller));
    return this.#pollers.every(
      (poller) => pollingFor.has(poller) || scheduler.isBusy(poller) || this.#stopped,
    );
  }

  async #poll(poller: string): Promise<void> {
    const { scheduler, queue, random, settings, trace, faults } = this.#options;
    while (!this.#stopped) {
      const received = await scheduler.schedule({
        worker: poller,
        label: 'ReceiveMessage',
        delayMs: random.int(5, 30),
        complete: () => queue.receive(scheduler.now, settings.batchSize),
      });
      for (const message of received.deadLettered) {
        trace.add(
          scheduler.now,
          poller,
          `redrive ${message.messageId}`,
          `dead-lettered after ${message.receiveCount} receives`,
        );
      }
      const duplicates = received.deliveries.filter((delivery) => delivery.duplicate).length;
      faults.add('sqs-duplicate-delivery', duplicates);
      if (received.deliveries.length === 0) {
        await scheduler.schedule({
          worker: poller,
          label: 'long poll',
          delayMs: this.#waitMs(),
          complete: () => undefined,
        });
        continue;
      }
      trace.add(scheduler.now, poller, 'ReceiveMessage', received.deliveries.map(describeDelivery).join(' '));
      const end = await this.#invoke(poller, received.deliveries);
      if (end.fate === 'returned') await this.#deleteSucceeded(poller, received.deliveries, end.response);
    }
  }

  /** Long polling: until something may be visible or arrive. */
  #waitMs(): number {
    const { scheduler, queue, nextArrivalAt } = this.#options;
    const candidates = [queue.nextVisibleAt(), nextArrivalAt()].filter((at) => at !== undefined);
    if (candidates.length === 0) return 20_000;
    return Math.max(1, Math.min(...candidates) - scheduler.now);
  }

  #invoke(poller: string, deliveries: readonly Delivery[]): Promise<InvocationEnd> {
    const { scheduler, random, plan, settings, batchFunction } = this.#options;
    const id = this.#named(`inv${++this.#invocations}`);
    for (const delivery of deliveries) {
      this.#options.journal.recordReceipt({
        invocation: id,
        messageId: delivery.message.messageId,
        receiveCount: delivery.receiveCount,
      });
    }
    return new Promise<InvocationEnd>((resolve) => {
      const invocation: LiveInvocation = {
        id,
        poller,
        crashAt: random.chance(plan.crashRate) ? random.int(1, CRASH_POINTS) : undefined,
        operations: 0,
        ended: false,
        onEnd: resolve,
      };
      this.#live.set(id, invocation);
      scheduler.schedule({
        worker: id,
        label: `invoke with ${deliveries.map((delivery) => delivery.message.messageId).join(' ')}`,
        delayMs: random.int(1, 10),
        complete: () => {
          const deadlineMs = scheduler.now + settings.functionTimeoutMs;
          scheduler.schedule({
            worker: id,
            label: 'deadline',
            delayMs: settings.functionTimeoutMs,
            background: true,
            complete: () => this.#kill(invocation, 'timeout'),
          });
          const context = createLambdaContext({
            functionName: 'consumer',
            region: 'us-east-1',
            deadlineMs,
            clock: () => scheduler.now,
          });
          const arn = this.#options.queueArn ?? QUEUE_ARN;
          batchFunction({ Records: deliveries.map((delivery) => toRecord(delivery, arn)) }, context).then(
            (response) => this.#end(invocation, { fate: 'returned', response }),
            () => this.#end(invocation, { fate: 'threw' }),
          );
        },
      });
    });
  }

  /** The scheduler's fire guard for this source's invocations: false when the operation's invocation crashes. */
  beforeFire(operation: PendingOperation): boolean {
    const invocation = this.#live.get(operation.worker);
    if (invocation === undefined || operation.background || invocation.crashAt === undefined) return true;
    invocation.operations++;
    if (invocation.operations < invocation.crashAt) return true;
    this.#options.trace.add(
      this.#options.scheduler.now,
      invocation.id,
      'crash',
      `waiting on ${operation.label}`,
    );
    this.#kill(invocation, 'crash');
    return false;
  }

  #kill(invocation: LiveInvocation, fate: 'crash' | 'timeout'): void {
    if (invocation.ended) return;
    this.#options.faults.add(fate);
    if (fate === 'timeout')
      this.#options.trace.add(this.#options.scheduler.now, invocation.id, 'deadline', 'killed');
    this.#end(invocation, { fate });
  }

  #end(invocation: LiveInvocation, end: InvocationEnd): void {
    if (invocation.ended) return;
    const { scheduler, journal, trace } = this.#options;
    invocation.ended = true;
    this.#live.delete(invocation.id);
    journal.fates.set(invocation.id, end.fate);
    // Whatever it still had in flight (a timer, a request it did not await) dies with it.
    scheduler.abandonWorker(invocation.id);
    if (end.fate === 'returned') {
      const failed = end.response.batchItemFailures.map((failure) => failure.itemIdentifier);
      journal.batchItemFailures.set(invocation.id, failed);
      trace.add(scheduler.now, invocation.id, 'returned', `batchItemFailures [${failed.join(' ')}]`);
    } else if (end.fate === 'threw') {
      trace.add(scheduler.now, invocation.id, 'threw', 'nothing deleted');
    }
    scheduler
      .schedule({
        worker: invocation.poller,
        label: `end of ${invocation.id}`,
        delayMs: 0,
        complete: () => end,
      })
      .then(invocation.onEnd);
  }

  async #deleteSucceeded(
    poller: string,
    deliveries: readonly Delivery[],
    response: SQSBatchResponse,
  ): Promise<void> {
    const { scheduler, queue, random, trace, faults } = this.#options;
    const records = deliveries.map((delivery) => ({ messageId: delivery.message.messageId }));
    const { outcome, failedIds: failed } = parseBatchResponse(response, records);
    if (outcome === 'invalid-response') {
      trace.add(
        scheduler.now,
        poller,
        'DeleteMessageBatch',
        'skipped: a failure names no record of the batch',
      );
      return;
    }
    const succeeded = deliveries.filter((delivery) => !failed.has(delivery.message.messageId));
    if (succeeded.length === 0) return;
    const outcomes = await scheduler.schedule({
      worker: poller,
      label: 'DeleteMessageBatch',
      delayMs: random.int(2, 20),
      complete: () =>
        succeeded.map((delivery) => `${delivery.message.messageId}:${queue.delete(delivery.receiptHandle)}`),
    });
    faults.add(
      'sqs-stale-handle-ignored',
      outcomes.filter((outcome) => outcome.endsWith('stale-ignored')).length,
    );
    trace.add(scheduler.now, poller, 'DeleteMessageBatch', outcomes.join(' '));
  }
}

function describeDelivery(delivery: Delivery): string {
  const duplicate = delivery.duplicate ? ',dup' : '';
  return `${delivery.message.messageId}(${delivery.message.bodyId},#${delivery.receiveCount}${duplicate})`;
}

/**
 * The delivery as ReceiveMessage returns it, so that the record is built as the local stack builds it. Its one
 * message attribute is the receiver's `deliveryId`, here the lane piece's bodyId (one queue message each): a
 * copy the consumer moves to its lane's DLQ keeps it, which tells the checker which message it copies.
 */
function toRecord(delivery: Delivery, queueArn: string): SQSRecord {
  const { message } = delivery;
  const fifo = isFifoMessage(message)
    ? {
        MessageGroupId: message.groupId,
        MessageDeduplicationId: message.deduplicationId,
        SequenceNumber: message.sequenceNumber,
      }
    : {};
  return toLambdaRecord(
    {
      MessageId: message.messageId,
      ReceiptHandle: delivery.receiptHandle,
      Body: message.body,
      MD5OfBody: '',
      MessageAttributes: { [DELIVERY_ID_ATTRIBUTE]: { DataType: 'String', StringValue: message.bodyId } },
      Attributes: {
        ApproximateReceiveCount: String(delivery.receiveCount),
        SentTimestamp: String(message.sentAt),
        SenderId: '000000000000',
        ApproximateFirstReceiveTimestamp: String(message.sentAt),
        ...fifo,
      },
    },
    queueArn,
  );
}
