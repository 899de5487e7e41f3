/**
 * What answers the consumer's SQS client (a real SQSClient, see `simulated-clients.ts`) in a schedule: the
 * simulated queues. Like DynamoDB requests, each is two operations of the invocation that sent it (reaching
 * SQS, the answer coming back). It serves what the consumer sends:
 *
 * - SendMessageBatch to the dead-letter queue (quarantined bodies), kept in `quarantined`;
 * - SendMessageBatch to a lane's DLQ, the status lane's standard one or the message lane's FIFO one: records
 *   the consumer gives up on itself (a handler threw `DeadLetter`, or, on the ordered lane, their last receive
 *   failed), journaled as a `LaneDeadLetterSend`: which queue message each entry copies (its `deliveryId`
 *   attribute, kept from the record), whether the DLQ stored it, what the consumer was answered;
 * - ChangeMessageVisibilityBatch on the delivery queue or the FIFO message queue (bringing a record back when a
 *   lease ends, after a backoff, behind a failure of its conversation, for a burst), applied to the queue
 *   model, a superseded receipt handle taking effect or not as the queue decides.
 *
 * Visibility changes fail (InternalError, not applied), and so do sends to a lane's DLQ that carry a record a
 * handler gave up on: as a whole, or, for a batch of several, one entry refused while the others are stored
 * (the consumer must then keep every record of it in its lane). The quarantine adapter retries on real
 * timers, which a virtual-time schedule cannot wait for: its sends never fail. Only sends with a handler's
 * `deadLetterReason` draw, so that schedules without `DeadLetter` keep their draws.
 */

