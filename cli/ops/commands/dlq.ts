/**
 * `dlq stats | peek [-n N] | redrive [--max N]` for the DLQs of one subscriber's lanes (both, or the one
 * `--lane` names), which hold only records its consumers failed (quarantined bodies go to the quarantine
 * queue), so a redrive never re-quarantines.
 *
 * SQS does not say why a record failed; `peek` tells what the claims of its events say: released claims
 * (the handler failed), lapsed leases (a timeout or crash mid-effect), or everything done (only the
 * acknowledgement was lost, a redrive skips it as duplicates).
 */

import { wantsEvent } from 'whatsapp-webhook-dedup/contract/event-origin';
import type { LaneName } from 'whatsapp-webhook-dedup/contract/lanes';
import { storageKey } from 'whatsapp-webhook-dedup/functions/claims/storage-key';
import { extractEvents } from 'whatsapp-webhook-dedup/functions/events/extract-events';
import type { DeliveryAttributeName } from 'whatsapp-webhook-dedup/functions/queue/outgoing-message';
import {
  DEAD_LETTER_DETAILS_ATTRIBUTE,
  DEAD_LETTER_REASON_ATTRIBUTE,
  DEAD_LETTERED_BY_ATTRIBUTE,
} from 'whatsapp-webhook-dedup/functions/queue/sqs-conversation-dead-letters';
import { totalMessages } from '../../local/queue-counts.ts';
import { ClaimRecords } from '../adapters/claim-records.ts';
import { type MessageMoveTask, UNFINISHED_TASK_STATUSES } from '../adapters/message-move-tasks.ts';
import { type MessageCopy, type QueuedMessage, QueueMessages } from '../adapters/queue-messages.ts';
import { OpsError } from '../errors.ts';
import { type ClaimStatus, claimStatus } from '../inspect/claim-view.ts';
import { age, labelled } from '../output.ts';
import type { LaneTarget, SubscriberTarget } from '../target/ops-target.ts';
import { selectLanes } from '../target/select-subscriber.ts';
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

export async function dlqStatsCommand(
  context: CommandContext,
  requested: LaneName | undefined,
): Promise<void> {
  const subscriber = context.subscriber();
  const queues = new QueueMessages(context.target.sqs);
  const tasks = context.target.messageMoveTasks;
  const lanes = [];
  for (const lane of selectLanes(subscriber, requested)) {
    const [dlq, queue] = await Promise.all([
      queues.counts(lane.deadLetterQueueUrl),
      queues.counts(lane.queueUrl),
    ]);
    const task =
      tasks === undefined ? undefined : (await tasks.list(await queues.queueArn(lane.deadLetterQueueUrl)))[0];
    lanes.push({
      lane: lane.lane,
      ordered: lane.ordered,
      dlq,
      queue,
      lastRedrive: task,
    });
  }
  context.output.result({ subscriber: subscriber.name, lanes }, [
    `subscriber ${subscriber.name} (${context.target.description})`,
    ...labelled(
      lanes.flatMap(({ lane, ordered, dlq, queue, lastRedrive }) => [
        [`${lane} lane DLQ`, `${dlq.visible} waiting, ${dlq.inFlight} being read`],
        [
          `${lane} lane queue`,
          `${queue.visible} waiting, ${queue.inFlight} in flight, ${queue.delayed} delayed${ordered ? ' (FIFO)' : ''}`,
        ],
        [`${lane} lane last redrive`, lastRedrive === undefined ? undefined : describeTask(lastRedrive)],
      ]),
    ),
  ]);
}

