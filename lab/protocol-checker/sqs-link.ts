/**
 * What answers the consumer's SQS client (a real SQSClient, see `simulated-clients.ts`) in a schedule: the
 * simulated queues. Like DynamoDB requests, each is two operations of the invocation that sent it (reaching
 * SQS, the answer coming back). It serves what the consumer sends:
 *
 * - SendMessageBatch to the dead-letter queue (quarantined bodies), kept in `quarantined`;
 * - SendMessageBatch to the message lane's FIFO DLQ (records the ordered consumer gives up on, on their last
 *   receive), kept in `laneDeadLettered`: which queue message, and when;
 * - ChangeMessageVisibilityBatch on the delivery queue or the FIFO message queue (bringing a record back when a
 *   lease ends, after a backoff, behind a failure of its conversation, for a burst), applied to the queue
 *   model, a superseded receipt handle taking effect or not as the queue decides.
 *
 * Only visibility changes fail (InternalError, not applied): the dead-letter adapter retries on real timers,
 * which a virtual-time schedule cannot wait for.
 */

import { createHash } from 'node:crypto';
import {
  type ChangeMessageVisibilityBatchRequestEntry,
  type SendMessageBatchRequestEntry,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import type { FaultPlan, FaultTally } from './faults.ts';
import type { QueueModel } from './fifo-queue.ts';
import type { Scheduler } from './scheduler.ts';
import type { StandardQueue } from './standard-queue.ts';
import type { Trace } from './trace.ts';

export const DELIVERY_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/deliveries';
export const DEAD_LETTER_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/deliveries-dlq';
/** The message lane's FIFO queue and its FIFO DLQ. */
export const MESSAGE_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/messages.fifo';
export const MESSAGE_DEAD_LETTER_QUEUE_URL =
  'https://sqs.us-east-1.amazonaws.com/000000000000/messages-dlq.fifo';

export interface SqsLinkOptions {
  readonly scheduler: Scheduler;
  readonly queue: StandardQueue;
  /** Served at MESSAGE_QUEUE_URL. */
  readonly messageQueue?: QueueModel;
  readonly plan: FaultPlan;
  readonly random: SeededRandom;
  readonly faults: FaultTally;
  readonly trace: Trace;
}

export interface QuarantinedMessage {
  readonly body: string;
  readonly reason: string | undefined;
  readonly deliveryId: string | undefined;
}

type Output = Record<string, unknown>;

/** A record the message lane's consumer moved to its DLQ itself. */
export interface LaneDeadLetter {
  /** The queue message's id (the consumer sends it as the deduplication id). */
  readonly messageId: string;
  readonly groupId: string | undefined;
  readonly at: number;
}

export class SqsLink {
  readonly quarantined: QuarantinedMessage[] = [];
  readonly laneDeadLettered: LaneDeadLetter[] = [];
  readonly #options: SqsLinkOptions;

  constructor(options: SqsLinkOptions) {
    this.#options = options;
  }

  /** One request of the consumer's SQS client (see `simulated-clients.ts`). */
  send(commandName: string, input: Output): Promise<Output> {
    return this.#send(commandName, input);
  }

  #send(commandName: string, input: Output): Promise<Output> {
    const { scheduler, random, plan, faults, trace } = this.#options;
    const worker = scheduler.currentWorker;
    const label = `${commandName.replace(/Command$/, '')} ${queueName(input.QueueUrl)}`;
    const fails =
      commandName === 'ChangeMessageVisibilityBatchCommand' && random.chance(plan.sqsRequestFailureRate);
    return scheduler.schedule<Output>({
      worker,
      label,
      delayMs: random.int(2, 20),
      complete: () => {
        if (fails) {
          faults.add('sqs-request-failed');
          trace.add(scheduler.now, worker, label, 'InternalError, not applied');
          return this.#answer(worker, label, () => {
            throw internalError();
          });
        }
        const output = this.#apply(commandName, input);
        trace.add(scheduler.now, worker, label, JSON.stringify(output));
        return this.#answer(worker, label, () => output);
      },
      abandon: () => {
        if (fails || !random.chance(0.5)) {
          trace.add(scheduler.now, worker, label, 'in flight when its invocation died: never applied');
          return;
        }
        const output = this.#apply(commandName, input);
        trace.add(
          scheduler.now,
          worker,
          label,
          `in flight when its invocation died: ${JSON.stringify(output)}`,
        );
      },
    });
  }

  #answer(worker: string, label: string, result: () => Output): Promise<Output> {
    const { scheduler, random } = this.#options;
    return scheduler.schedule({
      worker,
      label: `answer ${label}`,
      delayMs: random.int(2, 20),
      complete: result,
    });
  }

  #apply(commandName: string, input: Output): Output {
    const toLaneDlq = input.QueueUrl === MESSAGE_DEAD_LETTER_QUEUE_URL;
    if (
      commandName === 'SendMessageBatchCommand' &&
      (input.QueueUrl === DEAD_LETTER_QUEUE_URL || toLaneDlq)
    ) {
      const entries = input.Entries as SendMessageBatchRequestEntry[];
      for (const entry of entries) {
        if (toLaneDlq) {
          this.laneDeadLettered.push({
            messageId: entry.MessageDeduplicationId ?? '?',
            groupId: entry.MessageGroupId,
            at: this.#options.scheduler.now,
          });
          continue;
        }
        this.quarantined.push({
          body: entry.MessageBody ?? '',
          reason: entry.MessageAttributes?.reason?.StringValue,
          deliveryId: entry.MessageAttributes?.deliveryId?.StringValue,
        });
      }
      return {
        Successful: entries.map((entry) => ({
          Id: entry.Id,
          MessageId: `dlq-${this.quarantined.length}-${entry.Id}`,
          // The SDK checks it (middleware-sdk-sqs) and fails the call when it is missing or wrong.
          MD5OfMessageBody: createHash('md5')
            .update(entry.MessageBody ?? '')
            .digest('hex'),
        })),
        Failed: [],
      };
    }
    if (commandName === 'ChangeMessageVisibilityBatchCommand') {
      const queue =
        input.QueueUrl === DELIVERY_QUEUE_URL
          ? this.#options.queue
          : input.QueueUrl === MESSAGE_QUEUE_URL
            ? this.#options.messageQueue
            : undefined;
      if (queue !== undefined)
        return this.#changeVisibility(queue, input.Entries as ChangeMessageVisibilityBatchRequestEntry[]);
    }
    throw new Error(`The simulated SQS does not serve ${commandName} on ${String(input.QueueUrl)}.`);
  }

  #changeVisibility(queue: QueueModel, entries: readonly ChangeMessageVisibilityBatchRequestEntry[]): Output {
    const { scheduler, faults } = this.#options;
    const successful: { Id: string | undefined }[] = [];
    const failed: { Id: string | undefined; Code: string; SenderFault: boolean }[] = [];
    for (const entry of entries) {
      const outcome = queue.changeVisibility(
        entry.ReceiptHandle ?? '',
        scheduler.now,
        entry.VisibilityTimeout ?? 0,
      );
      if (outcome === 'unknown-handle') {
        failed.push({ Id: entry.Id, Code: 'ReceiptHandleIsInvalid', SenderFault: true });
        continue;
      }
      if (outcome === 'stale-ignored') faults.add('sqs-stale-handle-ignored');
      successful.push({ Id: entry.Id });
    }
    return { Successful: successful, Failed: failed };
  }
}

function queueName(url: unknown): string {
  return typeof url === 'string' ? (url.split('/').pop() ?? url) : '?';
}

function internalError(): Error {
  return new SQSServiceException({
    name: 'InternalError',
    $fault: 'server',
    $metadata: { httpStatusCode: 500 },
    message: 'We encountered an internal error. Please try again.',
  });
}
