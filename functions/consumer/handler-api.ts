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
import type { Customer } from '../events/customer.ts';
import { type GroupCustomer, isGroupField } from '../events/group-item.ts';
import type { EventKind, JsonObject, WebhookEvent } from '../events/types.ts';
import type { StatusLedgerChange, StatusLedgerView } from '../ledger/status-ledger.ts';

/** Scalar details only: objects (a payload, a contact) cannot be passed, so they cannot be logged by accident. */
export type LogDetails = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * A structured JSON logger whose every line already carries the event's `key`, `field` and `kind`. Log ids
 * and counts; never message texts, names or phone numbers.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onMessage({ payload, logger }) {
 *     logger.info('Message received', { type: String(payload.type) });
 *   },
 * });
 * ```
 */
export interface HandlerLogger {
  debug(message: string, details?: LogDetails): void;
  info(message: string, details?: LogDetails): void;
  warn(message: string, details?: LogDetails): void;
  error(message: string, details?: LogDetails): void;
}

/**
 * Counts of your own (tickets opened, replies sent), emitted with the consumer's metrics at the end of the
 * invocation: namespace `WhatsAppWebhookDedup`, the `Subscriber` dimension, and the one dimension you give, so
 * that they cost one EMF document per invocation and dimension value, not one per call.
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onMessage({ metrics }) {
 *     metrics.count('TicketsOpened', { name: 'Queue', value: 'support' });
 *   },
 * });
 * ```
 */
export interface HandlerMetrics {
  /**
   * Adds `value` (default 1) to the metric `name` (letters and digits, starting with a letter, at most 64; not one
   * of this project's own names) under `dimension`, or without one.
   * @throws InvalidMetricError for a name or dimension CloudWatch or this project would not take
   */
  count(name: string, dimension?: { readonly name: string; readonly value: string }, value?: number): void;
}

interface EventContextBase<K extends EventKind> {
  /** The event as the consumer extracted it: key, field, kind, payload and value together. */
  readonly event: WebhookEvent;
  /**
   * The dedup key (docs/design.md §1), stable across Meta's retries and re-batching: a good idempotency key.
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onMessage({ key }) {
   *     const headers = { 'Idempotency-Key': key };
   *     await fetch('https://crm.example.com/tickets', { method: 'POST', headers });
   *   },
   * });
   * ```
   */
  readonly key: string;
  /** The webhook field (`messages`, `calls`, `account_update`, …). */
  readonly field: string;
  /** `message`, `status`, `error` or `management`: which handler runs. */
  readonly kind: K;
  /** The item the key was derived from: the message, the status, the error, the list item or the value. */
  readonly payload: JsonObject;
  /** The whole `change.value` (metadata, contacts, …). */
  readonly value: JsonObject;
  /**
   * The customer the event concerns: a message's sender, a status's recipient (a group status's participant),
   * a `user_preferences` item's user; `undefined` for events about no single customer. Reply to
   * `customer.address`, never to `payload.from`: a customer with a username may come without a phone number.
   */
  readonly customer: Customer | undefined;
  /** How this run got the claim: `fresh`, `reclaimed`, or `takeover` of a lapsed lease ({@link ClaimedAs}). */
  readonly claimedAs: ClaimedAs;
  /**
   * When the receiver took the delivery that carries this event (ISO 8601): the queue message's `receivedAt`
   * attribute, else its enqueue time. The same on every retry of that queue message.
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onMessage({ receivedAt, logger }) {
   *     logger.info('Message', { waitedMs: Date.now() - Date.parse(receivedAt) });
   *   },
   * });
   * ```
   */
  readonly receivedAt: string;
  /**
   * True for the synthetic message and status of `npm run ops -- smoke` (a wamid starting with
   * `wamid.SMOKE_TEST.`, contract/smoke-test.ts): return without the side effect; never reply to it.
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onMessage({ smokeTest, logger }) {
   *     if (smokeTest) return;
   *     logger.info('Replying');
   *   },
   * });
   * ```
   */
  readonly smokeTest: boolean;
  /**
   * Milliseconds left in this invocation (the lease ends `leaseMarginMs` later); keep the effect well inside.
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onMessage({ remainingTimeMs }) {
   *     const signal = AbortSignal.timeout(Math.max(0, remainingTimeMs() - 5_000));
   *     await fetch('https://crm.example.com/tickets', { method: 'POST', signal });
   *   },
   * });
   * ```
   */
  remainingTimeMs(): number;
  /** A logger whose lines carry the event's `key`, `field` and `kind` (see {@link HandlerLogger}). */
  readonly logger: HandlerLogger;
  /** Counts of your own, emitted with the consumer's metrics (see {@link HandlerMetrics}). */
  readonly metrics: HandlerMetrics;
}

