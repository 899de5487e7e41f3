/**
 * A local stand-in for Lambda's SQS event source mapping (with `ReportBatchItemFailures`), so the real
 * consumer handler runs locally under the same delivery rules as in AWS:
 *
 * - N pollers, each long-polling, gathering up to `batchSize` records within `maxBatchingWindowSeconds`,
 *   then invoking the handler once and waiting for it (so at most N invocations run at once, like
 *   `maxConcurrency`).
 * - A Lambda-like context whose `getRemainingTimeInMillis()` counts down to the function timeout; an
 *   invocation still running at its deadline counts as failed, as Lambda would end it.
 * - Partial batch responses: only the records not listed in `batchItemFailures` are deleted; a thrown error,
 *   a timeout or an invalid response fails the whole batch. Failed records are left alone and come back
 *   after the queue's visibility timeout; the queue's redrive policy moves them to the DLQ after
 *   `maxReceiveCount` receives (the emulator does this, as SQS does).
 *
 * On a FIFO queue (the ordered message lane), as Lambda's FIFO event source: batches of at most 10 records,
 * one receive each (a FIFO queue has no batching window), several pollers at once. Order comes from the
 * queue: SQS (and fauxqs, patched for it) locks a message group while any of its messages is in flight, so
 * a group's records are never in two batches at once, and a record left for retry holds its group back
 * until it is visible again, while the other groups go on. Lambda scales its pollers with the number of
 * active message groups, up to `maxConcurrency`: here the pollers are `maxConcurrency` from the start, and
 * those that find no unlocked group wait in their long poll.
 *
 * Differences from Lambda, on purpose: the number of pollers is fixed (Lambda scales them up to
 * `maxConcurrency`); a timed-out handler keeps running in the background (Lambda would freeze it), its
 * late work is ignored; `stop()` aborts pending long polls, so records an aborted poll had already
 * received come back after the visibility timeout, as after a crashed poller.
 *
 * `pause()` is Lambda's disabled event source mapping (`npm run ops -- pause`): no poller starts another
 * receive, and records wait in the queue. Pending long polls are left to finish, never aborted (the emulator
 * would still hand an aborted poll's records to nobody): the state is `Disabling` until every poller has
 * stopped, then `Disabled`.
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { createLambdaContext } from './lambda-context.ts';
import { parseBatchResponse, regionOfArn, toLambdaRecord } from './lambda-sqs-batch.ts';
import { type QueueCounts, readQueueCounts, totalMessages } from './queue-counts.ts';

/** The result is checked at run time as Lambda does: an `SQSBatchResponse`, or nothing for full success. */
export type SqsHandler = (event: SQSEvent, context: Context) => Promise<unknown>;

export interface SqsEventSourceOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly handler: SqsHandler;
  /** Records per invocation (Lambda: 1–10 000; above 10 needs a batching window). */
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** The function timeout: the context's deadline, and when a still-running invocation counts as failed. */
  readonly functionTimeoutSeconds: number;
  /** Concurrent pollers, each running one invocation at a time (Lambda's `maxConcurrency`). */
  readonly pollers: number;
  /** Long-poll wait of each ReceiveMessage while the batch is empty. @default 20 (as Lambda) */
  readonly waitTimeSeconds?: number;
  /** @default 'consumer' */
  readonly functionName?: string;
  /** Called after each invocation, for metrics and tests. Must not throw. */
  readonly onInvocation?: (report: InvocationReport) => void;
  /** Where operational problems (a failed poll, a thrown handler) are reported. @default console.error */
  readonly log?: (line: string) => void;
}

export type InvocationOutcome = 'success' | 'partial-failure' | 'error' | 'timeout' | 'invalid-response';

export interface InvocationReport {
  readonly awsRequestId: string;
  readonly records: readonly SQSRecord[];
  /** Epoch ms when the handler was called. */
  readonly startedAt: number;
  readonly durationMs: number;
  readonly outcome: InvocationOutcome;
  /** Message ids left on the queue (all of them unless the outcome is success or partial-failure). */
  readonly failedMessageIds: readonly string[];
  readonly error?: unknown;
}

export interface WaitUntilDrainedOptions {
  /** @default 30 000 */
  readonly timeoutMs?: number;
  /** @default 50 */
  readonly pollIntervalMs?: number;
}

