/**
 * `dlq stats | peek [-n N] | redrive [--max N]` for one subscriber's DLQ, which holds only records its
 * consumer failed (quarantined bodies go to the quarantine queue), so a redrive never re-quarantines.
 *
 * SQS does not say why a record failed; `peek` tells what the claims of its events say: released claims
 * (the handler failed), lapsed leases (a timeout or crash mid-effect), or everything done (only the
 * acknowledgement was lost, a redrive skips it as duplicates).
 */

import { wantsField } from '../../contract/subscribers.ts';
import { storageKey } from '../../functions/claims/storage-key.ts';
import { extractEvents } from '../../functions/events/extract-events.ts';
import type { DeliveryAttributeName } from '../../functions/queue/outgoing-message.ts';
import { ClaimRecords } from '../adapters/claim-records.ts';
import { type MessageMoveTask, UNFINISHED_TASK_STATUSES } from '../adapters/message-move-tasks.ts';
import { type QueuedMessage, QueueMessages } from '../adapters/queue-messages.ts';
import { OpsError } from '../errors.ts';
import { type ClaimStatus, claimStatus } from '../inspect/claim-view.ts';
import { age, labelled } from '../output.ts';
import type { SubscriberTarget } from '../target/ops-target.ts';
import type { CommandContext } from './command-context.ts';

/** Most DLQ messages `peek` reads to find the newest (SQS returns them in no particular order). */
export const PEEK_SCAN_LIMIT = 1_000;
/** A scanned message stays hidden this long unless released first (a crash of ops returns it then). */
const PEEK_HIDE_SECONDS = 30;
/** A message being redriven stays hidden this long: its copy is sent and it is deleted well within it. */
const REDRIVE_HIDE_SECONDS = 60;
const MOVE_TASK_POLL_MS = 5_000;
/** Keys listed per record in `peek`'s text output. */
const KEYS_SHOWN = 5;

export async function dlqStatsCommand(context: CommandContext): Promise<void> {
  const subscriber = context.subscriber();
  const queues = new QueueMessages(context.target.sqs);
  const [dlq, deliveryQueue] = await Promise.all([
    queues.counts(subscriber.deadLetterQueueUrl),
    queues.counts(subscriber.deliveryQueueUrl),
  ]);
  const tasks = context.target.messageMoveTasks;
  const task =
    tasks === undefined
      ? undefined
      : (await tasks.list(await queues.queueArn(subscriber.deadLetterQueueUrl)))[0];
  context.output.result(
    { subscriber: subscriber.name, dlq, deliveryQueue, ...(task === undefined ? {} : { lastRedrive: task }) },
    [
      `subscriber ${subscriber.name} (${context.target.description})`,
      ...labelled([
        ['DLQ', `${dlq.visible} waiting, ${dlq.inFlight} being read`],
        [
          'delivery queue',
          `${deliveryQueue.visible} waiting, ${deliveryQueue.inFlight} in flight, ${deliveryQueue.delayed} delayed`,
        ],
        ['last redrive', task === undefined ? undefined : describeTask(task)],
      ]),
    ],
  );
}

export interface PeekedRecord {
  readonly messageId: string;
  readonly sentAt: string | undefined;
  readonly receiveCount: number | undefined;
  readonly sourceQueueArn: string | undefined;
  readonly deliveryId: string | undefined;
  readonly part: string | undefined;
  readonly bytes: number;
  /** What the claims of its events say about why it failed. */
  readonly failure: readonly string[];
  readonly events: number;
  readonly claims: Readonly<Partial<Record<ClaimStatus | 'none', number>>>;
  /** Keys of its events that are not done (the ones a redrive would run). */
  readonly pendingKeys: readonly string[];
}

export async function dlqPeekCommand(context: CommandContext, limit: number): Promise<void> {
  const subscriber = context.subscriber();
  const { scanned, records } = await peekDeadLetters(context, subscriber, limit);
  const now = context.clock();
  context.output.result({ subscriber: subscriber.name, scanned, records }, [
    `${records.length} newest of ${scanned}${scanned === PEEK_SCAN_LIMIT ? '+' : ''} records in the DLQ of ${subscriber.name} (${context.target.description})`,
    ...records.flatMap((record) => [
      `${record.messageId}  sent ${record.sentAt ?? '?'}${record.sentAt === undefined ? '' : ` (${age(Date.parse(record.sentAt), now)} ago)`}  receives ${record.receiveCount ?? '?'}`,
      ...labelled(
        [
          [
            'delivery',
            record.deliveryId === undefined
              ? undefined
              : `${record.deliveryId}, part ${record.part ?? '1/1'}`,
          ],
          ['from', record.sourceQueueArn],
          ['events', `${record.events}: ${claimCounts(record.claims)}`],
          ['failure', record.failure.join('; ')],
          [
            'not done',
            record.pendingKeys.length === 0
              ? undefined
              : `${record.pendingKeys.slice(0, KEYS_SHOWN).join(', ')}${record.pendingKeys.length > KEYS_SHOWN ? `, … (${record.pendingKeys.length})` : ''}`,
          ],
        ],
        { indent: '  ' },
      ),
    ]),
  ]);
}