/**
 * A `value.messages[i]` item: an inbound message of any type.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers, type MessageContext } from 'whatsapp-webhook-dedup/handlers';
 *
 * async function openTicket({ key, customer, payload }: MessageContext): Promise<void> {
 *   if (customer === undefined) return;
 *   const body = JSON.stringify({ customer: customer.address, type: payload.type });
 *   const headers = { 'Idempotency-Key': key };
 *   await fetch('https://crm.example.com/tickets', { method: 'POST', headers, body });
 * }
 * export const webhookHandlers = defineWebhookHandlers({ onMessage: openTicket });
 * ```
 */
export type MessageContext = EventContextBase<'message'>;

/**
 * A `value.statuses[j]` item, with the status ledger's view after merging it.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onStatus({ ledger, ledgerChange, logger }) {
 *     if (ledgerChange === 'merged') return; // a late status: the current one did not move
 *     logger.info('Message status', { wamid: ledger.wamid, status: ledger.current });
 *   },
 * });
 * ```
 */
export interface StatusContext extends EventContextBase<'status'> {
  /** Current status (by rank; `failed` only until a `delivered`/`read`/`played`) and every status's time. */
  readonly ledger: StatusLedgerView;
  /** `merged`: this status arrived after a higher-ranked one; `ledger.current` did not move back. */
  readonly ledgerChange: StatusLedgerChange;
}

/**
 * A value-level `value.errors[k]` item of the `messages` field.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onError({ payload, logger }) {
 *     logger.error('WhatsApp error', { code: Number(payload.code), title: String(payload.title) });
 *   },
 * });
 * ```
 */
export type ErrorContext = EventContextBase<'error'>;

/**
 * Any other documented field (templates, phone numbers, account, flows, calls, …).
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onManagementEvent({ field, value, logger }) {
 *     if (field !== 'message_template_status_update') return;
 *     const template = String(value.message_template_name);
 *     logger.warn('Template status changed', { template, event: String(value.event) });
 *   },
 * });
 * ```
 */
export type ManagementEventContext = EventContextBase<'management'>;

/**
 * An item of `value.groups[]` of a Groups API field (`group_lifecycle_update`, `group_participants_update`,
 * `group_settings_update`, `group_status_update`): one notification of Meta's, handled once. Its kind stays
 * `management`; `field` tells the four apart. `customer` is `undefined`: an item may name several customers, all
 * in `customers`. Everything else of the item (subject, invite link, settings, `errors`, `initiated_by`) is in
 * `payload`.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onGroupEvent({ field, type, groupId, customers }) {
 *     if (field !== 'group_participants_update' || type !== 'group_participants_add') return;
 *     const members = customers.map((customer) => customer.userId ?? customer.phoneNumber);
 *     const body = JSON.stringify({ groupId, members });
 *     await fetch('https://crm.example.com/group-members', { method: 'POST', body });
 *   },
 * });
 * ```
 */
export interface GroupEventContext extends EventContextBase<'management'> {
  /** `group_id`; `undefined` on a failed `group_create`, which made no group. */
  readonly groupId: string | undefined;
  /** `type` as Meta wrote it: `group_create`, `group_participants_add`, `group_join_request_created`, `group_suspend`, … */
  readonly type: string | undefined;
  /** `request_id`: the id Meta returned for the business's own request (create, delete, remove, settings). */
  readonly requestId: string | undefined;
  /** `join_request_id` of a join request created or revoked: the id to approve or reject it by. */
  readonly joinRequestId: string | undefined;
  /**
   * Every customer the item names, in Meta's order: `added_participants`, `removed_participants`,
   * `failed_participants` (a removal that did not happen), then a join request's requester on the item itself;
   * `list` says which. Empty for the other three fields. One item may name several (a bulk approval): the
   * whole item is one event, so a handler that fails is retried for all of them and must make each customer's
   * effect idempotent itself (key it by `key` and the customer).
   */
  readonly customers: readonly GroupCustomer[];
}

