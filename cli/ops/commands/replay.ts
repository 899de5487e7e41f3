/**
 * `replay --subscriber NAME --since T [--until T] [--fields F,…] [--dry-run] [--rerun --yes] [--rate N/s]
 * [--restart] [--max N]`: sends the archived deliveries of a time range again, to one subscriber's queues,
 * through the receiver's own code (its lanes, splitting and routing by field, number and WABA), in arrival
 * order. The claims skip what is done as duplicates; `--rerun` first forgets the range's done claims, so that
 * a fixed handler runs them again. Progress on stderr; an interrupted replay continues from its cursor when
 * the same command runs again.
 */
import { randomUUID } from 'node:crypto';
import {
  type ArchiveRecord,
  archivedBodyBytes,
  DEFAULT_ARCHIVE_RETENTION_DAYS,
} from 'whatsapp-webhook-dedup/contract/archive';
import { wantsField } from 'whatsapp-webhook-dedup/contract/event-origin';
import { storageKey } from 'whatsapp-webhook-dedup/functions/claims/storage-key';
import { type ArchivePosition, ArchiveReader } from '../adapters/archive-reader.ts';
import { ClaimRecords } from '../adapters/claim-records.ts';
import { DeliveryReplay } from '../adapters/delivery-replay.ts';
import { OpsError, UsageError } from '../errors.ts';
import { type ClaimView, viewClaim } from '../inspect/claim-view.ts';
import { labelled } from '../output.ts';
import type { ReplayArguments } from '../replay/replay-arguments.ts';
import { defaultCursorDirectory, ReplayCursorStore } from '../replay/replay-cursor.ts';
import { ReplayProgress } from '../replay/replay-progress.ts';
import { resolveReplayRange } from '../replay/replay-range.ts';
import {
  emptyCounts,
  type ReplayCounts,
  ReplayFailedError,
  type ReplayResult,
  runReplay,
  type SendOutcome,
} from '../replay/run-replay.ts';
import { messageLane, type SubscriberTarget, statusLane } from '../target/ops-target.ts';
import { originLimits } from '../target/subscriber-selection.ts';
import type { CommandContext } from './command-context.ts';
import { forgetClaim } from './forget.ts';

