/**
 * `onRecord` (handler-api.ts) on the consumer's per-event path: once a batch is claimed, a record handler is
 * expanded, for that batch, into one handler per event kind, each of which runs the handler of its record
 * once, over the record's fresh events, and shares its outcome. The per-event path then does for each event
 * what it does for any handler (counts, completion on success, release and the record's return on a throw,
 * `RetryLater` and `DeadLetter` alike), so that every fresh event of the record is completed, or released,
 * with the others.
 *
 * The record's handler runs at the first of its events whose handler is called: the events before it never
 * reached a handler (a status whose ledger write failed, a status without id), as they would not one by one.
 * On an ordered lane the fresh events stop before the first event that fails without a handler (in flight
 * under another delivery, a claim that failed): the consumer holds back what follows it, so it must not be
 * sent ahead of it.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { isSmokeTestWamid } from '../../contract/smoke-test.ts';
import { isHeld } from '../claims/claim-store.ts';
import type { WebhookEvent } from '../events/types.ts';
import type { PreparedRecord } from './consumer-ports.ts';
import {
  handlesRecords,
  type RecordContext,
  type RecordEvent,
  type WebhookEventContext,
  type WebhookHandler,
  type WebhookHandlers,
} from './handler-api.ts';
import { createHandlerLogger } from './handler-logger.ts';

interface RecordRun {
  readonly messageId: string;
  readonly events: readonly RecordEvent[];
  /** The record handler's call, once started: every event of the record awaits the same one. */
  outcome?: Promise<void>;
}

/**
 * The handlers the consumer runs `prepared` with: `handlers` as they are without `onRecord`; with it, one
 * handler per event kind that runs `onRecord` once per record (see the module's comment).
 */
export function handlersForBatch(
  handlers: WebhookHandlers,
  prepared: readonly PreparedRecord[],
  options: { readonly logger: Logger; readonly ordered: boolean },
): WebhookHandlers {
  const onRecord = handlers.onRecord;
  if (!handlesRecords(handlers) || onRecord === undefined) return handlers;
  const runs = new Map<WebhookEvent, RecordRun>();
  for (const entry of prepared) {
    const events = freshEvents(entry, options.ordered);
    const run: RecordRun = { messageId: entry.record.messageId, events };
    for (const { event } of events) runs.set(event, run);
  }
  const runRecord = (run: RecordRun, context: WebhookEventContext): Promise<void> => {
    const start = run.events.findIndex(({ event }) => event === context.event);
    const events = run.events.slice(Math.max(0, start));
    const first = events[0]?.event ?? context.event;
    const recordContext: RecordContext = {
      messageId: run.messageId,
      events,
      receivedAt: context.receivedAt,
      remainingTimeMs: () => context.remainingTimeMs(),
      logger: createHandlerLogger(options.logger, first, { events: events.length }),
    };
    return Promise.resolve().then(() => onRecord(recordContext));
  };
  const forEvent: WebhookHandler<WebhookEventContext> = (context) => {
    const run = runs.get(context.event) ?? {
      // Not foreseen (no claim of its own in the batch's results): a record of one event.
      messageId: '-',
      events: [recordEvent(context.event, context.claimedAs)],
    };
    run.outcome ??= runRecord(run, context);
    return run.outcome;
  };
  return {
    onMessage: forEvent,
    onStatus: forEvent,
    onError: forEvent,
    onManagementEvent: forEvent,
    onGroupEvent: forEvent,
  };
}

/** The record's events whose claims this run holds, in body order; on an ordered lane, up to the first blocked one. */
function freshEvents(entry: PreparedRecord, ordered: boolean): RecordEvent[] {
  if (!entry.extraction.ok) return [];
  const events: RecordEvent[] = [];
  for (const [index, event] of entry.extraction.events.entries()) {
    const claim = entry.claims[index];
    if (claim === undefined) continue;
    if (isHeld(claim)) {
      events.push(recordEvent(event, claim.outcome));
      continue;
    }
    if (ordered && (claim.outcome === 'duplicate-in-flight' || claim.outcome === 'failed')) break;
  }
  return events;
}

function recordEvent(event: WebhookEvent, claimedAs: RecordEvent['claimedAs']): RecordEvent {
  return {
    event,
    key: event.key,
    field: event.field,
    kind: event.kind,
    claimedAs,
    smokeTest: (event.kind === 'message' || event.kind === 'status') && isSmokeTestWamid(event.payload.id),
  };
}
