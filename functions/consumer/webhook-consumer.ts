/**
 * The consumer's domain: from queued webhook bodies to exactly-once side effects. Plain TypeScript over
 * ports (claim store, status ledger, quarantine, handlers, logger); no Lambda or SQS types.
 *
 * Per batch: parse every record, set aside the events of fields this subscriber does not want (no claim,
 * field-selection.ts), then claim every event of the batch in one `claimMany` (a key repeated anywhere in the
 * batch is claimed once), then, per record, its events in order:
 *
 *   fresh | takeover | reclaimed   → [status: ledger] → handler → complete (retried)
 *   duplicate-done | repeat        → skip, EventsDuplicate
 *   duplicate-in-flight            → skip, EventsDuplicateInFlight, when another queue message holds the claim
 *                                    (its own message carries any retry); when THIS message holds it (SQS
 *                                    delivered it twice), the record fails and comes back when the lease ends
 *   failed (claim request failed)  → the record fails and SQS redelivers it
 *
 * A record fails (and only that record) when one of its events could not be claimed or is in flight under
 * this same message, its handler or ledger write threw (the claim is then released), or it could not be
 * quarantined. It then comes back after a backoff that grows with its receive count (retry-policy.ts), after
 * the delay its handler asked for with `RetryLater`, or, held back for a lease, when the lease ends: the
 * longest of these when several apply.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { StatusLedgerMode } from '../../contract/environment.ts';
import { ConsumerFieldMetric, ConsumerMetric } from '../../contract/metric-names.ts';
import type { BackoffSettings } from '../../contract/retry-budget.ts';
import { DEFAULT_SETTINGS } from '../../contract/settings.ts';
import type {
  BatchClaimResult,
  ClaimRequest,
  ClaimStore,
  DuplicateClaim,
  HeldClaim,
} from '../claims/claim-store.ts';
import { isHeld } from '../claims/claim-store.ts';
import { ClaimLostError, toClaimStoreError } from '../claims/errors.ts';
import { type ClaimedAs, deadlineFromRemainingTime } from '../claims/lease.ts';
import { extractEvents } from '../events/extract-events.ts';
import type { BodyRejection, EventExtraction, WebhookEvent } from '../events/types.ts';
import type { StatusObservation } from '../ledger/status-event.ts';
import { MalformedStatusError, observeStatus } from '../ledger/status-event.ts';
import type { StatusLedgerUpdate } from '../ledger/status-ledger.ts';
import { RedeliveryNotScheduledError } from '../queue/errors.ts';
import {
  type CompletionRetryPolicy,
  completeWithRetry,
  DEFAULT_COMPLETION_RETRY,
} from './complete-with-retry.ts';
import { ConsumerTally } from './consumer-tally.ts';
import { type FilteredOut, selectFields } from './field-selection.ts';
import { handlerFor, RetryLater, type WebhookEventContext, type WebhookHandlers } from './handler-api.ts';
import { createHandlerLogger, describeError } from './handler-logger.ts';
import { decideInFlight } from './in-flight.ts';
import { loggableKey } from './loggable-key.ts';
import { backoffDelaySeconds, deferredDelaySeconds, receiveCountOf } from './retry-policy.ts';

/** One queued message: an SQS record fits as is. */
export interface QueueRecord {
  readonly messageId: string;
  readonly body: string;
  /** Needed to bring a failed record back at a chosen time; without it the queue's visibility timeout rules. */
  readonly receiptHandle?: string;
  /** `ApproximateReceiveCount` sets the backoff of a failed record; absent, it counts as a first receive. */
  readonly attributes?: { readonly ApproximateReceiveCount?: string };
}

export interface Invocation {
  /** Lambda's `context.getRemainingTimeInMillis()`. */
  remainingTimeMs(): number;
}

/** Sends an unusable record to the dead-letter queue with a reason; throws when it could not. */
export type QuarantineBody = (record: QueueRecord, reason: BodyRejection) => Promise<void>;

export interface StatusRecorder {
  record(observation: StatusObservation): Promise<StatusLedgerUpdate>;
}

export type ConsumerClaims = Pick<ClaimStore, 'claimMany' | 'complete' | 'release'>;