import { createHash } from 'node:crypto';
import {
  type ChangeMessageVisibilityBatchRequestEntry,
  type SendMessageBatchRequestEntry,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import { DEAD_LETTER_REASON_ATTRIBUTE } from '../../functions/queue/sqs-conversation-dead-letters.ts';
import type { FaultPlan, FaultTally } from './faults.ts';
import type { QueueModel } from './fifo-queue.ts';
import { DELIVERY_ID_ATTRIBUTE } from './lambda-event-source.ts';
import type { LaneDeadLetterEntry, LaneDeadLetterSend, ProtocolJournal } from './protocol-journal.ts';
import type { Scheduler } from './scheduler.ts';
import type { StandardQueue } from './standard-queue.ts';
import type { Trace } from './trace.ts';

export const DELIVERY_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/deliveries';
export const DEAD_LETTER_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/deliveries-dlq';
/** The message lane's FIFO queue and its FIFO DLQ. */
export const MESSAGE_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/messages.fifo';
export const MESSAGE_DEAD_LETTER_QUEUE_URL =
  'https://sqs.us-east-1.amazonaws.com/000000000000/messages-dlq.fifo';
/** The status lane's DLQ (its redrive target), where its consumer moves the records a handler gave up on. */
export const STATUS_DEAD_LETTER_QUEUE_URL =
  'https://sqs.us-east-1.amazonaws.com/000000000000/deliveries-lane-dlq';

const LANE_OF_DEAD_LETTER_QUEUE: Readonly<Record<string, 'status' | 'message'>> = {
  [STATUS_DEAD_LETTER_QUEUE_URL]: 'status',
  [MESSAGE_DEAD_LETTER_QUEUE_URL]: 'message',
};

export interface SqsLinkOptions {
  readonly scheduler: Scheduler;
  readonly queue: StandardQueue;
  /** Served at MESSAGE_QUEUE_URL. */
  readonly messageQueue?: QueueModel;
  readonly plan: FaultPlan;
  readonly random: SeededRandom;
  readonly faults: FaultTally;
  readonly journal: ProtocolJournal;
  readonly trace: Trace;
}

export interface QuarantinedMessage {
  readonly body: string;
  readonly reason: string | undefined;
  readonly deliveryId: string | undefined;
}

type Output = Record<string, unknown>;

/** How a send to a lane's DLQ fails: not at all, as a whole, or with one entry refused. */
type DeadLetterFailure =
  | { readonly kind: 'none' | 'whole' }
  | { readonly kind: 'entry'; readonly index: number };

export class SqsLink {
  readonly quarantined: QuarantinedMessage[] = [];
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
    const deadLetters = this.#laneDeadLetterSend(commandName, input, worker);
    const fails =
      commandName === 'ChangeMessageVisibilityBatchCommand' && random.chance(plan.sqsRequestFailureRate);
    const deadLetterFailure = this.#deadLetterFailure(deadLetters);
    const copies = deadLetters === undefined ? '' : `${describeCopies(deadLetters)}: `;
    return scheduler.schedule<Output>({
      worker,
      label,
      delayMs: random.int(2, 20),
      complete: () => {
        if (fails || deadLetterFailure.kind === 'whole') {
          faults.add('sqs-request-failed');
          trace.add(scheduler.now, worker, label, `${copies}InternalError, not applied`);
          return this.#answer(worker, label, deadLetters, () => {
            throw internalError();
          });
        }
        if (deadLetterFailure.kind === 'entry') faults.add('sqs-request-failed');
        const output = this.#apply(commandName, input, deadLetters, deadLetterFailure);
        trace.add(scheduler.now, worker, label, `${copies}${JSON.stringify(output)}`);
        return this.#answer(worker, label, deadLetters, () => output);
      },
      abandon: () => {
        if (fails || deadLetterFailure.kind === 'whole' || !random.chance(0.5)) {
          trace.add(
            scheduler.now,
            worker,
            label,
            `${copies}in flight when its invocation died: never applied`,
          );
          return;
        }
        if (deadLetterFailure.kind === 'entry') faults.add('sqs-request-failed');
        const output = this.#apply(commandName, input, deadLetters, deadLetterFailure);
        trace.add(
          scheduler.now,
          worker,
          label,
          `${copies}in flight when its invocation died: ${JSON.stringify(output)}`,
        );
      },
    });
  }

  #answer(
    worker: string,
    label: string,
    deadLetters: LaneDeadLetterSend | undefined,
    result: () => Output,
  ): Promise<Output> {
    const { scheduler, random } = this.#options;
    return scheduler.schedule({
      worker,
      label: `answer ${label}`,
      delayMs: random.int(2, 20),
      complete: () => {
        if (deadLetters === undefined) return result();
        try {
          const output = result();
          deadLetters.answer = (output.Failed as unknown[]).length === 0 ? 'ok' : 'failed';
          return output;
        } catch (error) {
          deadLetters.answer = 'failed';
          throw error;
        }
      },
    });
  }

  /** A send to a lane's DLQ, journaled with the queue message each entry copies; undefined for other calls. */
  #laneDeadLetterSend(commandName: string, input: Output, worker: string): LaneDeadLetterSend | undefined {
    const lane = LANE_OF_DEAD_LETTER_QUEUE[String(input.QueueUrl)];
    if (commandName !== 'SendMessageBatchCommand' || lane === undefined) return undefined;
    const queue = lane === 'status' ? this.#options.queue : this.#options.messageQueue;
    const byBodyId = new Map((queue?.messages() ?? []).map((message) => [message.bodyId, message]));
    const entries = (input.Entries as SendMessageBatchRequestEntry[]).map(
      (entry): LaneDeadLetterEntry => ({
        messageId: byBodyId.get(entry.MessageAttributes?.[DELIVERY_ID_ATTRIBUTE]?.StringValue ?? '')
          ?.messageId,
        reason: entry.MessageAttributes?.[DEAD_LETTER_REASON_ATTRIBUTE]?.StringValue,
        groupId: entry.MessageGroupId,
        deduplicationId: entry.MessageDeduplicationId,
        landed: false,
      }),
    );
    return this.#options.journal.recordLaneDeadLetterSend({
      worker,
      lane,
      entries,
      at: this.#options.scheduler.now,
    });
  }

  /** Drawn only for a send carrying a record a handler gave up on (see the header). */
  #deadLetterFailure(send: LaneDeadLetterSend | undefined): DeadLetterFailure {
    const { random, plan } = this.#options;
    if (send === undefined || send.entries.every((entry) => entry.reason === undefined))
      return { kind: 'none' };
    if (!random.chance(plan.sqsRequestFailureRate)) return { kind: 'none' };
    if (send.entries.length < 2 || random.chance(0.5)) return { kind: 'whole' };
    return { kind: 'entry', index: random.int(0, send.entries.length - 1) };
  }

  #apply(
    commandName: string,
    input: Output,
    deadLetters: LaneDeadLetterSend | undefined,
    failure: DeadLetterFailure,
  ): Output {
    if (
      commandName === 'SendMessageBatchCommand' &&
      (input.QueueUrl === DEAD_LETTER_QUEUE_URL || deadLetters !== undefined)
    ) {
      const entries = input.Entries as SendMessageBatchRequestEntry[];
      const refused = failure.kind === 'entry' ? entries[failure.index] : undefined;
      for (const [index, entry] of entries.entries()) {
        if (deadLetters !== undefined) {
          const journaled = deadLetters.entries[index];
          if (journaled !== undefined && entry !== refused) journaled.landed = true;
          continue;
        }
        this.quarantined.push({
          body: entry.MessageBody ?? '',
          reason: entry.MessageAttributes?.reason?.StringValue,
          deliveryId: entry.MessageAttributes?.deliveryId?.StringValue,
        });
      }
      if (deadLetters !== undefined) deadLetters.landedAt ??= this.#options.scheduler.now;
      return {
        Successful: entries
          .filter((entry) => entry !== refused)
          .map((entry) => ({
            Id: entry.Id,
            MessageId: `dlq-${this.quarantined.length}-${entry.Id}`,
            // The SDK checks it (middleware-sdk-sqs) and fails the call when it is missing or wrong.
            MD5OfMessageBody: createHash('md5')
              .update(entry.MessageBody ?? '')
              .digest('hex'),
          })),
        Failed: refused === undefined ? [] : [{ Id: refused.Id, Code: 'InternalError', SenderFault: false }],
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

/** Which queue messages a send to a lane's DLQ copies, each with the reason it carries (`fifo-002(simulated)`). */
function describeCopies(send: LaneDeadLetterSend): string {
  return send.entries
    .map((entry) => `${entry.messageId ?? '?'}${entry.reason === undefined ? '' : `(${entry.reason})`}`)
    .join(' ');
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
