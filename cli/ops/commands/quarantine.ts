/**
 * `quarantine list | show ID | requeue ID|--all`: the bodies the receiver or a consumer could not take
 * (not JSON, not an envelope, an event too large, refused by a queue), decoded, and after a fix re-sent
 * through the receiver as fresh deliveries. A body's messages are deleted only after its replacement is
 * stored in every subscriber queue that wants it; a body the receiver would still refuse stays.
 */
import { DeliveryReplay, type ReplayOutcome } from '../adapters/delivery-replay.ts';
import { type QueuedMessage, QueueMessages } from '../adapters/queue-messages.ts';
import { OpsError, UsageError } from '../errors.ts';
import { labelled } from '../output.ts';
import {
  type BodySummary,
  bodyText,
  groupQuarantined,
  type QuarantinedBody,
  summarise,
} from '../quarantine/quarantined-bodies.ts';
import { messageLane, statusLane } from '../target/ops-target.ts';
import type { CommandContext } from './command-context.ts';

/** Most quarantine messages one command reads (the queue keeps 14 days of them). */
export const QUARANTINE_SCAN_LIMIT = 10_000;
/** Messages stay hidden this long while being listed (released at once after). */
const LIST_HIDE_SECONDS = 30;
/** Bodies being requeued stay hidden this long: replayed and deleted well within it. */
const REQUEUE_HIDE_SECONDS = 300;

export async function quarantineListCommand(context: CommandContext): Promise<void> {
  const summaries = await listQuarantinedBodies(context);
  context.output.result({ bodies: summaries }, [
    `${summaries.length} quarantined bod${summaries.length === 1 ? 'y' : 'ies'} (${context.target.description})`,
    ...summaries.map(
      (body) =>
        `${body.id}  ${body.reason ?? '?'}  ${body.bytes === undefined ? `${body.chunksPresent} of ${body.chunks} chunks` : `${body.bytes} bytes`}  received ${body.receivedAt ?? '?'}  reads as ${body.reads}`,
    ),
  ]);
}

/**
 * Every quarantined body, decoded and summarised (reason, size, chunks, what it reads as), without
 * consuming any message (`quarantine list`, and the local dashboard's panel).
 */
export async function listQuarantinedBodies(context: CommandContext): Promise<BodySummary[]> {
  return (await readBodies(context, LIST_HIDE_SECONDS, true)).map(summarise);
}

export async function quarantineShowCommand(context: CommandContext, id: string): Promise<void> {
  const body = findBody(await readBodies(context, LIST_HIDE_SECONDS, true), id);
  const summary = summarise(body);
  const text = body.bytes === undefined ? undefined : bodyText(body.bytes);
  context.output.result(
    {
      ...summary,
      messageIds: body.messages.map((message) => message.messageId),
      ...(text !== undefined
        ? { body: text }
        : body.bytes !== undefined
          ? { bodyBase64: body.bytes.toString('base64') }
          : {}),
    },
    [
      ...labelled([
        ['id', summary.id],
        ['reason', summary.reason],
        ['received', summary.receivedAt],
        ['delivery', summary.deliveryId],
        ['size', summary.bytes === undefined ? undefined : `${summary.bytes} bytes`],
        ['chunks', summary.chunks > 1 ? `${summary.chunksPresent} of ${summary.chunks}` : undefined],
        ['reads as', summary.reads],
      ]),
      '',
      text ??
        (body.bytes === undefined
          ? '(chunks missing: the body cannot be reassembled)'
          : `(not UTF-8; base64) ${body.bytes.toString('base64')}`),
    ],
  );
}

export interface RequeueReport {
  readonly id: string;
  readonly outcome: ReplayOutcome['outcome'] | 'incomplete';
  readonly detail: string;
  /** Messages of a stored body SQS did not delete (a later requeue repeats it; subscribers skip duplicates). */
  readonly notDeleted?: readonly string[];
}

