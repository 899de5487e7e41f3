/**
 * One batch after the claim pre-pass (webhook-consumer.ts): its records' events run in order, their side
 * effects, completions, releases and failures, and, for turns (`onConversationTurn`), their messages handed
 * over together. Holds the batch's tally and the return time of every record that failed.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { conversationCustomer, conversationId } from '../../contract/lanes.ts';
import { ConsumerFieldMetric, ConsumerMetric } from '../../contract/metric-names.ts';
import type { BackoffSettings } from '../../contract/retry-budget.ts';
import { DEFAULT_SETTINGS } from '../../contract/settings.ts';
import { isSmokeTestWamid } from '../../contract/smoke-test.ts';
import type { BatchClaimResult, DuplicateClaim, HeldClaim } from '../claims/claim-store.ts';
import { isHeld } from '../claims/claim-store.ts';
import { ClaimLostError } from '../claims/errors.ts';
import type { ClaimedAs } from '../claims/lease.ts';
import { customerOf } from '../events/customer.ts';
import { groupEventDetails, isGroupField } from '../events/group-item.ts';
import { isJsonObject } from '../events/key-parts.ts';
import type { WebhookEvent } from '../events/types.ts';
import type { StatusObservation } from '../ledger/status-event.ts';
import { MalformedStatusError, observeStatus } from '../ledger/status-event.ts';
import type { DeadLetterReason, QueueRecord, RecordRedelivery } from '../queue/consumer-queue-port.ts';
import { RedeliveryNotScheduledError } from '../queue/errors.ts';
import { completeWithRetry, DEFAULT_COMPLETION_RETRY } from './complete-with-retry.ts';
import type {
  ConsumerQuarantineReason,
  Invocation,
  PreparedRecord,
  TurnOutcome,
  WebhookConsumerOptions,
} from './consumer-ports.ts';
import { RecordFailedError } from './consumer-ports.ts';
import { ConsumerTally } from './consumer-tally.ts';
import {
  type ConversationTurnContext,
  DeadLetter,
  type HandlerMetrics,
  handlerFor,
  handlesTurns,
  type MessageContext,
  type RecordContext,
  RetryLater,
  type WebhookEventContext,
  type WebhookHandler,
} from './handler-api.ts';
import { createHandlerLogger, describeError } from './handler-logger.ts';
import { handlerMetricsOf } from './handler-metrics.ts';
import { inFlightRedeliverySeconds } from './in-flight.ts';
import { loggableKey, loggedEvent } from './loggable-key.ts';
import { backoffDelaySeconds, deferredDelaySeconds, receiveCountOf } from './retry-policy.ts';

/** A fresh message read into a conversation turn, its side effect not yet run. */
interface TurnMessage {
  readonly record: QueueRecord;
  readonly event: WebhookEvent;
  readonly claim: HeldClaim;
}

/**
 * When the receiver took the record's delivery: its `receivedAt` attribute, else its enqueue time (SQS's
 * `SentTimestamp`), else now.
 */
export function receivedAtOf(record: QueueRecord, clock: () => number): string {
  const attribute = record.messageAttributes?.receivedAt?.stringValue;
  if (attribute !== undefined && !Number.isNaN(Date.parse(attribute))) return attribute;
  const sentAt = Number(record.attributes?.SentTimestamp);
  return new Date(Number.isFinite(sentAt) && sentAt > 0 ? sentAt : clock()).toISOString();
}

/** The conversation of an inbound message (docs/design.md §8). */
export function conversationOf(event: WebhookEvent): string {
  const metadata = event.value.metadata as { phone_number_id?: unknown } | undefined;
  const contacts = Array.isArray(event.value.contacts) ? event.value.contacts.filter(isJsonObject) : [];
  const customer = conversationCustomer({
    fromUserId: event.payload.from_user_id,
    from: event.payload.from,
    userIdOfContact: (waId) => contacts.find((contact) => contact.wa_id === waId)?.user_id,
  });
  return conversationId(metadata?.phone_number_id, customer);
}

/** A message or status of `npm run ops -- smoke` (contract/smoke-test.ts): `context.smokeTest`. */
function isSmokeTest(event: WebhookEvent): boolean {
  return (event.kind === 'message' || event.kind === 'status') && isSmokeTestWamid(event.payload.id);
}