export interface PeekedRecord {
  readonly lane: LaneName;
  readonly messageId: string;
  readonly sentAt: string | undefined;
  readonly receiveCount: number | undefined;
  readonly sourceQueueArn: string | undefined;
  /**
   * Who moved it here: `sqs` (redrive, after maxReceiveCount receives), `consumer` (an ordered lane's
   * consumer on the record's last receive, so that its conversation went on: attribute `deadLetteredBy`).
   */
  readonly deadLetteredBy: 'sqs' | 'consumer' | undefined;
  /** Why a handler gave up on it (`DeadLetter`, attribute `deadLetterReason`), e.g. `http-422`. */
  readonly deadLetterReason: string | undefined;
  /** The handler's details for an operator (attribute `deadLetterDetails`), e.g. a destination's status and answer. */
  readonly deadLetterDetails: Readonly<Record<string, string>> | undefined;
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

export async function dlqPeekCommand(
  context: CommandContext,
  requested: LaneName | undefined,
  limit: number,
): Promise<void> {
  const subscriber = context.subscriber();
  const lanes = selectLanes(subscriber, requested);
  let scanned = 0;
  let truncated = false;
  const found: PeekedRecord[] = [];
  for (const lane of lanes) {
    const peek = await peekDeadLetters(context, subscriber, lane, limit);
    scanned += peek.scanned;
    truncated ||= peek.scanned === PEEK_SCAN_LIMIT;
    found.push(...peek.records);
  }
  const records = newestFirst(found).slice(0, limit);
  const where =
    lanes.length === 1
      ? `the ${lanes[0]?.lane} lane DLQ`
      : `the DLQs (${lanes.map((l) => l.lane).join(', ')} lanes)`;
  const now = context.clock();
  context.output.result({ subscriber: subscriber.name, scanned, records }, [
    `${records.length} newest of ${scanned}${truncated ? '+' : ''} records in ${where} of ${subscriber.name} (${context.target.description})`,
    ...records.flatMap((record) => [
      `${record.messageId}  ${record.lane} lane  sent ${record.sentAt ?? '?'}${record.sentAt === undefined ? '' : ` (${age(Date.parse(record.sentAt), now)} ago)`}  receives ${record.receiveCount ?? '?'}`,
      ...labelled(
        [
          [
            'delivery',
            record.deliveryId === undefined
              ? undefined
              : `${record.deliveryId}, part ${record.part ?? '1/1'}`,
          ],
          ['from', record.sourceQueueArn],
          [
            'moved by',
            record.deadLetteredBy === 'consumer'
              ? record.deadLetterReason === undefined
                ? 'the consumer, on its last receive (its conversation went on)'
                : `the consumer: its handler gave up (${record.deadLetterReason})`
              : undefined,
          ],
          [
            'details',
            record.deadLetterDetails === undefined ? undefined : JSON.stringify(record.deadLetterDetails),
          ],
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

function newestFirst(records: readonly PeekedRecord[]): PeekedRecord[] {
  const time = (record: PeekedRecord) => (record.sentAt === undefined ? 0 : Date.parse(record.sentAt));
  return [...records].sort((a, b) => time(b) - time(a));
}

export interface DeadLetterPeek {
  /** Records read (at most PEEK_SCAN_LIMIT). */
  readonly scanned: number;
  readonly records: readonly PeekedRecord[];
}

/**
 * The newest `limit` records of one lane's DLQ, without consuming any: each is hidden while the scan runs
 * and released at once after (`dlq peek`, and the local dashboard's panel). In a FIFO DLQ a conversation's
 * later records stay locked while the scan holds its earlier ones, so a scan sees up to 10 of each.
 */
export async function peekDeadLetters(
  context: CommandContext,
  subscriber: SubscriberTarget,
  lane: LaneTarget,
  limit: number,
): Promise<DeadLetterPeek> {
  const queues = new QueueMessages(context.target.sqs);
  const url = lane.deadLetterQueueUrl;
  const scanned = await queues.scan(url, {
    limit: PEEK_SCAN_LIMIT,
    hideSeconds: PEEK_HIDE_SECONDS,
    onProgress: (count) => {
      if (count % 100 === 0) context.output.progress(`read ${count} DLQ records…`);
    },
  });
  await queues.release(url, scanned);
  const newest = [...scanned].sort((a, b) => (b.sentAt ?? 0) - (a.sentAt ?? 0)).slice(0, limit);
  return { scanned: scanned.length, records: await describeRecords(context, subscriber, lane, newest) };
}

async function describeRecords(
  context: CommandContext,
  subscriber: SubscriberTarget,
  lane: LaneTarget,
  messages: readonly QueuedMessage[],
): Promise<PeekedRecord[]> {
  const now = context.clock();
  const keysOf = messages.map((message) => {
    const extraction = extractEvents(message.body);
    if (!extraction.ok) return undefined;
    return extraction.events.filter((event) => wantsEvent(subscriber, event)).map((event) => event.key);
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
      lane: lane.lane,
      messageId: message.messageId,
      sentAt: message.sentAt === undefined ? undefined : new Date(message.sentAt).toISOString(),
      receiveCount: message.receiveCount,
      sourceQueueArn: message.sourceQueueArn,
      deadLetteredBy: deadLetteredBy(message),
      deadLetterReason: message.attributes[DEAD_LETTER_REASON_ATTRIBUTE]?.StringValue,
      deadLetterDetails: deadLetterDetails(message),
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

/** SQS names the source queue of what its redrive moved; the consumer sends its own, marked. */
function deadLetteredBy(message: QueuedMessage): PeekedRecord['deadLetteredBy'] {
  if (message.sourceQueueArn !== undefined) return 'sqs';
  return message.attributes[DEAD_LETTERED_BY_ATTRIBUTE]?.StringValue === 'consumer' ? 'consumer' : undefined;
}

function deadLetterDetails(message: QueuedMessage): PeekedRecord['deadLetterDetails'] {
  const json = message.attributes[DEAD_LETTER_DETAILS_ATTRIBUTE]?.StringValue;
  if (json === undefined) return undefined;
  try {
    return JSON.parse(json) as Record<string, string>;
  } catch {
    return { unreadable: json.slice(0, 200) };
  }
}

function stringAttribute(message: QueuedMessage, name: DeliveryAttributeName): string | undefined {
  return message.attributes[name]?.StringValue;
}

export type LaneRedrive =
  | {
      readonly lane: LaneName;
      readonly method: 'copy-and-delete';
      readonly moved: number;
      readonly failed: readonly { readonly messageId: string; readonly code: string }[];
      readonly notDeleted: readonly string[];
    }
  | { readonly lane: LaneName; readonly method: 'message-move-task'; readonly task: MessageMoveTask }
  /** The DLQ was empty: no task started. */
  | { readonly lane: LaneName; readonly method: 'none'; readonly moved: 0 };

/**
 * Each chosen lane's DLQ back to the lane's queue. A move task where SQS has them (it redrives a FIFO DLQ
 * into a FIFO queue too, SQS Developer Guide "Configure a dead-letter queue redrive"), else, and with
 * --max, copy-then-delete here.
 */
export async function dlqRedriveCommand(
  context: CommandContext,
  requested: LaneName | undefined,
  max: number | undefined,
): Promise<void> {
  const subscriber = context.subscriber();
  const tasks = context.target.messageMoveTasks;
  const results: LaneRedrive[] = [];
  let moved = 0;
  for (const lane of selectLanes(subscriber, requested)) {
    // A move task cannot stop after N messages: with --max, the messages are moved here one batch at a time.
    const result =
      tasks !== undefined && max === undefined
        ? await redriveWithMoveTask(context, subscriber, lane)
        : await redriveByCopies(context, subscriber, lane, max === undefined ? undefined : max - moved);
    if (result.method === 'copy-and-delete') moved += result.moved;
    results.push(result);
  }
  context.output.result(
    { subscriber: subscriber.name, lanes: results },
    results.flatMap((result) => redriveLines(subscriber.name, result)),
  );
  const notMoved = results.reduce(
    (count, result) => count + (result.method === 'copy-and-delete' ? result.failed.length : 0),
    0,
  );
  const failedTask = results.find(
    (result) => result.method === 'message-move-task' && result.task.status !== 'COMPLETED',
  );
  if (notMoved > 0) throw new OpsError(`${notMoved} record(s) could not be moved; run redrive again`);
  if (failedTask?.method === 'message-move-task') {
    const { task } = failedTask;
    throw new OpsError(
      `the move task of the ${failedTask.lane} lane DLQ ended ${task.status}${task.failureReason === undefined ? '' : `: ${task.failureReason}`}`,
    );
  }
}

function redriveLines(subscriber: string, result: LaneRedrive): string[] {
  const dlq = `the ${result.lane} lane DLQ of ${subscriber}`;
  switch (result.method) {
    case 'none':
      return [`${dlq} is empty: nothing to move`];
    case 'message-move-task':
      return [`redrive of ${dlq}: ${describeTask(result.task)}`];
    case 'copy-and-delete':
      return [
        `moved ${result.moved} record${result.moved === 1 ? '' : 's'} from ${dlq} to its queue`,
        ...result.failed.map(
          ({ messageId, code }) =>
            `not moved: ${messageId} (${code}), left in the DLQ, visible again within a minute`,
        ),
        ...result.notDeleted.map(
          (messageId) =>
            `copied but not deleted from the DLQ: ${messageId} (a later redrive repeats it; its events are skipped as duplicates)`,
        ),
      ];
  }
}

async function redriveByCopies(
  context: CommandContext,
  subscriber: SubscriberTarget,
  lane: LaneTarget,
  max: number | undefined,
): Promise<LaneRedrive> {
  const queues = new QueueMessages(context.target.sqs);
  let moved = 0;
  const failed: { messageId: string; code: string }[] = [];
  const notDeleted: string[] = [];
  while (max === undefined || moved < max) {
    const batch = await queues.receive(
      lane.deadLetterQueueUrl,
      Math.min(10, (max ?? Number.POSITIVE_INFINITY) - moved),
      REDRIVE_HIDE_SECONDS,
    );
    if (batch.length === 0) break;
    const sendable = lane.ordered ? batch.filter((message) => message.messageGroupId !== undefined) : batch;
    for (const message of batch) {
      if (!sendable.includes(message))
        failed.push({ messageId: message.messageId, code: 'NoMessageGroupId' });
    }
    const sent = await queues.sendCopies(
      lane.queueUrl,
      sendable.map((message) => redriveCopy(message, lane)),
      context.target.maximumMessageSizeBytes,
    );
    for (const { index, code } of sent.failed)
      failed.push({ messageId: sendable[index]?.messageId ?? '?', code });
    // Deleted only once its copy is stored: a failed send leaves the record in the DLQ.
    const stored = sent.stored.map((index) => sendable[index] as QueuedMessage);
    notDeleted.push(...(await queues.delete(lane.deadLetterQueueUrl, stored)));
    moved += stored.length;
    context.output.progress(
      `${lane.lane} lane: moved ${moved}${max === undefined ? '' : ` of at most ${max}`}…`,
    );
    // Sends that fail stay hidden for REDRIVE_HIDE_SECONDS, so the loop does not meet them again.
    if (sent.stored.length === 0) break;
  }
  const result = { lane: lane.lane, method: 'copy-and-delete', moved, failed, notDeleted } as const;
  context.output.record('dlq redrive', {
    subscriber: subscriber.name,
    ...result,
    failed: failed.length,
    target: context.target.description,
  });
  return result;
}

/**
 * What a record goes back as: its body and attributes, without the consumer's dead-letter mark (it is a
 * delivery again); into a FIFO lane in its own group (its conversation), with its DLQ message id as
 * deduplication id: the original's (the receiver's, from its event keys) would make SQS drop the copy
 * within 5 minutes of the first send, and a repeat of this redrive (a copy whose delete failed) is dropped.
 */
function redriveCopy(message: QueuedMessage, lane: LaneTarget): MessageCopy {
  const { [DEAD_LETTERED_BY_ATTRIBUTE]: _mark, ...attributes } = message.attributes;
  return {
    body: message.body,
    attributes,
    ...(lane.ordered && message.messageGroupId !== undefined
      ? { fifo: { groupId: message.messageGroupId, deduplicationId: message.messageId } }
      : {}),
  };
}

async function redriveWithMoveTask(
  context: CommandContext,
  subscriber: SubscriberTarget,
  lane: LaneTarget,
): Promise<LaneRedrive> {
  const tasks = context.target.messageMoveTasks;
  if (tasks === undefined) throw new Error('No message move tasks on this target.');
  const queues = new QueueMessages(context.target.sqs);
  if (totalMessages(await queues.counts(lane.deadLetterQueueUrl)) === 0) {
    return { lane: lane.lane, method: 'none', moved: 0 };
  }
  const [sourceArn, destinationArn] = await Promise.all([
    queues.queueArn(lane.deadLetterQueueUrl),
    queues.queueArn(lane.queueUrl),
  ]);
  const running = (await tasks.list(sourceArn)).find((task) =>
    UNFINISHED_TASK_STATUSES.includes(task.status),
  );
  let taskHandle = running?.taskHandle;
  if (running === undefined) {
    taskHandle = await tasks.start(sourceArn, destinationArn);
    context.output.record('dlq redrive', {
      subscriber: subscriber.name,
      lane: lane.lane,
      method: 'message-move-task',
      taskHandle,
      target: context.target.description,
    });
  } else {
    context.output.progress(
      `a redrive of the ${lane.lane} lane DLQ is already running (started ${isoTime(running.startedAt)}): following it`,
    );
  }
  let task: MessageMoveTask | undefined;
  for (;;) {
    task = (await tasks.list(sourceArn)).find((candidate) => candidate.taskHandle === taskHandle) ?? task;
    if (task !== undefined && !UNFINISHED_TASK_STATUSES.includes(task.status)) break;
    context.output.progress(
      `${lane.lane} lane: ${task === undefined ? 'waiting for the move task…' : describeTask(task)}`,
    );
    await context.sleep(MOVE_TASK_POLL_MS);
  }
  return { lane: lane.lane, method: 'message-move-task', task };
}

function describeTask(task: MessageMoveTask): string {
  const total = task.toMove === undefined ? '' : ` of ${task.toMove}`;
  return `${task.status}, ${task.moved}${total} moved${task.startedAt === undefined ? '' : `, started ${isoTime(task.startedAt)}`}${task.failureReason === undefined ? '' : ` (${task.failureReason})`}`;
}

function isoTime(epochMs: number | undefined): string {
  return epochMs === undefined ? '?' : new Date(epochMs).toISOString();
}
