/**
 * What the consumer's domain (webhook-consumer.ts, consumer-batch.ts) is given and hands out: the invocation and
 * the ports it drives (claims, ledger, quarantine; its queue's redelivery and dead letters are the queue's own
 * ports, ../queue/consumer-queue-port.ts), with the options of one consumer. Types only, and the error a failed
 * record is reported with.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { BackoffSettings } from '../../contract/retry-budget.ts';
import type { StatusLedgerMode } from '../../contract/status-ledger-mode.ts';
import type { BatchClaimResult, ClaimStore } from '../claims/claim-store.ts';
import type { BodyRejection, EventExtraction } from '../events/types.ts';
import type { StatusObservation } from '../ledger/status-event.ts';
import type { StatusLedgerUpdate } from '../ledger/status-ledger.ts';
import type { DeadLetterPort, QueueRecord, RedeliveryScheduler } from '../queue/consumer-queue-port.ts';
import type { CompletionRetryPolicy } from './complete-with-retry.ts';
import type { FilteredOut } from './event-selection.ts';
import type { WebhookHandlers } from './handler-api.ts';

export interface Invocation {
  /** Lambda's `context.getRemainingTimeInMillis()`. */
  remainingTimeMs(): number;
}

/**
 * Why the consumer quarantines a record: its body is unusable, or it holds a message or status without a
 * usable `id` (its other events still run).
 */
export type ConsumerQuarantineReason = BodyRejection | 'event-without-id';

/** Puts a record's body in the pipeline's quarantine queue with a reason; throws when it could not. */
export type QuarantineBody = (record: QueueRecord, reason: ConsumerQuarantineReason) => Promise<void>;

export interface StatusRecorder {
  record(observation: StatusObservation): Promise<StatusLedgerUpdate>;
}

export type ConsumerClaims = Pick<ClaimStore, 'claimMany' | 'complete' | 'release'>;

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
  /**
   * The phone number ids and WABA ids this subscriber handles (contract/event-origin.ts, `wantsOrigin`):
   * events of others are skipped and counted as `fields` are. @default every number and account
   */
  readonly numbers?: readonly string[] | undefined;
  readonly wabas?: readonly string[] | undefined;
  /** Without it, a failed record returns after the queue's visibility timeout. */
  readonly redelivery?: RedeliveryScheduler;
  /**
   * The records come from an ordered lane (docs/design.md §8): a record's events stop at the first that
   * fails, the later ones released unrun, so that nothing of a conversation runs ahead of what failed.
   * @default false
   */
  readonly ordered?: boolean;
  /** An ordered lane moves a record that fails on its last receive aside itself (see {@link DeadLetterPort}). */
  readonly deadLetters?: DeadLetterPort;
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

export interface PreparedRecord {
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

/** How far a turn got: `done` records from the first completed, then `failed` records that failed. */
export interface TurnOutcome {
  readonly done: number;
  readonly failed: number;
}