/**
 * The events the batch settled without a line of their own, as the invocation's summary line lists them: the
 * digests of their keys by outcome, `handled` (the claim completed) or `recorded` (no handler: recorded as
 * done), then by field. Grouped, a digest costs its 23 bytes, not a key, field and outcome each.
 */
export type QuietOutcomes = Partial<Record<'handled' | 'recorded', Record<string, string[]>>>;

/**
 * The most digests the summary line lists (about 25 KB): a batch of ten 1,000-update deliveries would
 * otherwise write a line near CloudWatch's 256 KB limit for one log event, which Lambda splits. The rest are
 * counted; `LOG_LEVEL=DEBUG` logs each one on its own line.
 */
export const MAX_LISTED_OUTCOMES = 1_000;

/** One batch after the claim pre-pass: records are then processed one call each, in any order. */
export class ConsumerBatch {
  readonly tally: ConsumerTally;
  readonly #handlerMetrics: HandlerMetrics;
  readonly #byRecord = new Map<QueueRecord, PreparedRecord>();
  readonly #byMessageId = new Map<string, PreparedRecord>();
  readonly #invocation: Invocation;
  readonly #options: WebhookConsumerOptions;
  readonly #logger: Logger;
  readonly #clock: () => number;
  readonly #redeliveries = new Map<string, RecordRedelivery>();
  /** Records whose backoff was drawn: once per record, however many of its events failed. */
  readonly #backedOff = new Set<string>();
  readonly #retry: BackoffSettings;
  readonly #random: () => number;
  /** Records that failed in this batch, however (their own failure, held behind another, held for a burst). */
  readonly #failed = new Set<string>();
  /** Records a handler gave up on (`DeadLetter`) on a receive that lets them go to the DLQ now. */
  readonly #givenUp = new Map<string, DeadLetterReason>();
  /** Held claims already completed or released: never released (again) when their record is held behind. */
  readonly #settled = new Set<HeldClaim>();
  /** Records whose wait before the handler was counted: once per record. */
  readonly #waited = new Set<string>();
  readonly #quietOutcomes: QuietOutcomes = {};
  #listedOutcomes = 0;
  #unlistedOutcomes = 0;

  constructor(prepared: readonly PreparedRecord[], invocation: Invocation, options: WebhookConsumerOptions) {
    for (const entry of prepared) {
      this.#byRecord.set(entry.record, entry);
      if (!this.#byMessageId.has(entry.record.messageId))
        this.#byMessageId.set(entry.record.messageId, entry);
    }
    this.#invocation = invocation;
    this.#options = options;
    this.tally = new ConsumerTally(options.numbers ?? []);
    this.#handlerMetrics = handlerMetricsOf(this.tally);
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    this.#retry = options.retry ?? DEFAULT_SETTINGS;
    this.#random = options.random ?? Math.random;
  }

  get records(): number {
    return this.#byRecord.size;
  }

  get failedRecords(): number {
    return this.#failed.size;
  }

  /** Every other outcome (a duplicate, a wait, a failure) has a line of its own. */
  get quietOutcomes(): QuietOutcomes {
    return this.#quietOutcomes;
  }

  /** Quiet outcomes beyond {@link MAX_LISTED_OUTCOMES}, counted only. */
  get unlistedOutcomes(): number {
    return this.#unlistedOutcomes;
  }

  #settledQuietly(
    outcome: keyof QuietOutcomes,
    logged: { readonly key: string; readonly field: string },
  ): void {
    if (this.#listedOutcomes >= MAX_LISTED_OUTCOMES) {
      this.#unlistedOutcomes++;
      return;
    }
    this.#listedOutcomes++;
    const byField = this.#quietOutcomes[outcome] ?? {};
    this.#quietOutcomes[outcome] = byField;
    const keys = byField[logged.field] ?? [];
    byField[logged.field] = keys;
    keys.push(logged.key);
  }

