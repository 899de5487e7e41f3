/**
 * The handler API: what a user's business logic receives for each event, once per event key.
 *
 * The consumer calls a handler only after it claimed the event's key; when the handler returns, the claim
 * is completed and the event is never handled again (within the retention). When it throws, the claim is
 * released and the SQS message comes back after a backoff that grows with each receive (`HandlerErrors`), or,
 * when it throws {@link RetryLater}, after the delay it asked for (`RetriesDeferred`). Users edit
 * `functions/webhook-handlers.ts`, nothing else.
 */

import type { ClaimedAs } from '../claims/lease.ts';
import type { EventKind, JsonObject, WebhookEvent } from '../events/types.ts';
import type { StatusLedgerChange, StatusLedgerView } from '../ledger/status-ledger.ts';

/** Scalar details only: objects (a payload, a contact) cannot be passed, so they cannot be logged by accident. */
export type LogDetails = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * A structured JSON logger whose every line already carries the event's `key`, `field` and `kind`. Log ids
 * and counts; never message texts, names or phone numbers.
 */
export interface HandlerLogger {
  debug(message: string, details?: LogDetails): void;
  info(message: string, details?: LogDetails): void;
  warn(message: string, details?: LogDetails): void;
  error(message: string, details?: LogDetails): void;
}

interface EventContextBase<K extends EventKind> {
  readonly event: WebhookEvent;
  /** The dedup key (docs/design.md §1), stable across Meta's retries and re-batching: a good idempotency key. */
  readonly key: string;
  /** The webhook field (`messages`, `calls`, `account_update`, …). */
  readonly field: string;
  readonly kind: K;
  /** The item the key was derived from: the message, the status, the error, the list item or the value. */
  readonly payload: JsonObject;
  /** The whole `change.value` (metadata, contacts, …). */
  readonly value: JsonObject;
  readonly claimedAs: ClaimedAs;
  /** Milliseconds left in this invocation (the lease ends `leaseMarginMs` later); keep the effect well inside. */
  remainingTimeMs(): number;
  readonly logger: HandlerLogger;
}

/** A `value.messages[i]` item: an inbound message of any type. */
export type MessageContext = EventContextBase<'message'>;

/** A `value.statuses[j]` item, with the status ledger's view after merging it. */
export interface StatusContext extends EventContextBase<'status'> {
  /** Current status (by rank, `failed` terminal) and the time of every status seen for this message. */
  readonly ledger: StatusLedgerView;
  /** `merged`: this status arrived after a higher-ranked one; `ledger.current` did not move back. */
  readonly ledgerChange: StatusLedgerChange;
}

/** A value-level `value.errors[k]` item of the `messages` field. */
export type ErrorContext = EventContextBase<'error'>;

/** Any other documented field (templates, phone numbers, account, flows, calls, …). */
export type ManagementEventContext = EventContextBase<'management'>;

export type WebhookEventContext = MessageContext | StatusContext | ErrorContext | ManagementEventContext;

export type WebhookHandler<C> = (context: C) => void | Promise<void>;

/**
 * Leave a handler out and its events are acknowledged with no side effect: recorded as done in one write and
 * counted, so their duplicates are counted too (or not claimed at all with `claimUnhandledEvents: false`).
 */
export interface WebhookHandlers {
  readonly onMessage?: WebhookHandler<MessageContext>;
  readonly onStatus?: WebhookHandler<StatusContext>;
  readonly onError?: WebhookHandler<ErrorContext>;
  readonly onManagementEvent?: WebhookHandler<ManagementEventContext>;
}

export interface RetryLaterOptions {
  /** Seconds until the event should be tried again (a `Retry-After`); at most `retryMaxDelaySeconds` is kept. */
  readonly afterSeconds: number;
  /** A short code for logs (`whatsapp-131056`, `crm-429`): never message text. */
  readonly reason?: string;
}

/**
 * Throw it from a handler, before the side effect, when the downstream asked to be called later (a
 * `Retry-After`, WhatsApp's pair rate limit error 131056): the claim is released and the record comes back
 * after `afterSeconds` (capped at `retryMaxDelaySeconds`), counted as `RetriesDeferred`, not as a handler
 * error. Each return is a receive: a record that keeps being deferred reaches the DLQ after
 * `maxReceiveCount` receives, like one that keeps failing.
 */
export class RetryLater extends Error {
  readonly afterSeconds: number;
  readonly reason: string | undefined;

  constructor(options: RetryLaterOptions) {
    if (!Number.isFinite(options.afterSeconds) || options.afterSeconds < 0) {
      throw new RangeError(`RetryLater needs afterSeconds >= 0, got ${options.afterSeconds}.`);
    }
    super(`Retry in ${options.afterSeconds} s${options.reason === undefined ? '' : ` (${options.reason})`}`);
    this.name = 'RetryLater';
    this.afterSeconds = options.afterSeconds;
    this.reason = options.reason;
  }
}

/** Identity function that gives the object literal its types (and editor completion). */
export function defineWebhookHandlers<const H extends WebhookHandlers>(handlers: H): H {
  return handlers;
}

/** The handler registered for an event's kind, if any. */
export function handlerFor(
  handlers: WebhookHandlers,
  kind: EventKind,
): WebhookHandler<WebhookEventContext> | undefined {
  switch (kind) {
    case 'message':
      return handlers.onMessage as WebhookHandler<WebhookEventContext> | undefined;
    case 'status':
      return handlers.onStatus as WebhookHandler<WebhookEventContext> | undefined;
    case 'error':
      return handlers.onError as WebhookHandler<WebhookEventContext> | undefined;
    case 'management':
      return handlers.onManagementEvent as WebhookHandler<WebhookEventContext> | undefined;
  }
}
