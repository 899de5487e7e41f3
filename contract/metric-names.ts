/**
 * Metric names and dimensions of docs/design.md §5, shared by the code that emits them and the dashboard/alarms
 * that read them, so the two cannot drift apart.
 */
export const METRICS_NAMESPACE = 'WhatsAppWebhookDedup';

export const FIELD_DIMENSION = 'Field';

/**
 * Every consumer metric carries `Subscriber = <subscriber name>` (a Powertools default dimension of the
 * consumer), next to `service` and, for the metrics below that have it, `Field`.
 */
export const SUBSCRIBER_DIMENSION = 'Subscriber';

/**
 * Powertools Metrics always adds a `service` dimension to every metric it emits, so every metric of this
 * project carries `service = SERVICE_NAME` next to its own dimensions; dashboards and alarms must ask for the
 * same dimension set or CloudWatch shows nothing. Both functions set POWERTOOLS_SERVICE_NAME to this value.
 */
export const SERVICE_NAME = 'whatsapp-webhook-dedup';
export const SERVICE_DIMENSION = 'service';

/**
 * `PhoneNumberId = <phone number id>`: on the per-number metrics ({@link ConsumerNumberMetric}) of the numbers
 * a subscriber declares in `numbers`, next to `Subscriber` and `service`. Undeclared numbers add no metric.
 */
export const PHONE_NUMBER_DIMENSION = 'PhoneNumberId';

/**
 * SQS's own CloudWatch metric (namespace AWS/SQS, dimension QueueName) of the sends a FIFO queue accepted and
 * did not enqueue: repeats within its 5-minute deduplication window, absorbed before any claim sees them.
 */
export const SQS_DEDUPLICATED_SENDS_METRIC = 'NumberOfDeduplicatedSentMessages';

/** Consumer metrics with the `Field` dimension. */
export const ConsumerFieldMetric = {
  EventsFresh: 'EventsFresh',
  EventsDuplicate: 'EventsDuplicate',
  EventsDuplicateInFlight: 'EventsDuplicateInFlight',
  LeaseTakeovers: 'LeaseTakeovers',
  HandlerErrors: 'HandlerErrors',
  /** A handler threw `RetryLater`: the event comes back after the delay it asked for (not a handler error). */
  RetriesDeferred: 'RetriesDeferred',
  ClaimReleases: 'ClaimReleases',
  UnknownField: 'UnknownField',
  /** Events of a field the subscriber does not want, skipped without a claim. */
  EventsFilteredOut: 'EventsFilteredOut',
} as const;

export type ConsumerFieldMetricName = (typeof ConsumerFieldMetric)[keyof typeof ConsumerFieldMetric];

/** Consumer metrics without dimension. */
export const ConsumerMetric = {
  Quarantined: 'Quarantined',
  StatusRegressionsMerged: 'StatusRegressionsMerged',
  CompletionFailures: 'CompletionFailures',
  ClaimFailures: 'ClaimFailures',
  MalformedParts: 'MalformedParts',
  /**
   * Failed records whose return time could not be set (ChangeMessageVisibility refused or failed): they come
   * back after the queue's visibility timeout instead, sooner than their backoff, using up receives faster.
   */
  RedeliveriesNotScheduled: 'RedeliveriesNotScheduled',
  /**
   * Ordered lane: records failed without being run because an earlier record of their conversation failed in
   * the same batch; they come back with it, behind it.
   */
  RecordsHeldBehindFailure: 'RecordsHeldBehindFailure',
  /**
   * Ordered lane: records that failed on their last receive, moved to the DLQ by the consumer so that their
   * conversation goes on (SQS redrive would take the records behind them too).
   */
  RecordsDeadLettered: 'RecordsDeadLettered',
  /** Ordered lane with bursts: records handed back unclaimed until their conversation's burst window ends. */
  RecordsHeldForBurst: 'RecordsHeldForBurst',
  /** `onConversationTurn` calls that returned (one per answered burst). */
  ConversationTurns: 'ConversationTurns',
} as const;