/** A failed record and when it should become visible again, in seconds from now. */
export interface RecordRedelivery {
  readonly record: QueueRecord;
  readonly delaySeconds: number;
}

/** Sets when failed records come back (SQS: their visibility timeout). Throws when it could not. */
export interface RedeliveryScheduler {
  redeliverAfter(redeliveries: readonly RecordRedelivery[]): Promise<void>;
}

export interface WebhookConsumerOptions {
  readonly claims: ConsumerClaims;
  readonly ledger: StatusRecorder;
  readonly quarantine: QuarantineBody;
  readonly handlers: WebhookHandlers;
  readonly logger: Logger;
  /**
   * `with-handler`: statuses are recorded in the ledger only when an `onStatus` handler exists; `always`:
   * for every status (for the ledger view alone), which makes each status an event with a side effect.
   * @default 'with-handler'
   */
  readonly statusLedger?: StatusLedgerMode;
  /**
   * False: events whose kind has no handler are not claimed at all (0 writes), and so their duplicates are not
   * counted either. @default true (1 write each: the duplicate rate per field is the early warning of slow
   * acknowledgements)
   */
  readonly claimUnhandledEvents?: boolean;
  /**
   * The webhook fields this subscriber handles: events of other fields are skipped before the claim pass
   * (no DynamoDB request) and counted as `EventsFilteredOut`. @default every field
   */
  readonly fields?: readonly string[] | undefined;
  /** Without it, a failed record returns after the queue's visibility timeout. */
  readonly redelivery?: RedeliveryScheduler;
  /** Backoff of failed records and cap of `RetryLater` delays. @default the delays of DEFAULT_SETTINGS */
  readonly retry?: BackoffSettings;
  /** Draws the backoff's jitter, in [0, 1). @default Math.random */
  readonly random?: () => number;
  readonly completionRetry?: CompletionRetryPolicy;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
  /** Waits between completion retries. @default setTimeout from node:timers/promises */
  readonly sleep?: (ms: number) => Promise<unknown>;
}

/** Why a record must be redelivered; carries keys and error names only. */
export class RecordFailedError extends Error {
  readonly messageId: string;
  readonly failures: readonly string[];
  constructor(messageId: string, failures: readonly string[]) {
    super(`Record ${messageId} failed: ${failures.join(', ')}`);
    this.name = 'RecordFailedError';
    this.messageId = messageId;
    this.failures = failures;
  }
}

interface PreparedRecord {
  readonly record: QueueRecord;
  readonly extraction: EventExtraction;
  /**
   * Claim results of this record's events, in event order (empty when the body was unusable); undefined for
   * an event left unclaimed (no handler, and `claimUnhandledEvents` off).
   */
  readonly claims: readonly (BatchClaimResult | undefined)[];
  /** Events of fields this subscriber does not want: never claimed, only counted. */
  readonly filteredOut: readonly FilteredOut[];
}

export class WebhookConsumer {
  readonly #options: WebhookConsumerOptions;
  readonly #clock: () => number;