export interface DeadLetterPeek {
  /** Records read (at most PEEK_SCAN_LIMIT). */
  readonly scanned: number;
  readonly records: readonly PeekedRecord[];
}

/**
 * The newest `limit` records of a subscriber's DLQ, without consuming any: each is hidden while the scan
 * runs and released at once after (`dlq peek`, and the local dashboard's panel).
 */
export async function peekDeadLetters(
  context: CommandContext,
  subscriber: SubscriberTarget,
  limit: number,
): Promise<DeadLetterPeek> {
  const queues = new QueueMessages(context.target.sqs);
  const url = subscriber.deadLetterQueueUrl;
  const scanned = await queues.scan(url, {
    limit: PEEK_SCAN_LIMIT,
    hideSeconds: PEEK_HIDE_SECONDS,
    onProgress: (count) => {
      if (count % 100 === 0) context.output.progress(`read ${count} DLQ records…`);
    },
  });
  await queues.release(url, scanned);
  const newest = [...scanned].sort((a, b) => (b.sentAt ?? 0) - (a.sentAt ?? 0)).slice(0, limit);
  return { scanned: scanned.length, records: await describeRecords(context, subscriber, newest) };
}

async function describeRecords(
  context: CommandContext,
  subscriber: SubscriberTarget,
  messages: readonly QueuedMessage[],
): Promise<PeekedRecord[]> {
  const now = context.clock();
  const keysOf = messages.map((message) => {
    const extraction = extractEvents(message.body);
    if (!extraction.ok) return undefined;
    return extraction.events
      .filter((event) => wantsField(subscriber.fields, event.field))
      .map((event) => event.key);
  });
  const pkOf = (key: string) => storageKey(key, subscriber.keyNamespace);
  const claims = await new ClaimRecords({
    documentClient: context.target.documentClient,
    tableName: context.target.tableName,
  }).readMany(keysOf.flatMap((keys) => (keys ?? []).map(pkOf)));
  return messages.map((message, index) => {
    const keys = keysOf[index];
    const counts: Partial<Record<ClaimStatus | 'none', number>> = {};
    const pendingKeys: string[] = [];
    for (const key of keys ?? []) {
      const claim = claims.get(pkOf(key));
      const status = claim === undefined ? 'none' : claimStatus(claim, now);
      counts[status] = (counts[status] ?? 0) + 1;
      if (status !== 'done') pendingKeys.push(key);
    }
    const part = stringAttribute(message, 'part');
    const parts = stringAttribute(message, 'parts');
    return {
      messageId: message.messageId,
      sentAt: message.sentAt === undefined ? undefined : new Date(message.sentAt).toISOString(),
      receiveCount: message.receiveCount,
      sourceQueueArn: message.sourceQueueArn,
      deliveryId: stringAttribute(message, 'deliveryId'),
      part: part === undefined ? undefined : `${part}/${parts ?? '?'}`,
      bytes: Buffer.byteLength(message.body),
      failure: keys === undefined ? ['the body is not a WhatsApp envelope'] : failureReasons(counts),
      events: keys?.length ?? 0,
      claims: counts,
      pendingKeys,
    };
  });
}

function failureReasons(counts: Partial<Record<ClaimStatus | 'none', number>>): string[] {
  const reasons: string[] = [];
  if (counts.none) reasons.push('a handler failed (its claims were released)');
  if (counts['lease-lapsed']) reasons.push('an invocation timed out or crashed mid-effect (lease lapsed)');
  if (counts['in-flight']) reasons.push('a worker still holds some of its claims');
  if (counts['unknown-state']) reasons.push('a claim item the consumer did not write blocks an event');
  if (reasons.length === 0) {
    reasons.push('every event is done: only the acknowledgement failed; a redrive skips them as duplicates');
  }
  return reasons;
}

function claimCounts(counts: Readonly<Partial<Record<ClaimStatus | 'none', number>>>): string {
  const entries = Object.entries(counts);
  return entries.length === 0
    ? 'none for this subscriber'
    : entries.map(([status, count]) => `${count} ${status === 'none' ? 'without claim' : status}`).join(', ');
}

function stringAttribute(message: QueuedMessage, name: DeliveryAttributeName): string | undefined {
  return message.attributes[name]?.StringValue;
}

