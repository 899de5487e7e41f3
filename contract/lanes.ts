/**
 * Lanes (docs/design.md §8): per subscriber, the inbound `messages` items (what a person waits for) travel in
 * the message lane, apart from statuses, errors and every other field (the status lane), each lane with its
 * own queue, consumer and settings, so that a campaign's status storm never queues ahead of a live chat.
 *
 * The message lane is ordered by default: an SQS FIFO queue whose message group is the conversation
 * (`<phone_number_id>:<customer>`), so that a conversation's messages reach their handler one after the other,
 * in the order the receiver accepted them. Its retry budget is a chat's, not a backend's: a message that keeps
 * failing blocks its conversation for minutes, then goes to the lane's DLQ and the chat moves on
 * (docs/decisions.md, "A failing message holds its chat about a quarter of an hour"). The status lane is the
 * subscriber's existing standard queue, with its batching window and its day-long retry budget.
 *
 * Plain TypeScript: no aws-cdk-lib, no AWS SDK.
 */
import {
  type PipelineSettings,
  type PipelineSettingsInput,
  resolveSettings,
  UnsafeSettingsError,
  withoutUndefined,
} from './settings.ts';

export const LANES = ['message', 'status'] as const;
export type LaneName = (typeof LANES)[number];

export function isLaneName(value: string): value is LaneName {
  return (LANES as readonly string[]).includes(value);
}

/** The lane dimension's value on lane metrics (`EventWaitTime`). */
export const LANE_DIMENSION = 'Lane';

/** The webhook field whose `messages[]` items travel in the message lane. */
export const MESSAGE_LANE_FIELD = 'messages';

/** Lambda's FIFO event source hands out at most 10 records per batch and has no batching window. */
export const FIFO_MAX_BATCH_SIZE = 10;

/** The part of a conversation id standing for a missing or unreadable value (docs/design.md §1's `-`). */
export const MISSING_ID_PART = '-';

/**
 * A conversation's id: `<phone_number_id>:<customer>`, with `-` for a part that is missing, empty or not a
 * string; the customer is the one {@link conversationCustomer} names. It is the message group of the ordered
 * lane, or its digest where SQS would refuse it (a BSUID may have 128 characters).
 */
export function conversationId(phoneNumberId: unknown, customer: unknown): string {
  return `${idPart(phoneNumberId)}:${idPart(customer)}`;
}

function idPart(value: unknown): string {
  return typeof value === 'string' && value !== '' ? value : MISSING_ID_PART;
}

/** What names the sender of an inbound message: its own members and the contacts of its change. */
export interface MessageSender {
  /** The message's `from_user_id`: the customer's business-scoped user id (BSUID). */
  readonly fromUserId: unknown;
  /** The message's `from`: the customer's phone number, when Meta sent it. */
  readonly from: unknown;
  /** The `user_id` of the change's contact whose `wa_id` equals `from`, if any. */
  userIdOfContact(waId: string): unknown;
}

/**
 * The customer a conversation belongs to: the BSUID (`from_user_id`, else the `user_id` of the contact whose
 * `wa_id` is `from`), else the phone number (`from`), else `undefined`. BSUID first, because Meta sends the
 * phone number only within 30 days of the last exchange: a customer is then one conversation whether or not
 * the phone number came with a message. (Keys are phone first instead: docs/decisions.md, "Customers: keys
 * phone-first, conversations BSUID-first".)
 */