export async function replayCommand(context: CommandContext, args: ReplayArguments): Promise<void> {
  const { target, output } = context;
  const subscriber = context.subscriber();
  const fields = narrowedFields(subscriber, args.fields);
  const archive = target.archive;
  if (archive === undefined) {
    throw new OpsError(
      `${target.description} has no delivery archive: replay reads the archive the receiver writes (deploy this version of the construct)`,
    );
  }
  const cursors = new ReplayCursorStore<ReplayCounts>(defaultCursorDirectory(), {
    target: target.description,
    subscriber: subscriber.name,
    since: args.since,
    until: args.until,
    fields: args.fields,
    rerun: args.rerun,
  });
  const saved = args.restart ? undefined : cursors.load();
  const now = context.clock();
  const range =
    saved ?? resolveReplayRange(args, now, (await archive.retentionDays()) ?? DEFAULT_ARCHIVE_RETENTION_DAYS);
  if (saved?.position !== undefined) {
    output.progress(
      `continuing the replay begun ${new Date(saved.startedAtMs).toISOString()} after ${saved.position.arrivedAt} (cursor ${cursors.path}; --restart starts over)`,
    );
  }
  const startedAtMs = saved?.startedAtMs ?? now;
  const reader = new ArchiveReader({ s3: archive.s3, bucketName: archive.bucketName });
  const objects = await reader.objects(range.sinceMs, range.untilMs);
  const progress = new ReplayProgress(
    output,
    context.clock,
    Math.max(range.sinceMs, Math.min(...objects.map((object) => object.firstArrivalMs))),
    Math.min(range.untilMs - 1, Math.max(...objects.map((object) => object.lastArrivalMs))),
  );
  const claims = new ClaimRecords({ documentClient: target.documentClient, tableName: target.tableName });
  const sender = new DeliveryReplay({
    sqs: target.sqs,
    subscribers: [subscriberQueues(subscriber, fields)],
    maximumMessageSizeBytes: target.maximumMessageSizeBytes,
    origin: 'ops replay',
    ownMessageGroups: { runId: randomUUID() },
    provenanceKey: await target.provenanceKey?.(),
  });
  const pkOf = (key: string) => storageKey(key, subscriber.keyNamespace);

  let result: ReplayResult;
  try {
    result = await runReplay(
      {
        records: (after) => reader.records(range.sinceMs, range.untilMs, { after, objects }),
        claims: async (keys) => {
          const found = await claims.readMany(keys.map(pkOf));
          const nowMs = context.clock();
          const views = new Map<string, ClaimView>();
          for (const key of keys) {
            const snapshot = found.get(pkOf(key));
            if (snapshot !== undefined) views.set(key, viewClaim(pkOf(key), snapshot, nowMs));
          }
          return views;
        },
        forget: async (key, claim) =>
          (
            await forgetClaim(context, subscriber, key, pkOf(key), claim, {
              force: false,
              by: 'replay --rerun',
            })
          ).forgotten !== undefined,
        send: (record) => send(sender, record),
        saveCursor: (position, counts) =>
          cursors.save({ sinceMs: range.sinceMs, untilMs: range.untilMs, startedAtMs, position, counts }),
        clock: context.clock,
        sleep: context.sleep,
        onProgress: (position, counts) => progress.update(position, counts),
        onRefused: (record, reason) =>
          output.progress(`refused delivery ${record.deliveryId} (${record.arrivedAt}): ${reason}`),
      },
      {
        fields,
        numbers: subscriber.numbers,
        wabas: subscriber.wabas,
        rerun: args.rerun,
        dryRun: args.dryRun,
        ratePerSecond: args.ratePerSecond,
        maxDeliveries: args.maxDeliveries,
        // A dry run after an interruption counts what the next run would do: from the cursor, from zero.
        resumeFrom:
          saved?.position === undefined
            ? undefined
            : { position: saved.position, counts: args.dryRun ? emptyCounts() : saved.counts },
        startedAtMs,
      },
      archivedBodyBytes,
    );
  } catch (error) {
    progress.done();
    if (!(error instanceof ReplayFailedError)) throw error;
    output.record('replay', {
      ...summaryFields(subscriber, range, args),
      stopped: error.message,
      ...error.counts,
    });
    throw new OpsError(
      `${error.message}; ${error.position === undefined ? 'nothing sent yet' : `sent up to ${error.position.arrivedAt}`}: run the same command again to continue (cursor ${cursors.path})`,
    );
  }
  progress.done();
  if (!args.dryRun) {
    if (result.complete) cursors.remove();
    output.record('replay', {
      ...summaryFields(subscriber, range, args),
      complete: result.complete,
      ...result.counts,
    });
  }
  report(context, subscriber, range, args, result, cursors.path, objects.length);
}

/** `--fields`, each of which the subscriber must receive; else the subscriber's own fields. */
function narrowedFields(
  subscriber: SubscriberTarget,
  requested: readonly string[] | undefined,
): readonly string[] | undefined {
  if (requested === undefined) return subscriber.fields;
  const refused = requested.filter((field) => !wantsField(subscriber.fields, field));
  if (refused.length > 0) {
    throw new UsageError(
      `subscriber ${subscriber.name} does not receive ${refused.join(', ')} (its fields: ${subscriber.fields?.join(', ')})`,
    );
  }
  return requested;
}