export async function dlqRedriveCommand(context: CommandContext, max: number | undefined): Promise<void> {
  const subscriber = context.subscriber();
  const tasks = context.target.messageMoveTasks;
  // A move task cannot stop after N messages: with --max, the messages are moved here one batch at a time.
  if (tasks !== undefined && max === undefined) return redriveWithMoveTask(context, subscriber);
  const queues = new QueueMessages(context.target.sqs);
  let moved = 0;
  const failed: { messageId: string; code: string }[] = [];
  const notDeleted: string[] = [];
  while (max === undefined || moved < max) {
    const batch = await queues.receive(
      subscriber.deadLetterQueueUrl,
      Math.min(10, (max ?? Number.POSITIVE_INFINITY) - moved),
      REDRIVE_HIDE_SECONDS,
    );
    if (batch.length === 0) break;
    const sent = await queues.sendCopies(
      subscriber.deliveryQueueUrl,
      batch,
      context.target.maximumMessageSizeBytes,
    );
    for (const { index, code } of sent.failed)
      failed.push({ messageId: batch[index]?.messageId ?? '?', code });
    // Deleted only once its copy is stored: a failed send leaves the record in the DLQ.
    const stored = sent.stored.map((index) => batch[index] as QueuedMessage);
    notDeleted.push(...(await queues.delete(subscriber.deadLetterQueueUrl, stored)));
    moved += stored.length;
    context.output.progress(`moved ${moved}${max === undefined ? '' : ` of at most ${max}`}…`);
    // Sends that fail stay hidden for REDRIVE_HIDE_SECONDS, so the loop does not meet them again.
    if (sent.stored.length === 0) break;
  }
  const result = { subscriber: subscriber.name, method: 'copy-and-delete', moved, failed, notDeleted };
  context.output.record('dlq redrive', {
    ...result,
    failed: failed.length,
    target: context.target.description,
  });
  context.output.result(result, [
    `moved ${moved} record${moved === 1 ? '' : 's'} from the DLQ of ${subscriber.name} to its delivery queue`,
    ...failed.map(
      ({ messageId, code }) =>
        `not moved: ${messageId} (${code}), left in the DLQ, visible again within a minute`,
    ),
    ...notDeleted.map(
      (messageId) =>
        `copied but not deleted from the DLQ: ${messageId} (a later redrive repeats it; its events are skipped as duplicates)`,
    ),
  ]);
  if (failed.length > 0)
    throw new OpsError(`${failed.length} record(s) could not be moved; run redrive again`);
}

async function redriveWithMoveTask(context: CommandContext, subscriber: SubscriberTarget): Promise<void> {
  const tasks = context.target.messageMoveTasks;
  if (tasks === undefined) throw new Error('No message move tasks on this target.');
  const queues = new QueueMessages(context.target.sqs);
  const [sourceArn, destinationArn] = await Promise.all([
    queues.queueArn(subscriber.deadLetterQueueUrl),
    queues.queueArn(subscriber.deliveryQueueUrl),
  ]);
  const running = (await tasks.list(sourceArn)).find((task) =>
    UNFINISHED_TASK_STATUSES.includes(task.status),
  );
  let taskHandle = running?.taskHandle;
  if (running === undefined) {
    taskHandle = await tasks.start(sourceArn, destinationArn);
    context.output.record('dlq redrive', {
      subscriber: subscriber.name,
      method: 'message-move-task',
      taskHandle,
      target: context.target.description,
    });
  } else {
    context.output.progress(
      `a redrive of this DLQ is already running (started ${isoTime(running.startedAt)}): following it`,
    );
  }
  let task: MessageMoveTask | undefined;
  for (;;) {
    task = (await tasks.list(sourceArn)).find((candidate) => candidate.taskHandle === taskHandle) ?? task;
    if (task !== undefined && !UNFINISHED_TASK_STATUSES.includes(task.status)) break;
    context.output.progress(task === undefined ? 'waiting for the move task…' : describeTask(task));
    await context.sleep(MOVE_TASK_POLL_MS);
  }
  context.output.result({ subscriber: subscriber.name, method: 'message-move-task', task }, [
    `redrive of the DLQ of ${subscriber.name}: ${describeTask(task)}`,
  ]);
  if (task.status !== 'COMPLETED') {
    throw new OpsError(
      `the move task ended ${task.status}${task.failureReason === undefined ? '' : `: ${task.failureReason}`}`,
    );
  }
}

function describeTask(task: MessageMoveTask): string {
  const total = task.toMove === undefined ? '' : ` of ${task.toMove}`;
  return `${task.status}, ${task.moved}${total} moved${task.startedAt === undefined ? '' : `, started ${isoTime(task.startedAt)}`}${task.failureReason === undefined ? '' : ` (${task.failureReason})`}`;
}

function isoTime(epochMs: number | undefined): string {
  return epochMs === undefined ? '?' : new Date(epochMs).toISOString();
}