  /** Runs one record's events in order. Resolves when the record is done; throws {@link RecordFailedError}. */
  async processRecord(record: QueueRecord): Promise<void> {
    if (handlesTurns(this.#options.handlers)) {
      const { done } = await this.runTurn([record]);
      if (done === 0) throw new RecordFailedError(record.messageId, ['turn']);
      return;
    }
    const failures = await this.#processRecordEvents(record);
    if (failures.length > 0) this.#fail(record, failures);
  }

  /**
   * Runs the records of one conversation turn in order: each record's events, with the fresh messages of all
   * of them handed to `onConversationTurn` in one call once every record was read (without a turn handler,
   * `records` is one record, run as {@link processRecord} does). A record that fails ends the turn there:
   * the messages read before it still make the turn, the records after it are not run. A turn handler that
   * throws fails every record of the turn, its claims released together.
   *
   * `records[0, done)` are done; `records[done, done + failed)` failed and have their return time; the
   * caller holds the later ones behind them ({@link holdBehind}) or, once the failed ones were moved aside
   * ({@link moveAside}), runs them. Never throws.
   */
  async runTurn(records: readonly QueueRecord[]): Promise<TurnOutcome> {
    if (!handlesTurns(this.#options.handlers)) {
      const [record] = records;
      if (record === undefined) return { done: 0, failed: 0 };
      try {
        await this.processRecord(record);
        return { done: 1, failed: 0 };
      } catch {
        return { done: 0, failed: 1 };
      }
    }
    const turn: TurnMessage[] = [];
    let done = 0;
    let failed = 0;
    for (const record of records) {
      const failures = await this.#processRecordEvents(record, turn);
      if (failures.length > 0) {
        this.#failed.add(record.messageId);
        failed = 1;
        break;
      }
      done++;
    }
    if (turn.length === 0) return { done, failed };
    const turnRecords = records.slice(0, done + failed);
    return (await this.#runTurnHandler(turn, turnRecords))
      ? { done, failed }
      : { done: 0, failed: turnRecords.length };
  }

  /**
   * On an ordered lane, moves those of `failed` (records that just failed together, oldest first) that were on
   * their last receive to the dead-letter queue, so that their conversation does not wait on them any longer:
   * the records behind them were received with them every time, and SQS redrive would soon take those too. A
   * record of the same turn with receives left is not moved: it comes back. Returns the records still failed
   * (none: the conversation goes on now); a moved record is reported as done (the queue deletes it) and
   * counted in `RecordsDeadLettered`.
   */
  async moveAside(failed: readonly QueueRecord[]): Promise<readonly QueueRecord[]> {
    const deadLetters = this.#options.deadLetters;
    if (deadLetters === undefined) return failed;
    const spent = failed.filter(
      (record) =>
        receiveCountOf(record.attributes) >= deadLetters.maxReceives || this.#givenUp.has(record.messageId),
    );
    if (spent.length === 0) return failed;
    try {
      await deadLetters.move(spent, this.#givenUp);
    } catch (error) {
      this.#logger.error('Moving a failed record to the dead-letter queue failed; it stays in its lane', {
        records: spent.length,
        ...describeError(error),
      });
      return failed;
    }
    for (const record of spent) {
      this.#failed.delete(record.messageId);
      this.#redeliveries.delete(record.messageId);
    }
    this.tally.count(ConsumerMetric.RecordsDeadLettered, spent.length);
    this.#logger.warn('Record dead-lettered by the consumer; its conversation moves on', {
      messageIds: spent.map(({ messageId }) => messageId),
      receiveCounts: spent.map(({ attributes }) => receiveCountOf(attributes)),
      reasons: spent.map(({ messageId }) => this.#givenUp.get(messageId)?.reason ?? 'last-receive'),
    });
    return failed.filter((record) => !spent.includes(record));
  }

  /**
   * On an unordered lane, moves `record` to the DLQ when a handler gave up on it (`DeadLetter`) on a receive
   * that allows it. Returns whether it was moved: then it is done for the queue (deleted), else it stays
   * failed and comes back after its backoff.
   */
  async deadLetterIfGivenUp(record: QueueRecord): Promise<boolean> {
    if (!this.#givenUp.has(record.messageId)) return false;
    return (await this.moveAside([record])).length === 0;
  }

  /**
   * Fails `record` unrun because `blocker`, earlier in its conversation, failed: its held claims are released
   * and it comes back no sooner than the blocker (SQS keeps the group's order; returning earlier would only
   * cost a receive). Call after the blocker was run.
   */
  async holdBehind(record: QueueRecord, blocker: QueueRecord): Promise<void> {
    const delaySeconds = this.#redeliveries.get(blocker.messageId)?.delaySeconds;
    if (delaySeconds !== undefined) this.#bringBackAfter(record, delaySeconds);
    if (this.#failed.has(record.messageId)) return;
    this.#failed.add(record.messageId);
    this.tally.count(ConsumerMetric.RecordsHeldBehindFailure);
    const prepared = this.#prepared(record);
    if (prepared === undefined || !prepared.extraction.ok) return;
    for (const [index, claim] of prepared.claims.entries()) {
      const event = prepared.extraction.events[index];
      if (claim !== undefined && event !== undefined && isHeld(claim)) await this.#release(event, claim);
    }
  }

  /**
   * Hands `record` back unclaimed for `delaySeconds`: its conversation's burst window is still open, and it
   * returns with whatever the conversation adds meanwhile. A record never seen by `prepareBatch`.
   */
  holdForBurst(record: QueueRecord, delaySeconds: number): void {
    this.#failed.add(record.messageId);
    this.tally.count(ConsumerMetric.RecordsHeldForBurst);
    this.#bringBackAfter(record, delaySeconds);
  }

  #prepared(record: QueueRecord): PreparedRecord | undefined {
    return this.#byRecord.get(record) ?? this.#byMessageId.get(record.messageId);
  }

  #fail(record: QueueRecord, failures: readonly string[]): never {
    this.#failed.add(record.messageId);
    throw new RecordFailedError(record.messageId, failures);
  }

  async #processRecordEvents(record: QueueRecord, turn?: TurnMessage[]): Promise<string[]> {
    const prepared = this.#prepared(record);
    if (prepared === undefined) return ['not-in-batch'];
    return prepared.extraction.ok
      ? this.#processEvents(prepared, turn)
      : this.#quarantine(prepared.record, prepared.extraction.reason);
  }