/**
 * Any event's context: one function can serve several handlers and tell them apart by `kind`.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers, type WebhookEventContext } from 'whatsapp-webhook-dedup/handlers';
 *
 * function logEvent({ kind, field, logger }: WebhookEventContext): void {
 *   logger.info('Event handled', { kind, field });
 * }
 * export const webhookHandlers = defineWebhookHandlers({ onMessage: logEvent, onStatus: logEvent });
 * ```
 */
export type WebhookEventContext =
  | MessageContext
  | StatusContext
  | ErrorContext
  | ManagementEventContext
  | GroupEventContext;

/**
 * A handler: return (or resolve) when the side effect is done, throw to have the event retried.
 *
 * @example
 * ```typescript
 * import type { StatusContext, WebhookHandler } from 'whatsapp-webhook-dedup/handlers';
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * const onStatus: WebhookHandler<StatusContext> = async ({ ledger, logger }) => {
 *   logger.info('Status', { status: ledger.current });
 * };
 * export const webhookHandlers = defineWebhookHandlers({ onStatus });
 * ```
 */
export type WebhookHandler<C> = (context: C) => void | Promise<void>;

/**
 * One turn of a conversation (docs/design.md §8, "Bursts"): the fresh inbound messages of one conversation
 * that arrived within `burstWindowMs` of the first, in the order the receiver accepted them, handed over
 * together and once. Their keys were claimed together and are completed together when the handler returns;
 * when it throws, every claim is released and the whole turn comes back as one.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   burstWindowMs: 2_000,
 *   async onConversationTurn({ messages, logger }) {
 *     const texts = messages.map(({ payload }) => (payload.text as { body?: string } | undefined)?.body);
 *     await fetch('https://bot.example.com/reply', { method: 'POST', body: JSON.stringify({ texts }) });
 *     logger.info('Turn answered', { messages: messages.length });
 *   },
 * });
 * ```
 */
export interface ConversationTurnContext {
  /** `<phone_number_id>:<customer wa_id>` (`-` for a part that could not be read). */
  readonly conversationId: string;
  /** Every fresh message of the turn, oldest first; never empty. Duplicates of answered messages are left out. */
  readonly messages: readonly MessageContext[];
  /** Milliseconds left in this invocation (the leases end `leaseMarginMs` later). */
  remainingTimeMs(): number;
  /** Lines carry the conversation's message count and the first message's key. */
  readonly logger: HandlerLogger;
  /** Counts of your own, emitted with the consumer's metrics (see {@link HandlerMetrics}). */
  readonly metrics: HandlerMetrics;
}

/**
 * A fresh event of a delivery part, as {@link RecordContext} holds it: claimed for this run, its side effect
 * not yet done.
 */
export interface RecordEvent {
  /** The event as the consumer extracted it: key, field, kind, payload, value and entry. */
  readonly event: WebhookEvent;
  /** The dedup key (docs/design.md §1). */
  readonly key: string;
  readonly field: string;
  readonly kind: EventKind;
  /** How this run got the claim ({@link ClaimedAs}). */
  readonly claimedAs: ClaimedAs;
  /** A synthetic event of `npm run ops -- smoke` (see `EventContextBase.smokeTest`): run no side effect for it. */
  readonly smokeTest: boolean;
}

/**
 * One delivery part (one queued record): its fresh events, of every kind, handed over together and once,
 * for a side effect that takes them as one (a single request for all of them). Their keys were claimed one by
 * one, as for any handler; when the handler returns, every one of them is completed; when it throws, every
 * one is released and the record comes back (after the `RetryLater` delay, or its backoff; a `DeadLetter`
 * applies to the record). Duplicates and events already done are left out. On an ordered lane the events
 * stop before the first one that cannot run now (another delivery holds it), so that nothing of a
 * conversation runs ahead of it.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onRecord({ events, logger }) {
 *     const keys = events.filter(({ smokeTest }) => !smokeTest).map(({ key }) => key);
 *     await fetch('https://warehouse.example.com/events', { method: 'POST', body: JSON.stringify({ keys }) });
 *     logger.info('Part stored', { events: keys.length });
 *   },
 * });
 * ```
 */