export function conversationCustomer(sender: MessageSender): string | undefined {
  if (isId(sender.fromUserId)) return sender.fromUserId;
  if (isId(sender.from)) {
    const userId = sender.userIdOfContact(sender.from);
    return isId(userId) ? userId : sender.from;
  }
  return undefined;
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/**
 * The settings in which the message lane departs from its subscriber's: no batching window (a person waits for
 * each message) and a chat's retry budget when ordered. Everything else (timeout, lease margin, retention,
 * concurrency, batch size, memory) is the subscriber's unless the lane sets it.
 */
export const MESSAGE_LANE_DEFAULTS = {
  maxBatchingWindowSeconds: 0,
} as const satisfies PipelineSettingsInput;

/**
 * The retry budget of an ordered message lane: 5 s, 10 s, 20 s, 40 s, then 1 min apart, 20 receives: a
 * failing message rides out a downstream hiccup of 8 minutes (at the shortest draws) and blocks its
 * conversation for 17 minutes at most (at the longest), then goes to the DLQ and the chat moves on.
 */
export const ORDERED_MESSAGE_LANE_RETRY = {
  retryBaseDelaySeconds: 5,
  retryMaxDelaySeconds: 60,
  maxReceiveCount: 20,
} as const satisfies PipelineSettingsInput;

/**
 * An ordered lane's queue redrives a record to its DLQ this many receives after the consumer would have moved
 * it there itself: the consumer moves a record failing on its `maxReceiveCount`-th receive (and its
 * conversation goes on in the same invocation), because the records queued behind it are received with it
 * every time and would reach SQS's count too. Redrive stays as the net for a record whose consumer never
 * gets to act (a crash, a timeout on every receive).
 */
export const ORDERED_LANE_REDRIVE_MARGIN = 5;

/** The `maxReceiveCount` of the lane queue's redrive policy. */
export function redriveMaxReceiveCount(lane: ResolvedMessageLane): number {
  return lane.settings.maxReceiveCount + (lane.ordered ? ORDERED_LANE_REDRIVE_MARGIN : 0);
}

/**
 * The shortest outage an ordered message lane's budget must ride out: SDK retries, a throttled downstream, a
 * deploy. Shorter budgets are refused, as the 24 h minimum is for the other lanes.
 */
export const MIN_ORDERED_LANE_OUTAGE_RIDDEN_OUT_SECONDS = 5 * 60;

export interface MessageLaneDefinition {
  /**
   * Keep each conversation's messages in order: an SQS FIFO queue grouped by conversation, a message's handler
   * starting only after the previous one's finished. `false`: a standard queue, handlers in parallel, the
   * subscriber's own retry budget (a CRM needs no order, and can wait out a day-long outage).
   * @default true
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { messageLane: { ordered: false } });
   * ```
   */
  readonly ordered?: boolean;
  /**
   * The lane's own consumer settings over the subscriber's (and `MESSAGE_LANE_DEFAULTS`, and, when ordered,
   * `ORDERED_MESSAGE_LANE_RETRY`). An ordered lane refuses a batching window and batches above 10. The
   * pipeline-wide settings (`receiverTimeoutSeconds`, `maximumMessageSizeBytes`, `queueRetentionDays`,
   * `retentionDays`) cannot be set per lane.
   * @default - the subscriber's settings with no batching window, and when ordered a chat's retry budget: 5 s
   *   to 60 s apart, 20 receives
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   messageLane: { settings: { consumerTimeoutSeconds: 60, maxReceiveCount: 30 } },
   * });
   * ```
   */
  readonly settings?: Omit<
    PipelineSettingsInput,
    'receiverTimeoutSeconds' | 'maximumMessageSizeBytes' | 'queueRetentionDays' | 'retentionDays'
  >;
}

export interface ResolvedMessageLane {
  readonly ordered: boolean;
  readonly settings: PipelineSettings;
}

/**
 * The message lane of a subscriber that wants `messages` (`undefined` otherwise: nothing would travel in
 * it), from the subscriber's own settings input and the lane's definition. Throws `UnsafeSettingsError`.
 */
export function resolveMessageLane(
  subscriberSettings: PipelineSettingsInput,
  definition: MessageLaneDefinition = {},
  fields: readonly string[] | undefined,
): ResolvedMessageLane | undefined {
  if (fields !== undefined && !fields.includes(MESSAGE_LANE_FIELD)) return undefined;
  const ordered = definition.ordered ?? true;
  const own = withoutUndefined(definition.settings ?? {}) as PipelineSettingsInput;
  const problem = (text: string) => new UnsafeSettingsError(`messageLane: ${text}`);
  if (ordered && own.maxBatchingWindowSeconds !== undefined && own.maxBatchingWindowSeconds !== 0) {
    throw problem(
      `maxBatchingWindowSeconds is ${own.maxBatchingWindowSeconds}, but an ordered lane is a FIFO queue, for which Lambda has no batching window: leave it out, or set ordered: false.`,
    );
  }
  const input: { -readonly [K in keyof PipelineSettingsInput]: PipelineSettingsInput[K] } = {
    ...withoutUndefined(subscriberSettings),
    ...MESSAGE_LANE_DEFAULTS,
    ...(ordered ? ORDERED_MESSAGE_LANE_RETRY : {}),
    ...own,
  };
  if (ordered && (input.batchSize ?? FIFO_MAX_BATCH_SIZE) > FIFO_MAX_BATCH_SIZE) {
    // A subscriber-wide batch size above 10 (fine on its status lane) is capped here rather than refused.
    if (own.batchSize !== undefined) {
      throw problem(
        `batchSize is ${own.batchSize}, but Lambda hands out at most ${FIFO_MAX_BATCH_SIZE} records per batch from a FIFO queue.`,
      );
    }
    input.batchSize = FIFO_MAX_BATCH_SIZE;
  }
  try {
    const settings = resolveSettings(
      input,
      ordered ? { outageToRideOutSeconds: MIN_ORDERED_LANE_OUTAGE_RIDDEN_OUT_SECONDS } : {},
    );
    return { ordered, settings };
  } catch (error) {
    throw error instanceof UnsafeSettingsError ? problem(error.message) : error;
  }
}