export async function quarantineRequeueCommand(
  context: CommandContext,
  id: string | undefined,
): Promise<void> {
  const { target, output } = context;
  const queues = new QueueMessages(target.sqs);
  const bodies = await readBodies(context, REQUEUE_HIDE_SECONDS, false);
  let chosen: QuarantinedBody[];
  try {
    chosen = id === undefined ? bodies : [findBody(bodies, id)];
  } catch (error) {
    await queues.release(
      target.quarantineQueueUrl,
      bodies.flatMap((body) => body.messages),
    );
    throw error;
  }
  const others = bodies.filter((body) => !chosen.includes(body)).flatMap((body) => body.messages);
  await queues.release(target.quarantineQueueUrl, others);

  const replay = new DeliveryReplay({
    sqs: target.sqs,
    // Both lanes, as the receiver is given them: it splits the inbound messages into the message lane itself.
    subscribers: target.subscribers.map((subscriber) => {
      const messages = messageLane(subscriber);
      return {
        name: subscriber.name,
        queueUrl: statusLane(subscriber).queueUrl,
        fields: subscriber.fields,
        ...(subscriber.numbers === undefined ? {} : { numbers: subscriber.numbers }),
        ...(subscriber.wabas === undefined ? {} : { wabas: subscriber.wabas }),
        ...(messages === undefined
          ? {}
          : { messageQueueUrl: messages.queueUrl, messageLaneOrdered: messages.ordered }),
      };
    }),
    maximumMessageSizeBytes: target.maximumMessageSizeBytes,
    provenanceKey: await target.provenanceKey?.(),
  });
  const reports: RequeueReport[] = [];
  for (const body of chosen) {
    const report = await requeueOne(body, replay, queues, target.quarantineQueueUrl);
    reports.push(report);
    output.record('quarantine requeue', {
      id: report.id,
      outcome: report.outcome,
      target: target.description,
    });
    if (chosen.length > 1)
      output.progress(`${reports.length} of ${chosen.length}: ${body.id} ${report.outcome}`);
  }
  const requeued = reports.filter((report) => report.outcome === 'stored').length;
  output.result({ requeued, left: reports.length - requeued, bodies: reports }, [
    `requeued ${requeued} of ${reports.length} quarantined bod${reports.length === 1 ? 'y' : 'ies'}`,
    ...reports.map(
      (report) =>
        `${report.id}  ${report.outcome === 'stored' ? 'requeued' : `stays quarantined: ${report.outcome}`}, ${report.detail}`,
    ),
  ]);
  if (requeued < reports.length) {
    throw new OpsError(
      `${reports.length - requeued} bod${reports.length - requeued === 1 ? 'y stays' : 'ies stay'} quarantined`,
    );
  }
}

async function requeueOne(
  body: QuarantinedBody,
  replay: DeliveryReplay,
  queues: QueueMessages,
  quarantineQueueUrl: string,
): Promise<RequeueReport> {
  if (body.bytes === undefined) {
    await queues.release(quarantineQueueUrl, body.messages);
    return {
      id: body.id,
      outcome: 'incomplete',
      detail: `${body.messages.length} of ${body.chunks} chunks present`,
    };
  }
  let outcome: ReplayOutcome;
  try {
    outcome = await replay.replay(body.bytes, `requeue-${body.id}`.slice(0, 64), body.proof);
  } catch (error) {
    outcome = {
      outcome: 'failed',
      problem: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  }
  if (outcome.outcome !== 'stored') {
    await queues.release(quarantineQueueUrl, body.messages);
    return { id: body.id, outcome: outcome.outcome, detail: describeOutcome(outcome) };
  }
  const notDeleted = await queues.delete(quarantineQueueUrl, body.messages);
  return {
    id: body.id,
    outcome: 'stored',
    detail: describeOutcome(outcome),
    ...(notDeleted.length === 0 ? {} : { notDeleted }),
  };
}

function describeOutcome(outcome: ReplayOutcome): string {
  switch (outcome.outcome) {
    case 'unproven':
      return `refused: ${outcome.problem}`;
    case 'stored':
      return `${outcome.events} event${outcome.events === 1 ? '' : 's'} to ${outcome.subscribers.join(', ') || 'its subscribers'}`;
    case 'still-invalid':
      return `the receiver would quarantine it again (${outcome.reasons.join(', ')})`;
    case 'unrouted':
      return `no subscriber wants its events (fields ${outcome.fields.join(', ')}; by their fields, numbers and wabas)`;
    case 'failed':
      return outcome.problem;
  }
}

async function readBodies(
  context: CommandContext,
  hideSeconds: number,
  release: boolean,
): Promise<QuarantinedBody[]> {
  const queues = new QueueMessages(context.target.sqs);
  const url = context.target.quarantineQueueUrl;
  const messages: QueuedMessage[] = await queues.scan(url, {
    limit: QUARANTINE_SCAN_LIMIT,
    hideSeconds,
    onProgress: (count) => {
      if (count % 500 === 0) context.output.progress(`read ${count} quarantine messages…`);
    },
  });
  if (release) await queues.release(url, messages);
  return groupQuarantined(messages);
}

function findBody(bodies: readonly QuarantinedBody[], id: string): QuarantinedBody {
  const body = bodies.find((candidate) => candidate.id === id);
  if (body === undefined) {
    throw new UsageError(`no quarantined body ${id} (npm run ops -- quarantine list shows the ids)`);
  }
  return body;
}