export interface RecordContext {
  /** The queued record's SQS message id. */
  readonly messageId: string;
  /** The part's fresh events, in the order of its body; never empty. */
  readonly events: readonly RecordEvent[];
  /** When the receiver took the delivery the part belongs to (ISO 8601), as `EventContextBase.receivedAt`. */
  readonly receivedAt: string;
  /** Milliseconds left in this invocation (the leases end `leaseMarginMs` later). */
  remainingTimeMs(): number;
  /** Lines carry the part's event count and its first event's key. */
  readonly logger: HandlerLogger;
  /** Counts of your own, emitted with the consumer's metrics (see {@link HandlerMetrics}). */
  readonly metrics: HandlerMetrics;
}

/**
 * Leave a handler out and its events are acknowledged with no side effect: recorded as done in one write and
 * counted, so their duplicates are counted too (or not claimed at all with `claimUnhandledEvents: false`).
 * Give them to {@link defineWebhookHandlers}, which checks them.
 */
export interface WebhookHandlers {
  /**
   * Inbound messages (`value.messages[]` of the `messages` field), one call per message.
   * @default - inbound messages are acknowledged with no side effect
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onMessage({ key, payload, smokeTest }) {
   *     if (smokeTest) return; // `ops smoke`: the pipeline is checked, no effect runs
   *     const body = JSON.stringify({ type: payload.type });
   *     const headers = { 'Idempotency-Key': key };
   *     await fetch('https://crm.example.com/tickets', { method: 'POST', headers, body });
   *   },
   * });
   * ```
   */
  readonly onMessage?: WebhookHandler<MessageContext>;
  /**
   * Instead of `onMessage`: one call per conversation turn, every message a person typed in a burst together
   * (three lines typed in a row get one reply). Needs the ordered message lane for bursts to form; elsewhere
   * each queued record's messages make a turn of their own. Refused together with `onMessage`.
   * @default - none: inbound messages go to `onMessage`
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   burstWindowMs: 3_000,
   *   async onConversationTurn({ conversationId, messages }) {
   *     const ids = messages.map(({ payload }) => payload.id);
   *     const body = JSON.stringify({ conversationId, ids });
   *     await fetch('https://bot.example.com/turns', { method: 'POST', body });
   *   },
   * });
   * ```
   */
  readonly onConversationTurn?: WebhookHandler<ConversationTurnContext>;
  /**
   * How long after a conversation's first fresh message later ones still join its turn, in ms. The turn is
   * handed over once the window has passed (so the first reply waits this long); 0 hands over whatever the
   * batch holds at once. Only with `onConversationTurn`; whole milliseconds up to 60000.
   * @default 0
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   burstWindowMs: 5_000, // three lines typed within 5 s get one reply
   *   async onConversationTurn({ messages, logger }) {
   *     logger.info('Turn', { messages: messages.length });
   *   },
   * });
   * ```
   */
  readonly burstWindowMs?: number;
  /**
   * Message statuses (`value.statuses[]`: sent, delivered, read, failed, …), each with the status ledger's
   * view.
   * @default - statuses are acknowledged with no side effect (and recorded in the ledger only with
   *   `statusLedger: 'always'`)
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onStatus({ ledger, logger }) {
   *     if (ledger.current === 'failed') logger.warn('Message failed', { wamid: ledger.wamid });
   *   },
   * });
   * ```
   */
  readonly onStatus?: WebhookHandler<StatusContext>;
  /**
   * Value-level errors of the `messages` field (`value.errors[]`): Meta could not deliver a webhook's
   * content.
   * @default - errors are acknowledged with no side effect
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onError({ payload, logger }) {
   *     logger.error('WhatsApp error', { code: Number(payload.code), title: String(payload.title) });
   *   },
   * });
   * ```
   */
  readonly onError?: WebhookHandler<ErrorContext>;
  /**
   * Every other documented field (templates, phone numbers, account, flows, calls, standby, handovers, …), and
   * the Groups API fields when `onGroupEvent` is left out (then with the item as `payload`, as for any list
   * item).
   * @default - these events are acknowledged with no side effect
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onManagementEvent({ field, logger }) {
   *     if (field === 'account_update') logger.warn('WhatsApp account updated');
   *   },
   * });
   * ```
   */
  readonly onManagementEvent?: WebhookHandler<ManagementEventContext>;
  /**
   * The Groups API fields, one call per item of `value.groups[]`, with the group, the type, the request ids
   * and every customer the item names. Without it, group events go to `onManagementEvent` if there is one,
   * else they are acknowledged with no side effect. They travel with statuses (no person waits for them).
   * @default - group events go to `onManagementEvent`, if there is one
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onGroupEvent({ field, type, groupId, logger }) {
   *     logger.info('Group event', { field, type: type ?? '-', groupId: groupId ?? '-' });
   *   },
   * });
   * ```
   */
  readonly onGroupEvent?: WebhookHandler<GroupEventContext>;
  /**
   * Instead of every other handler: one call per delivery part (queued record) with all its fresh events, of
   * every kind, together ({@link RecordContext}); all complete when it returns, all are released when it
   * throws. For a side effect that takes a part's events as one (one request, one transaction). Refused
   * beside any other handler.
   * @default - none: events go to the handler of their kind
   * @example
   * ```typescript
   * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onRecord({ events }) {
   *     const body = JSON.stringify(events.map(({ key, kind }) => ({ key, kind })));
   *     await fetch('https://warehouse.example.com/events', { method: 'POST', body });
   *   },
   * });
   * ```
   */
  readonly onRecord?: WebhookHandler<RecordContext>;
}