/** The one subscriber as the receiver is given it: both lanes, the fields, numbers and wabas to route. */
function subscriberQueues(subscriber: SubscriberTarget, fields: readonly string[] | undefined) {
  const messages = messageLane(subscriber);
  return {
    name: subscriber.name,
    queueUrl: statusLane(subscriber).queueUrl,
    fields,
    ...(subscriber.numbers === undefined ? {} : { numbers: subscriber.numbers }),
    ...(subscriber.wabas === undefined ? {} : { wabas: subscriber.wabas }),
    ...(messages === undefined
      ? {}
      : { messageQueueUrl: messages.queueUrl, messageLaneOrdered: messages.ordered }),
  };
}

async function send(sender: DeliveryReplay, record: ArchiveRecord): Promise<SendOutcome> {
  const outcome = await sender.replay(
    archivedBodyBytes(record),
    `replay-${record.deliveryId}`.slice(0, 64),
    record.proof,
  );
  switch (outcome.outcome) {
    case 'unproven':
      return { outcome: 'refused', reason: outcome.problem };
    case 'stored':
      return { outcome: 'stored' };
    case 'still-invalid':
      return {
        outcome: 'skipped',
        reason: `the receiver would quarantine it (${outcome.reasons.join(', ')})`,
      };
    case 'unrouted':
      return {
        outcome: 'skipped',
        reason: 'none of its events is routed to the subscriber (its fields, numbers and wabas)',
      };
    case 'failed':
      return { outcome: 'failed', problem: outcome.problem };
  }
}

function summaryFields(
  subscriber: SubscriberTarget,
  range: { readonly sinceMs: number; readonly untilMs: number },
  args: ReplayArguments,
) {
  return {
    subscriber: subscriber.name,
    since: new Date(range.sinceMs).toISOString(),
    until: new Date(range.untilMs).toISOString(),
    fields: args.fields,
    rerun: args.rerun,
  };
}

function report(
  context: CommandContext,
  subscriber: SubscriberTarget,
  range: { readonly sinceMs: number; readonly untilMs: number },
  args: ReplayArguments,
  result: ReplayResult,
  cursorPath: string,
  objects: number,
): void {
  const { deliveries, keys, byField } = result.counts;
  const dry = args.dryRun;
  const state = dry
    ? 'dry run, nothing sent or forgotten'
    : result.complete
      ? 'complete'
      : `stopped after --max ${args.maxDeliveries}: run the same command again to continue (cursor ${cursorPath})`;
  const position: ArchivePosition | undefined = result.position;
  context.output.result(
    {
      ...summaryFields(subscriber, range, args),
      dryRun: dry,
      complete: result.complete,
      position,
      archiveObjects: objects,
      ...result.counts,
    },
    [
      `replay to ${subscriber.name} of ${new Date(range.sinceMs).toISOString()} – ${new Date(range.untilMs).toISOString()} (${context.target.description}): ${state}`,
      ...labelled([
        [
          'deliveries',
          `${deliveries.read} read from ${objects} archive object${objects === 1 ? '' : 's'}, ${deliveries.sent} sent${dry ? ` (${deliveries.read - deliveries.quarantined - deliveries.notForSubscriber} would be)` : ''}, ${deliveries.quarantined} quarantined (left to quarantine requeue), ${deliveries.notForSubscriber} with no event for ${subscriber.name}${deliveries.refused === undefined ? '' : `, ${deliveries.refused} refused (no proof the receiver verified them)`}`,
        ],
        [
          'keys',
          `${keys.total}: ${keys.done} done before (${dry ? 'would be ' : ''}skipped by the claims as duplicates), ${keys.inFlight} in flight, ${keys.notDone} not done (${dry ? 'would be ' : ''}effected now)${args.rerun ? `, ${keys.forgotten} done ${dry ? 'would be ' : ''}forgotten by --rerun (effected again)` : ''}`,
        ],
        [
          'fields',
          Object.entries(byField)
            .map(([field, count]) => `${field} ${count}`)
            .join(', ') || 'none',
        ],
        ['limited to', originLimits(subscriber)],
        [
          dry ? 'last read' : 'last sent',
          position === undefined ? undefined : `${position.arrivedAt} (${position.deliveryId})`,
        ],
      ]),
    ],
  );
}