export interface SqsEventSource {
  start(): Promise<void>;
  /** Stops polling, lets running invocations finish and delete their successes, then resolves. */
  stop(): Promise<void>;
  /** Resolves once the queue holds no visible, in-flight or delayed message and no invocation runs. */
  waitUntilDrained(options?: WaitUntilDrainedOptions): Promise<void>;
  /** Stops starting receives; pollers finish what they hold, then wait for `resume()`. */
  pause(): void;
  resume(): void;
  /** In the words of Lambda's event source mapping states. */
  readonly state: EventSourceState;
  /** Invocations running right now. */
  readonly activeInvocations: number;
}

export type EventSourceState = 'Enabled' | 'Disabling' | 'Disabled';

const LAMBDA_LONG_POLL_SECONDS = 20;
const SQS_MAX_MESSAGES_PER_RECEIVE = 10;
const POLL_ERROR_BACKOFF_MS = 1_000;
const DELETE_ATTEMPTS = 3;

export function createSqsEventSource(options: SqsEventSourceOptions): SqsEventSource {
  const { sqs, queueUrl, handler } = options;
  const waitTimeSeconds = options.waitTimeSeconds ?? LAMBDA_LONG_POLL_SECONDS;
  const functionName = options.functionName ?? 'consumer';
  const log = options.log ?? ((line: string) => console.error(line));
  if (options.batchSize < 1) throw new Error('batchSize must be at least 1.');
  if (options.batchSize > SQS_MAX_MESSAGES_PER_RECEIVE && options.maxBatchingWindowSeconds < 1) {
    throw new Error('A batchSize above 10 needs maxBatchingWindowSeconds >= 1, as in Lambda.');
  }
  if (options.pollers < 1) throw new Error('pollers must be at least 1.');

  let queueArn = '';
  let running = false;
  let abort = new AbortController();
  let pollerLoops: Promise<void>[] = [];
  /** Set while paused: resolved by `resume()` or `stop()`. */
  let resumed: { promise: Promise<void>; resolve: () => void } | undefined;
  /** Pollers waiting for `resumed`. */
  let parked = 0;
  /** Pollers currently gathering or invoking, i.e. holding received records. */
  let busy = 0;
  let active = 0;

  async function receive(maxMessages: number, wait: number): Promise<Message[]> {
    const result = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(maxMessages, SQS_MAX_MESSAGES_PER_RECEIVE),
        WaitTimeSeconds: wait,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: abort.signal },
    );
    return result.Messages ?? [];
  }

  /** Waits for a first record, then keeps polling until the batch is full or the window has passed. */
  async function gatherBatch(): Promise<Message[]> {
    const first = await receive(options.batchSize, waitTimeSeconds);
    if (first.length === 0) return first;
    busy++;
    const batch = [...first];
    const windowEnd = Date.now() + options.maxBatchingWindowSeconds * 1000;
    try {
      while (running && batch.length < options.batchSize && Date.now() < windowEnd) {
        // WaitTimeSeconds is whole seconds: the window may overrun by under a second.
        const wait = Math.min(LAMBDA_LONG_POLL_SECONDS, Math.ceil((windowEnd - Date.now()) / 1000));
        batch.push(...(await receive(options.batchSize - batch.length, wait)));
      }
    } catch (error) {
      if (!abort.signal.aborted) log(`event source: poll failed while gathering a batch: ${describe(error)}`);
    }
    return batch;
  }

  async function invoke(messages: Message[]): Promise<void> {
    const records = messages.map((m) => toLambdaRecord(m, queueArn));
    const startedAt = Date.now();
    const context = createLambdaContext({
      functionName,
      region: regionOfArn(queueArn),
      deadlineMs: startedAt + options.functionTimeoutSeconds * 1000,
    });
    active++;
    let outcome: InvocationOutcome;
    let failedIds: Set<string>;
    let error: unknown;
    try {
      const result = await withDeadline(
        Promise.resolve().then(() => handler({ Records: records }, context)),
        options.functionTimeoutSeconds * 1000,
      );
      if (result === TIMED_OUT) {
        outcome = 'timeout';
        failedIds = new Set(records.map((r) => r.messageId));
        log(
          `event source: invocation ${context.awsRequestId} timed out after ${options.functionTimeoutSeconds}s`,
        );
      } else {
        const parsed = parseBatchResponse(result, records);
        outcome = parsed.outcome;
        failedIds = parsed.failedIds;
        if (outcome === 'invalid-response')
          log(`event source: invalid batch response ${JSON.stringify(result)}`);
      }
    } catch (thrown) {
      outcome = 'error';
      error = thrown;
      failedIds = new Set(records.map((r) => r.messageId));
      log(`event source: invocation ${context.awsRequestId} failed: ${describe(thrown)}`);
    } finally {
      active--;
    }
    await deleteRecords(records.filter((r) => !failedIds.has(r.messageId)));
    options.onInvocation?.({
      awsRequestId: context.awsRequestId,
      records,
      startedAt,
      durationMs: Date.now() - startedAt,
      outcome,
      failedMessageIds: [...failedIds],
      error,
    });
  }

  async function deleteRecords(records: SQSRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += SQS_MAX_MESSAGES_PER_RECEIVE) {
      let pending = records.slice(i, i + SQS_MAX_MESSAGES_PER_RECEIVE);
      for (let attempt = 1; pending.length > 0 && attempt <= DELETE_ATTEMPTS; attempt++) {
        try {
          const result = await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: pending.map((r, index) => ({ Id: String(index), ReceiptHandle: r.receiptHandle })),
            }),
          );
          const failed = new Set((result.Failed ?? []).map((f) => f.Id));
          pending = pending.filter((_, index) => failed.has(String(index)));
        } catch (error) {
          if (attempt === DELETE_ATTEMPTS) log(`event source: delete failed: ${describe(error)}`);
        }
      }
      // A record that could not be deleted is received again after the visibility timeout, as in AWS.
      if (pending.length > 0) log(`event source: ${pending.length} processed record(s) could not be deleted`);
    }
  }

  async function pollerLoop(): Promise<void> {
    while (running) {
      if (resumed !== undefined) {
        parked++;
        await resumed.promise;
        parked--;
        continue;
      }
      let messages: Message[];
      try {
        messages = await gatherBatch();
      } catch (error) {
        if (!running) return;
        log(`event source: poll failed: ${describe(error)}`);
        await sleep(POLL_ERROR_BACKOFF_MS);
        continue;
      }
      if (messages.length === 0) continue;
      try {
        await invoke(messages);
      } catch (error) {
        log(`event source: could not invoke the handler: ${describe(error)}`);
      } finally {
        busy--;
      }
    }
  }

  return {
    get activeInvocations() {
      return active;
    },

    get state(): EventSourceState {
      if (resumed === undefined) return 'Enabled';
      return parked === pollerLoops.length ? 'Disabled' : 'Disabling';
    },

    pause() {
      resumed ??= resumeSignal();
    },

    resume() {
      resumed?.resolve();
      resumed = undefined;
    },

    async start() {
      if (running) return;
      const attributes = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn', 'FifoQueue'] }),
      );
      const arn = attributes.Attributes?.QueueArn;
      if (!arn) throw new Error(`Queue ${queueUrl} has no QueueArn attribute.`);
      if (attributes.Attributes?.FifoQueue === 'true') refuseForFifo(options);
      queueArn = arn;
      abort = new AbortController();
      running = true;
      pollerLoops = Array.from({ length: options.pollers }, () => pollerLoop());
    },

    async stop() {
      if (!running) return;
      running = false;
      abort.abort();
      const paused = resumed;
      paused?.resolve();
      await Promise.all(pollerLoops);
      // Still paused after a restart.
      if (paused !== undefined && resumed === paused) resumed = resumeSignal();
      pollerLoops = [];
    },

    async waitUntilDrained(waitOptions = {}) {
      const timeoutMs = waitOptions.timeoutMs ?? 30_000;
      const interval = waitOptions.pollIntervalMs ?? 50;
      const giveUp = Date.now() + timeoutMs;
      let quietChecks = 0;
      let last: QueueCounts | undefined;
      // Two quiet checks in a row: a record deleted by one poller and a new one received by another can
      // otherwise fall between one GetQueueAttributes and the next look at `busy`.
      while (quietChecks < 2) {
        if (Date.now() > giveUp) {
          throw new Error(
            `Queue not drained after ${timeoutMs} ms: ${JSON.stringify(last)}, invocations running: ${active}`,
          );
        }
        last = await readQueueCounts(sqs, queueUrl);
        const empty = totalMessages(last) === 0;
        quietChecks = empty && busy === 0 ? quietChecks + 1 : 0;
        if (quietChecks < 2) await sleep(interval);
      }
    },
  };
}

/** What Lambda refuses on an event source mapping of a FIFO queue. */
function refuseForFifo(options: SqsEventSourceOptions): void {
  if (options.batchSize > SQS_MAX_MESSAGES_PER_RECEIVE) {
    throw new Error(`A FIFO queue hands out at most ${SQS_MAX_MESSAGES_PER_RECEIVE} records per batch.`);
  }
  if (options.maxBatchingWindowSeconds > 0) {
    throw new Error('A FIFO queue has no batching window: set maxBatchingWindowSeconds to 0.');
  }
}

function resumeSignal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const TIMED_OUT = Symbol('timed out');

async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