/** What {@link RetryLater} asks for: when to try the event again, and why. */
export interface RetryLaterOptions {
  /**
   * Seconds until the event should be tried again (a `Retry-After`); at most `retryMaxDelaySeconds` is kept.
   * Required, at least 0.
   * @example
   * ```typescript
   * import { defineWebhookHandlers, RetryLater } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onMessage({ key }) {
   *     const headers = { 'Idempotency-Key': key };
   *     const response = await fetch('https://crm.example.com/tickets', { method: 'POST', headers });
   *     if (response.status === 503) throw new RetryLater({ afterSeconds: 120 });
   *   },
   * });
   * ```
   */
  readonly afterSeconds: number;
  /**
   * A short code for logs (`whatsapp-131056`, `crm-429`): never message text.
   * @default - none: the log line says only when
   * @example
   * ```typescript
   * import { defineWebhookHandlers, RetryLater } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onMessage() {
   *     // WhatsApp's pair rate limit (error 131056): wait before writing to the same customer again.
   *     throw new RetryLater({ afterSeconds: 60, reason: 'whatsapp-131056' });
   *   },
   * });
   * ```
   */
  readonly reason?: string;
}

/**
 * Throw it from a handler, before the side effect, when the downstream asked to be called later (a
 * `Retry-After`, WhatsApp's pair rate limit error 131056): the claim is released and the record comes back
 * after `afterSeconds` (capped at `retryMaxDelaySeconds`), counted as `RetriesDeferred`, not as a handler
 * error. Each return is a receive: a record that keeps being deferred reaches the DLQ after
 * `maxReceiveCount` receives, like one that keeps failing.
 *
 * @throws RangeError when `afterSeconds` is not a finite number of at least 0.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers, RetryLater } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onMessage({ key }) {
 *     const headers = { 'Idempotency-Key': key };
 *     const response = await fetch('https://crm.example.com/tickets', { method: 'POST', headers });
 *     const afterSeconds = Number(response.headers.get('Retry-After') ?? 60);
 *     if (response.status === 429) throw new RetryLater({ afterSeconds, reason: 'crm-429' });
 *   },
 * });
 * ```
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

/** What {@link DeadLetter} asks for: why the event cannot succeed, and after how many receives to give up. */
export interface DeadLetterOptions {
  /**
   * A short code for logs and the dead-letter message's `deadLetterReason` attribute (`crm-422`): never
   * message text.
   * @example
   * ```typescript
   * import { DeadLetter, defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onMessage() {
   *     throw new DeadLetter({ reason: 'crm-422' });
   *   },
   * });
   * ```
   */
  readonly reason: string;
  /**
   * The receive of the record on which it is moved to the DLQ if the handler gives up again: a refusal may
   * be a passing misconfiguration, so a few tries before the DLQ can be worth it. At least 1.
   * @default 1
   * @example
   * ```typescript
   * import { DeadLetter, defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onMessage() {
   *     throw new DeadLetter({ reason: 'crm-400', afterReceives: 3 });
   *   },
   * });
   * ```
   */
  readonly afterReceives?: number;
  /**
   * What to keep on the dead-letter message for `ops dlq` (an HTTP status, the start of an answer), as its
   * `deadLetterDetails` attribute (JSON, at most 2 KiB).
   * @default - none
   * @example
   * ```typescript
   * import { DeadLetter, defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
   *
   * export const webhookHandlers = defineWebhookHandlers({
   *   async onMessage() {
   *     throw new DeadLetter({ reason: 'crm-400', details: { crmStatus: '400' } });
   *   },
   * });
   * ```
   */
  readonly details?: Readonly<Record<string, string>>;
}