  /**
   * Asks the queue to bring the failed records back at their time (backoff, `RetryLater` delay or lease
   * end), in one call. Call once, after every record was processed. Never throws: a record whose visibility
   * could not be changed still comes back, after the queue's visibility timeout (`RedeliveriesNotScheduled`).
   */
  async scheduleRedeliveries(): Promise<void> {
    const redelivery = this.#options.redelivery;
    if (redelivery === undefined || this.#redeliveries.size === 0) return;
    try {
      await redelivery.redeliverAfter([...this.#redeliveries.values()]);
    } catch (error) {
      const records = error instanceof RedeliveryNotScheduledError ? error.failed : this.#redeliveries.size;
      this.tally.count(ConsumerMetric.RedeliveriesNotScheduled, records);
      this.#logger.warn(
        'Could not set when failed records come back; they return after the visibility timeout',
        { records, ...describeError(error) },
      );
    }
  }

  /**
   * Marks `record` for the DLQ when its receive count has reached what the handler's `DeadLetter` asked;
   * returns whether it did. Before that receive it is retried like any failure.
   */
  #giveUpOn(record: QueueRecord, error: DeadLetter): boolean {
    if (receiveCountOf(record.attributes) < error.afterReceives) return false;
    this.#givenUp.set(record.messageId, { reason: error.reason, details: error.details });
    return true;
  }

  /** The record comes back after its backoff, unless one of its events asks for later. */
  #backOff(record: QueueRecord): void {
    if (this.#backedOff.has(record.messageId)) return;
    this.#backedOff.add(record.messageId);
    const receiveCount = receiveCountOf(record.attributes);
    this.#bringBackAfter(record, backoffDelaySeconds(receiveCount, this.#retry, this.#random));
  }

  /** Keeps the longest delay asked for a record: none of its events may come back before its time. */
  #bringBackAfter(record: QueueRecord, delaySeconds: number): void {
    const previous = this.#redeliveries.get(record.messageId)?.delaySeconds ?? 0;
    this.#redeliveries.set(record.messageId, { record, delaySeconds: Math.max(previous, delaySeconds) });
  }