  constructor(options: WebhookConsumerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** Parses every record and claims every event of the batch at once. Never throws for a record. */
  async prepareBatch(records: readonly QueueRecord[], invocation: Invocation): Promise<ConsumerBatch> {
    const selections = records.map((record) =>
      selectFields(extractEvents(record.body), this.#options.fields),
    );
    const extractions = selections.map((selection) => selection.extraction);
    const plans = extractions.map((extraction, index) =>
      extraction.ok
        ? extraction.events.map((event) =>
            this.#claimRequest(event, (records[index] as QueueRecord).messageId),
          )
        : [],
    );
    const claimed = await this.#claimAll(
      plans.flat().filter((request) => request !== undefined),
      invocation,
    );
    const results = claimed.map((result) => judgedForItsOwnRecord(result, claimed));
    let next = 0;
    const prepared = records.map(
      (record, index): PreparedRecord => ({
        record,
        extraction: extractions[index] as EventExtraction,
        claims: (plans[index] ?? []).map((request) => (request === undefined ? undefined : results[next++])),
        filteredOut: selections[index]?.filteredOut ?? [],
      }),
    );
    return new ConsumerBatch(prepared, invocation, this.#options);
  }

  /** What to claim for an event: with a lease when it has a side effect, as done when not, or nothing. */
  #claimRequest(event: WebhookEvent, messageId: string): ClaimRequest | undefined {
    const sideEffect =
      handlerFor(this.#options.handlers, event.kind) !== undefined ||
      (event.kind === 'status' && this.#options.statusLedger === 'always');
    if (!sideEffect && this.#options.claimUnhandledEvents === false) return undefined;
    return { key: event.key, field: event.field, messageId, sideEffect };
  }

  async #claimAll(events: readonly ClaimRequest[], invocation: Invocation): Promise<BatchClaimResult[]> {
    if (events.length === 0) return [];
    const deadlineMs = deadlineFromRemainingTime(this.#clock(), invocation.remainingTimeMs());
    try {
      return await this.#options.claims.claimMany(events, { deadlineMs });
    } catch (error) {
      // claimMany reports per-event failures itself; this is a failure of the call as a whole.
      this.#options.logger.error('Claiming the batch failed', {
        events: events.length,
        ...describeError(error),
      });
      return events.map((event) => ({
        key: event.key,
        pk: event.key,
        field: event.field,
        outcome: 'failed' as const,
        error: toClaimStoreError('claim', event.key, error),
      }));
    }
  }
}

/**
 * A key repeated across records of the batch is claimed once; its repeats share the first occurrence's fate,
 * except where that fate depends on which record holds the claim. Found in flight, or not claimed at all (the
 * request failed: its put may still have landed), the repeat's record may be the very message that holds the
 * claim, and acknowledging it could delete the only message able to retry the event. So such a repeat takes
 * the first occurrence's result and is judged for its own record, like any other duplicate in flight.
 */
function judgedForItsOwnRecord(
  result: BatchClaimResult,
  claimed: readonly BatchClaimResult[],
): BatchClaimResult {
  if (result.outcome !== 'repeat') return result;
  const first = claimed[result.firstIndex];
  if (first?.outcome !== 'duplicate-in-flight' && first?.outcome !== 'failed') return result;
  return { ...first, key: result.key, pk: result.pk };
}

/** One batch after the claim pre-pass: records are then processed one call each, in any order. */
export class ConsumerBatch {
  readonly tally = new ConsumerTally();
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
  #failedRecords = 0;

  constructor(prepared: readonly PreparedRecord[], invocation: Invocation, options: WebhookConsumerOptions) {
    for (const entry of prepared) {
      this.#byRecord.set(entry.record, entry);
      if (!this.#byMessageId.has(entry.record.messageId))
        this.#byMessageId.set(entry.record.messageId, entry);
    }
    this.#invocation = invocation;
    this.#options = options;
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    this.#retry = options.retry ?? DEFAULT_SETTINGS;
    this.#random = options.random ?? Math.random;
  }

  get records(): number {
    return this.#byRecord.size;
  }

  get failedRecords(): number {
    return this.#failedRecords;
  }

  /** Runs one record's events in order. Resolves when the record is done; throws {@link RecordFailedError}. */
  async processRecord(record: QueueRecord): Promise<void> {
    const prepared = this.#byRecord.get(record) ?? this.#byMessageId.get(record.messageId);
    if (prepared === undefined) throw new RecordFailedError(record.messageId, ['not-in-batch']);
    const failures = prepared.extraction.ok
      ? await this.#processEvents(prepared)
      : await this.#quarantine(prepared.record, prepared.extraction.reason);
    if (failures.length > 0) {
      this.#failedRecords++;
      throw new RecordFailedError(record.messageId, failures);
    }
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

  async #quarantine(record: QueueRecord, reason: BodyRejection): Promise<string[]> {
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

  async #processEvents(prepared: PreparedRecord): Promise<string[]> {
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
    const failures: string[] = [];
    for (const [index, event] of extraction.events.entries()) {
      const claim = prepared.claims[index];
      if (claim === undefined) continue;
      const failure = await this.#processEvent(prepared.record, event, claim);
      if (failure !== undefined) failures.push(failure);
    }
    return failures;
  }

  async #processEvent(
    record: QueueRecord,
    event: WebhookEvent,
    claim: BatchClaimResult,
  ): Promise<string | undefined> {
    const logged = { key: loggableKey(event), field: event.field, kind: event.kind };
    if (isHeld(claim)) return this.#runSideEffect(record, event, claim);
    switch (claim.outcome) {
      case 'recorded':
        this.#countClaimed(event, claim.claimedAs);
        this.#logger.debug('Event without handler recorded as done', {
          ...logged,
          claimedAs: claim.claimedAs,
        });
        return undefined;
      case 'duplicate-done':
      case 'repeat':
        this.tally.countForField(ConsumerFieldMetric.EventsDuplicate, event.metricField);
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

  #inFlight(record: QueueRecord, claim: DuplicateClaim, logged: Record<string, string>): string | undefined {
    const decision = decideInFlight(claim.existing, record.messageId, this.#clock());
    if (decision.acknowledge) {
      this.#logger.info('Duplicate event skipped', { ...logged, outcome: claim.outcome });
      return undefined;
    }
    this.#logger.info('Event in flight under this same queue message; the record waits for the lease', {
      ...logged,
      messageId: record.messageId,
      redeliverInSeconds: decision.redeliverInSeconds,
    });
    if (decision.redeliverInSeconds !== undefined) this.#bringBackAfter(record, decision.redeliverInSeconds);
    return `in-flight:${logged.key}`;
  }