/**
 * Throw it from a handler, before the side effect, when retrying cannot help (the downstream refused the
 * input): the claim is released and, once the record has been received `afterReceives` times, the consumer
 * moves it to the subscriber's DLQ at once instead of retrying it up to `maxReceiveCount` times. Before
 * that receive it is retried with the backoff, counted as a handler error either way. The record's other
 * events go with it; those already done are skipped as duplicates if it is redriven.
 *
 * @throws RangeError when `afterReceives` is not a whole number of at least 1, or `details` exceed 2 KiB.
 *
 * @example
 * ```typescript
 * import { DeadLetter, defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onMessage({ key }) {
 *     const response = await fetch('https://crm.example.com/tickets', { method: 'POST', headers: { 'Idempotency-Key': key } });
 *     if (response.status === 422) throw new DeadLetter({ reason: 'crm-422', afterReceives: 3 });
 *   },
 * });
 * ```
 */
export class DeadLetter extends Error {
  readonly reason: string;
  readonly afterReceives: number;
  readonly details: Readonly<Record<string, string>>;

  constructor(options: DeadLetterOptions) {
    const afterReceives = options.afterReceives ?? 1;
    if (!Number.isInteger(afterReceives) || afterReceives < 1) {
      throw new RangeError(`DeadLetter needs afterReceives to be a whole number >= 1, got ${afterReceives}.`);
    }
    const details = options.details ?? {};
    if (Buffer.byteLength(JSON.stringify(details)) > MAX_DEAD_LETTER_DETAILS_BYTES) {
      throw new RangeError(`DeadLetter details take at most ${MAX_DEAD_LETTER_DETAILS_BYTES} bytes of JSON.`);
    }
    super(`Dead-letter after receive ${afterReceives} (${options.reason})`);
    this.name = 'DeadLetter';
    this.reason = options.reason;
    this.afterReceives = afterReceives;
    this.details = details;
  }
}

/** Room for `deadLetterDetails` beside the record's own attributes, well inside a message's size. */
export const MAX_DEAD_LETTER_DETAILS_BYTES = 2048;

/**
 * What {@link defineWebhookHandlers} throws for handlers the consumer cannot honour, at import time.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers, InvalidHandlersError } from 'whatsapp-webhook-dedup/handlers';
 *
 * try {
 *   defineWebhookHandlers({ burstWindowMs: 2_000, onMessage: () => {} });
 * } catch (error) {
 *   // 'burstWindowMs only applies with onConversationTurn.'
 *   if (error instanceof InvalidHandlersError) console.error(error.message);
 * }
 * ```
 */
export class InvalidHandlersError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidHandlersError';
  }
}

/** The handlers that take events one by one or by turn: `onRecord` is refused beside any of them. */
const EVENT_HANDLER_NAMES = [
  'onMessage',
  'onConversationTurn',
  'onStatus',
  'onError',
  'onManagementEvent',
  'onGroupEvent',
] as const;