  async #quarantine(record: QueueRecord, reason: ConsumerQuarantineReason): Promise<string[]> {
    try {
      await this.#options.quarantine(record, reason);
      this.tally.count(ConsumerMetric.Quarantined);
      this.#logger.warn('Unusable record quarantined', { messageId: record.messageId, reason });
      return [];
    } catch (error) {
      this.#logger.error('Quarantining a record failed; it will be retried', {
        messageId: record.messageId,
        reason,
        ...describeError(error),
      });
      this.#backOff(record);
      return [`quarantine:${reason}`];
    }
  }

  async #processEvents(prepared: PreparedRecord, turn?: TurnMessage[]): Promise<string[]> {
    const extraction = prepared.extraction;
    if (!extraction.ok) return [];
    for (const skipped of prepared.filteredOut) {
      this.tally.countForField(ConsumerFieldMetric.EventsFilteredOut, skipped.metricField);
    }
    for (const unknown of extraction.unknownFields) {
      this.tally.countForField(ConsumerFieldMetric.UnknownField, unknown.field);
      this.#logger.info('Unknown webhook field acknowledged without side effect', {
        field: unknown.field,
        entryId: unknown.entryId,
      });
    }
    for (const part of extraction.malformed) {
      this.tally.count(ConsumerMetric.MalformedParts);
      this.#logger.warn('Malformed part of a webhook body skipped', { ...part });
    }
    const onRecord = this.#options.handlers.onRecord;
    const failures =
      onRecord === undefined ? [] : await this.#runRecordHandler(prepared, onRecord, extraction.events);
    for (const [index, event] of (onRecord === undefined ? extraction.events : []).entries()) {
      const claim = prepared.claims[index];
      if (claim === undefined) continue;
      if (failures.length > 0 && this.#options.ordered === true) {
        // Nothing of the conversation may run ahead of the event that failed.
        if (isHeld(claim)) await this.#release(event, claim);
        continue;
      }
      if (turn !== undefined && event.kind === 'message' && isHeld(claim)) {
        this.#countClaimed(event, claim.outcome, claim.attempt);
        turn.push({ record: prepared.record, event, claim });
        continue;
      }
      const failure = await this.#processEvent(prepared.record, event, claim);
      if (failure !== undefined) failures.push(failure);
    }
    if (extraction.unkeyed.length > 0) failures.push(...(await this.#quarantineUnkeyed(prepared)));
    return failures;
  }

  /**
   * `onRecord`: every fresh event of the record is first readied as it would be for its own handler (a status
   * after the ledger merged it), then all are handed over in one call; all complete when it returns, all are
   * released when it throws. Readying comes first so that nothing can fail for one of them once the call has
   * taken them: a ledger write failing afterwards would release an event the handler already passed on. On an
   * ordered lane, the events after the first that fails without a handler (in flight under another delivery, a
   * claim or ledger write that failed) are released unrun, as one by one.
   */
  async #runRecordHandler(
    prepared: PreparedRecord,
    onRecord: WebhookHandler<RecordContext>,
    events: readonly WebhookEvent[],
  ): Promise<string[]> {
    const { record } = prepared;
    const failures: string[] = [];
    const ready: { event: WebhookEvent; claim: HeldClaim }[] = [];
    for (const [index, event] of events.entries()) {
      const claim = prepared.claims[index];
      if (claim === undefined) continue;
      if (failures.length > 0 && this.#options.ordered === true) {
        if (isHeld(claim)) await this.#release(event, claim);
        continue;
      }
      if (!isHeld(claim)) {
        const failure = await this.#processEvent(record, event, claim);
        if (failure !== undefined) failures.push(failure);
        continue;
      }
      const readied = await this.#ready(record, event, claim);
      if ('failure' in readied) failures.push(readied.failure);
      // A status without id or status: acknowledged, as its own handler would never see it.
      else if (readied.context === undefined) await this.#complete(event, claim);
      else ready.push({ event, claim });
    }
    const first = ready[0];
    if (first === undefined) return failures;
    const logged = { key: loggableKey(first.event), field: first.event.field, events: ready.length };
    const context: RecordContext = {
      messageId: record.messageId,
      events: ready.map(({ event, claim }) => ({
        event,
        key: event.key,
        field: event.field,
        kind: event.kind,
        claimedAs: claim.outcome,
        smokeTest: isSmokeTest(event),
      })),
      receivedAt: receivedAtOf(record, this.#clock),
      remainingTimeMs: () => this.#invocation.remainingTimeMs(),
      logger: createHandlerLogger(this.#logger, first.event, { events: ready.length }),
      metrics: this.#handlerMetrics,
    };
    this.#observeWait(record, first.event);
    try {
      await onRecord(context);
    } catch (error) {
      const deferred = error instanceof RetryLater;
      for (const { event } of ready) {
        if (deferred) this.tally.countForField(ConsumerFieldMetric.RetriesDeferred, event.metricField);
        else this.tally.countForEvent(ConsumerFieldMetric.HandlerErrors, event);
      }
      const giveUp = error instanceof DeadLetter ? this.#giveUpOn(record, error) : undefined;
      this.#logger[deferred ? 'info' : giveUp === undefined ? 'error' : 'warn'](
        "Record handler failed; its events' claims are released",
        {
          ...logged,
          ...(giveUp === undefined
            ? describeError(error)
            : { reason: (error as DeadLetter).reason, deadLetterNow: giveUp }),
        },
      );
      await Promise.all(ready.map(({ event, claim }) => this.#release(event, claim)));
      if (deferred) this.#bringBackAfter(record, deferredDelaySeconds(error.afterSeconds, this.#retry));
      else this.#backOff(record);
      failures.push(`${deferred ? 'retry-later' : 'handler'}:${logged.key}`);
      return failures;
    }
    await Promise.all(ready.map(({ event, claim }) => this.#complete(event, claim)));
    return failures;
  }

  /**
   * A message or status without a usable id has no key: it is never run, and never deduplicated against
   * another one. Its record's body is kept in the quarantine queue, once its keyed events had their turn, so
   * that an operator can see what Meta sent. Should the record come back (an event of it failed), the body is
   * quarantined again: a copy too many, never one too few.
   */
  async #quarantineUnkeyed(prepared: PreparedRecord): Promise<string[]> {
    if (!prepared.extraction.ok) return [];
    for (const unkeyed of prepared.extraction.unkeyed) {
      this.#logger.warn('Event without identity kept in quarantine, not run', {
        messageId: prepared.record.messageId,
        entryId: unkeyed.entryId,
        field: unkeyed.metricField,
        problem: unkeyed.problem,
      });
    }
    return this.#quarantine(prepared.record, 'event-without-id');
  }

  async #processEvent(
    record: QueueRecord,
    event: WebhookEvent,
    claim: BatchClaimResult,
  ): Promise<string | undefined> {
    if (isHeld(claim)) return this.#runSideEffect(record, event, claim);
    const logged = loggedEvent(event);
    switch (claim.outcome) {
      case 'recorded':
        this.#countClaimed(event, claim.claimedAs);
        this.#settledQuietly('recorded', logged);
        this.#logger.debug('Event without handler recorded as done', {
          ...logged,
          claimedAs: claim.claimedAs,
        });
        return undefined;
      case 'duplicate-done':
      case 'repeat':
        this.tally.countForEvent(ConsumerFieldMetric.EventsDuplicate, event);
        this.#logger.info('Duplicate event skipped', { ...logged, outcome: claim.outcome });
        return undefined;
      case 'duplicate-in-flight':
        this.tally.countForField(ConsumerFieldMetric.EventsDuplicateInFlight, event.metricField);
        return this.#inFlight(record, claim, logged);
      default:
        this.tally.count(ConsumerMetric.ClaimFailures);
        this.#logger.warn('Claim failed; the record will be retried', {
          ...logged,
          ...describeError(claim.outcome === 'failed' ? claim.error : undefined),
        });
        this.#backOff(record);
        return `claim:${logged.key}`;
    }
  }

  #inFlight(record: QueueRecord, claim: DuplicateClaim, logged: Record<string, string>): string {
    const redeliverInSeconds = inFlightRedeliverySeconds(claim.existing, this.#clock());
    this.#logger.info('Event in flight under another delivery; the record waits for the lease', {
      ...logged,
      messageId: record.messageId,
      redeliverInSeconds,
    });
    if (redeliverInSeconds !== undefined) this.#bringBackAfter(record, redeliverInSeconds);
    return `in-flight:${logged.key}`;
  }

  #countClaimed(event: WebhookEvent, claimedAs: ClaimedAs, attempt?: number): void {
    this.tally.countForEvent(ConsumerFieldMetric.EventsFresh, event);
    if (claimedAs !== 'takeover') return;
    this.tally.countForField(ConsumerFieldMetric.LeaseTakeovers, event.metricField);
    this.#logger.warn('Lease taken over from a worker that did not complete', {
      ...loggedEvent(event),
      attempt,
    });
  }

  async #runSideEffect(
    record: QueueRecord,
    event: WebhookEvent,
    claim: HeldClaim,
  ): Promise<string | undefined> {
    const logged = loggedEvent(event);
    const readied = await this.#ready(record, event, claim);
    if ('failure' in readied) return readied.failure;
    const { context } = readied;

    const handler = handlerFor(this.#options.handlers, event);
    if (handler !== undefined && context !== undefined) {
      this.#observeWait(record, event);
      try {
        await handler(context);
      } catch (error) {
        if (error instanceof RetryLater) {
          const delaySeconds = deferredDelaySeconds(error.afterSeconds, this.#retry);
          this.tally.countForField(ConsumerFieldMetric.RetriesDeferred, event.metricField);
          this.#logger.info('Handler deferred the event; the claim is released', {
            ...logged,
            retryInSeconds: delaySeconds,
            reason: error.reason,
          });
          await this.#release(event, claim);
          this.#bringBackAfter(record, delaySeconds);
          return `retry-later:${logged.key}`;
        }
        this.tally.countForEvent(ConsumerFieldMetric.HandlerErrors, event);
        if (error instanceof DeadLetter) {
          const now = this.#giveUpOn(record, error);
          this.#logger.warn('Handler gave up on the event; the claim is released', {
            ...logged,
            reason: error.reason,
            deadLetterNow: now,
          });
        } else {
          this.#logger.error('Handler failed; the claim is released', { ...logged, ...describeError(error) });
        }
        await this.#release(event, claim);
        this.#backOff(record);
        return `handler:${logged.key}`;
      }
    }

    await this.#complete(event, claim);
    return undefined;
  }

  /**
   * Counts a held claim and builds its handler's context, a status merged into the ledger first. A ledger write
   * that fails releases the claim and backs the record off; what failed is returned instead.
   */
  async #ready(
    record: QueueRecord,
    event: WebhookEvent,
    claim: HeldClaim,
  ): Promise<{ readonly context: WebhookEventContext | undefined } | { readonly failure: string }> {
    this.#countClaimed(event, claim.outcome, claim.attempt);
    try {
      return { context: await this.#contextFor(record, event, claim) };
    } catch (error) {
      const logged = loggedEvent(event);
      this.#logger.error('Status ledger write failed; the claim is released', {
        ...logged,
        ...describeError(error),
      });
      await this.#release(event, claim);
      this.#backOff(record);
      return { failure: `ledger:${logged.key}` };
    }
  }

  /**
   * Marks the claim done after its side effect ran. Never throws: running the effect again could only double
   * it. Failing the record would have SQS redeliver it after the visibility timeout, when the lease has
   * lapsed, and the redelivery would take the claim over and run the effect a second time.
   */
  async #complete(event: WebhookEvent, claim: HeldClaim): Promise<void> {
    const logged = loggedEvent(event);
    this.#settled.add(claim);
    try {
      await completeWithRetry(this.#options.claims, claim, {
        remainingTimeMs: () => this.#invocation.remainingTimeMs(),
        policy: this.#options.completionRetry ?? DEFAULT_COMPLETION_RETRY,
        sleep: this.#options.sleep,
      });
      this.#settledQuietly('handled', logged);
      this.#logger.debug('Event handled', { ...logged, outcome: claim.outcome });
    } catch (error) {
      this.tally.count(ConsumerMetric.CompletionFailures);
      this.#logger.error('Completing the claim failed after the side effect ran', {
        ...logged,
        claimLost: error instanceof ClaimLostError,
        ...describeError(error),
      });
    }
  }

  /** The record's wait from its enqueue to its first handler call, once per record (`EventWaitTime`). */
  #observeWait(record: QueueRecord, event: WebhookEvent): void {
    if (this.#waited.has(record.messageId)) return;
    this.#waited.add(record.messageId);
    const sentAt = Number(record.attributes?.SentTimestamp);
    if (Number.isFinite(sentAt) && sentAt > 0) {
      this.tally.observeWait(Math.max(0, this.#clock() - sentAt), event.phoneNumberId);
    }
  }

  /**
   * Calls `onConversationTurn` once with every message of `turn`, then completes all their claims; when it
   * throws, releases them all and brings every record of the turn back (after the `RetryLater` delay, or its
   * backoff). Returns whether the turn was handled.
   */
  async #runTurnHandler(turn: readonly TurnMessage[], records: readonly QueueRecord[]): Promise<boolean> {
    const handler = this.#options.handlers.onConversationTurn;
    const first = turn[0] as TurnMessage;
    const logged = { key: loggableKey(first.event), field: first.event.field, messages: turn.length };
    const context: ConversationTurnContext = {
      conversationId: conversationOf(first.event),
      messages: turn.map(({ record, event, claim }) => this.#messageContext(record, event, claim)),
      remainingTimeMs: () => this.#invocation.remainingTimeMs(),
      logger: createHandlerLogger(this.#logger, first.event, { messages: turn.length }),
      metrics: this.#handlerMetrics,
    };
    for (const { record, event } of turn) this.#observeWait(record, event);
    try {
      await handler?.(context);
    } catch (error) {
      const deferred = error instanceof RetryLater;
      for (const { event } of turn) {
        this.tally.countForField(
          deferred ? ConsumerFieldMetric.RetriesDeferred : ConsumerFieldMetric.HandlerErrors,
          event.metricField,
        );
      }
      this.#logger[deferred ? 'info' : 'error']('Conversation turn failed; its claims are released', {
        ...logged,
        ...describeError(error),
      });
      if (error instanceof DeadLetter) for (const record of records) this.#giveUpOn(record, error);
      await Promise.all(turn.map(({ event, claim }) => this.#release(event, claim)));
      for (const record of records) {
        this.#failed.add(record.messageId);
        if (deferred) this.#bringBackAfter(record, deferredDelaySeconds(error.afterSeconds, this.#retry));
        else this.#backOff(record);
      }
      return false;
    }
    this.tally.count(ConsumerMetric.ConversationTurns);
    await Promise.all(turn.map(({ event, claim }) => this.#complete(event, claim)));
    return true;
  }

  #messageContext(record: QueueRecord, event: WebhookEvent, claim: HeldClaim): MessageContext {
    return { ...this.#baseContext(record, event, claim), kind: 'message' };
  }

  /** What every handler's context holds, whatever the event's kind. */
  #baseContext(record: QueueRecord, event: WebhookEvent, claim: HeldClaim) {
    return {
      receivedAt: receivedAtOf(record, this.#clock),
      event,
      key: event.key,
      field: event.field,
      payload: event.payload,
      value: event.value,
      customer: customerOf(event),
      claimedAs: claim.outcome,
      smokeTest: isSmokeTest(event),
      remainingTimeMs: () => this.#invocation.remainingTimeMs(),
      logger: createHandlerLogger(this.#logger, event),
      metrics: this.#handlerMetrics,
    };
  }

  /**
   * The handler's context; for a status, after the ledger merged it; for a Groups API item, with its group and
   * customers (whether `onGroupEvent` or `onManagementEvent` gets it). Undefined: acknowledge only.
   */
  async #contextFor(
    record: QueueRecord,
    event: WebhookEvent,
    claim: HeldClaim,
  ): Promise<WebhookEventContext | undefined> {
    const base = this.#baseContext(record, event, claim);
    switch (event.kind) {
      case 'message':
      case 'error':
        return { ...base, kind: event.kind };
      case 'management':
        return isGroupField(event.field)
          ? { ...base, kind: 'management', ...groupEventDetails(event.payload) }
          : { ...base, kind: 'management' };
      case 'status':
        break;
    }
    let observation: StatusObservation;
    try {
      observation = observeStatus(event, Math.floor(this.#clock() / 1000));
    } catch (error) {
      if (!(error instanceof MalformedStatusError)) throw error;
      this.#logger.warn('Status without id or status acknowledged without side effect', {
        key: loggableKey(event),
        field: event.field,
      });
      return undefined;
    }
    const update = await this.#options.ledger.record(observation);
    if (update.change === 'merged') this.tally.count(ConsumerMetric.StatusRegressionsMerged);
    return { ...base, kind: 'status', ledger: update.view, ledgerChange: update.change };
  }

  async #release(event: WebhookEvent, claim: HeldClaim): Promise<void> {
    if (this.#settled.has(claim)) return;
    this.#settled.add(claim);
    try {
      if (await this.#options.claims.release(claim)) {
        this.tally.countForField(ConsumerFieldMetric.ClaimReleases, event.metricField);
      } else {
        this.#logger.warn('Claim not released: another worker owns it now', {
          key: loggableKey(event),
          field: event.field,
        });
      }
    } catch (error) {
      // The lease still lapses: the redelivered record takes the claim over then.
      this.#logger.error('Releasing the claim failed', {
        key: loggableKey(event),
        field: event.field,
        ...describeError(error),
      });
    }
  }
}