  #countClaimed(event: WebhookEvent, claimedAs: ClaimedAs, attempt?: number): void {
    this.tally.countForField(ConsumerFieldMetric.EventsFresh, event.metricField);
    if (claimedAs !== 'takeover') return;
    this.tally.countForField(ConsumerFieldMetric.LeaseTakeovers, event.metricField);
    this.#logger.warn('Lease taken over from a worker that did not complete', {
      key: loggableKey(event),
      field: event.field,
      kind: event.kind,
      attempt,
    });
  }

  async #runSideEffect(
    record: QueueRecord,
    event: WebhookEvent,
    claim: HeldClaim,
  ): Promise<string | undefined> {
    const logged = { key: loggableKey(event), field: event.field, kind: event.kind };
    this.#countClaimed(event, claim.outcome, claim.attempt);

    let context: WebhookEventContext | undefined;
    try {
      context = await this.#contextFor(event, claim);
    } catch (error) {
      this.#logger.error('Status ledger write failed; the claim is released', {
        ...logged,
        ...describeError(error),
      });
      await this.#release(event, claim);
      this.#backOff(record);
      return `ledger:${logged.key}`;
    }

    const handler = handlerFor(this.#options.handlers, event.kind);
    if (handler !== undefined && context !== undefined) {
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
        this.tally.countForField(ConsumerFieldMetric.HandlerErrors, event.metricField);
        this.#logger.error('Handler failed; the claim is released', { ...logged, ...describeError(error) });
        await this.#release(event, claim);
        this.#backOff(record);
        return `handler:${logged.key}`;
      }
    }

    try {
      await completeWithRetry(this.#options.claims, claim, {
        remainingTimeMs: () => this.#invocation.remainingTimeMs(),
        policy: this.#options.completionRetry ?? DEFAULT_COMPLETION_RETRY,
        ...(this.#options.sleep === undefined ? {} : { sleep: this.#options.sleep }),
      });
      this.#logger.debug('Event handled', { ...logged, outcome: claim.outcome });
    } catch (error) {
      // The side effect ran; running it again here could only double it. The record succeeds: failing it
      // would have SQS redeliver it after the visibility timeout, when the lease has lapsed, and the
      // redelivery would take the claim over and run the effect a second time.
      this.tally.count(ConsumerMetric.CompletionFailures);
      this.#logger.error('Completing the claim failed after the side effect ran', {
        ...logged,
        claimLost: error instanceof ClaimLostError,
        ...describeError(error),
      });
    }
    return undefined;
  }

  /** The handler's context; for a status, after the ledger merged it. Undefined: acknowledge only. */
  async #contextFor(event: WebhookEvent, claim: HeldClaim): Promise<WebhookEventContext | undefined> {
    const base = {
      event,
      key: event.key,
      field: event.field,
      payload: event.payload,
      value: event.value,
      claimedAs: claim.outcome,
      remainingTimeMs: () => this.#invocation.remainingTimeMs(),
      logger: createHandlerLogger(this.#logger, event),
    };
    if (event.kind !== 'status') return { ...base, kind: event.kind };
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