/** The longest burst window: a turn held longer would eat into the lease and the reply's relevance alike. */
export const MAX_BURST_WINDOW_MS = 60_000;

/**
 * Gives the object literal its types (and editor completion), and refuses combinations the consumer cannot
 * honour, at import, so a unit test or `npm start` shows the mistake before a deploy does.
 *
 * @param handlers - The handlers, by event kind; leave out those whose events need no side effect.
 * @returns The same object, typed.
 * @throws InvalidHandlersError with both `onMessage` and `onConversationTurn`, `onRecord` beside any other
 *   handler, or a `burstWindowMs` without `onConversationTurn` or outside 0 to 60000 whole milliseconds.
 *
 * @example
 * ```typescript
 * import { createConsumerFromEnv, defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onMessage({ payload, logger }) {
 *     logger.info('Message received', { type: String(payload.type) });
 *   },
 * });
 * export const handler = createConsumerFromEnv(webhookHandlers);
 * ```
 */
export function defineWebhookHandlers<const H extends WebhookHandlers>(handlers: H): H {
  if (handlers.onRecord !== undefined) {
    const others = EVENT_HANDLER_NAMES.filter((name) => handlers[name] !== undefined);
    if (others.length > 0 || handlers.burstWindowMs !== undefined) {
      throw new InvalidHandlersError(
        `onRecord takes every fresh event of a record: define it alone, without ${[...others, ...(handlers.burstWindowMs === undefined ? [] : ['burstWindowMs'])].join(', ')}.`,
      );
    }
  }
  if (handlers.onConversationTurn !== undefined && handlers.onMessage !== undefined) {
    throw new InvalidHandlersError(
      'onMessage and onConversationTurn both handle inbound messages: define one of them.',
    );
  }
  const window = handlers.burstWindowMs;
  if (window !== undefined) {
    if (handlers.onConversationTurn === undefined) {
      throw new InvalidHandlersError('burstWindowMs only applies with onConversationTurn.');
    }
    if (!Number.isInteger(window) || window < 0 || window > MAX_BURST_WINDOW_MS) {
      throw new InvalidHandlersError(
        `burstWindowMs is ${window}: use whole milliseconds from 0 to ${MAX_BURST_WINDOW_MS}.`,
      );
    }
  }
  return handlers;
}

/** What picks an event's handler: its kind, and for management events its field (the Groups API fields). */
export type HandledEvent = Pick<WebhookEvent, 'kind' | 'field'>;

/** Whether an event has a side effect: a handler of its own, a record handler, or, for a message, a turn handler. */
export function hasHandler(handlers: WebhookHandlers, event: HandledEvent): boolean {
  return (
    handlesRecords(handlers) ||
    handlerFor(handlers, event) !== undefined ||
    (event.kind === 'message' && handlesTurns(handlers))
  );
}

/** Whether events are handled a record at a time (`onRecord`) rather than one by one. */
export function handlesRecords(handlers: WebhookHandlers): boolean {
  return handlers.onRecord !== undefined;
}

/** Whether inbound messages are handled in turns (`onConversationTurn`) rather than one by one. */
export function handlesTurns(handlers: WebhookHandlers): boolean {
  return handlers.onConversationTurn !== undefined;
}

/**
 * The handler registered for an event, if any: by kind, and for a Groups API field `onGroupEvent`, else
 * `onManagementEvent`.
 */
export function handlerFor(
  handlers: WebhookHandlers,
  { kind, field }: HandledEvent,
): WebhookHandler<WebhookEventContext> | undefined {
  switch (kind) {
    case 'message':
      return handlers.onMessage as WebhookHandler<WebhookEventContext> | undefined;
    case 'status':
      return handlers.onStatus as WebhookHandler<WebhookEventContext> | undefined;
    case 'error':
      return handlers.onError as WebhookHandler<WebhookEventContext> | undefined;
    case 'management':
      return ((isGroupField(field) ? handlers.onGroupEvent : undefined) ?? handlers.onManagementEvent) as
        | WebhookHandler<WebhookEventContext>
        | undefined;
  }
}