export type ConsumerMetricName = (typeof ConsumerMetric)[keyof typeof ConsumerMetric];

/**
 * Consumer metrics repeated per declared number, with `PhoneNumberId` instead of `Field` (summed over fields):
 * one number's traffic, duplicates and failures beside the others'. `EventWaitTime` is repeated too, with
 * `Lane` and `PhoneNumberId`.
 */
export const ConsumerNumberMetric = {
  EventsFresh: ConsumerFieldMetric.EventsFresh,
  EventsDuplicate: ConsumerFieldMetric.EventsDuplicate,
  HandlerErrors: ConsumerFieldMetric.HandlerErrors,
} as const;

export type ConsumerNumberMetricName = (typeof ConsumerNumberMetric)[keyof typeof ConsumerNumberMetric];

/**
 * Consumer metrics with the `Lane` dimension (contract/lanes.ts) next to `Subscriber`: one value per record
 * reaching its handlers, so that CloudWatch's percentiles (p50, p99) apply.
 */
export const ConsumerLaneMetric = {
  /** Milliseconds from the queue's `SentTimestamp` (the receiver's enqueue) to the record's first handler call. */
  EventWaitTime: 'EventWaitTime',
} as const;

export type ConsumerLaneMetricName = (typeof ConsumerLaneMetric)[keyof typeof ConsumerLaneMetric];

/**
 * A forward subscriber's answers (docs/design.md §12), counted through the handlers' own metrics, with
 * `AnswerClass` next to `Subscriber`: `2xx`, `3xx`, `4xx`, `5xx`, `timeout`, `connection`, or `not-started`
 * (a POST that waited its turn too long to fit in the invocation).
 */
export const FORWARD_ANSWERS_METRIC = 'ForwardAnswers';
export const ANSWER_CLASS_DIMENSION = 'AnswerClass';
export const ANSWER_CLASSES = ['2xx', '3xx', '4xx', '5xx', 'timeout', 'connection', 'not-started'] as const;
export type AnswerClass = (typeof ANSWER_CLASSES)[number];

/** Receiver metrics (no dimension). */
export const ReceiverMetric = {
  DeliveriesAccepted: 'DeliveriesAccepted',
  SignatureRejected: 'SignatureRejected',
  EnqueueFailures: 'EnqueueFailures',
  EventsPerDelivery: 'EventsPerDelivery',
  DeliveriesQuarantined: 'DeliveriesQuarantined',
  /** Signed envelopes no subscriber wants (none of their fields): acknowledged, not enqueued. */
  DeliveriesUnrouted: 'DeliveriesUnrouted',
} as const;

export type ReceiverMetricName = (typeof ReceiverMetric)[keyof typeof ReceiverMetric];

/** Values of the `Field` dimension for the `messages` field; other fields use their own name. */
export const MESSAGES_FIELD_DIMENSIONS = ['message', 'status', 'error'] as const;

/** Management fields of docs/design.md §1, in table order; the dashboard shows one line per field. */
export const MANAGEMENT_FIELDS = [
  'message_template_status_update',
  'message_template_quality_update',
  'message_template_components_update',
  'template_category_update',
  'phone_number_name_update',
  'phone_number_quality_update',
  'account_update',
  'account_review_update',
  'account_alerts',
  'business_capability_update',
  'security',
  'flows',
  'partner_solutions',
  'payment_configuration_update',
  'user_preferences',
  'smb_app_state_sync',
  'smb_message_echoes',
  'automatic_events',
  'history',
  'calls',
  'group_lifecycle_update',
  'group_participants_update',
  'group_settings_update',
  'group_status_update',
  'message_echoes',
  'messaging_handovers',
  'standby',
  'consumer_profile',
  'account_settings_update',
] as const;
