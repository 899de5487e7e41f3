/**
 * The props of `WhatsAppWebhookDedup`, apart from the construct so that what checks and sizes them
 * (`validate-props.ts`, `capacity-sizing.ts`) imports them without importing the construct.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { ExpectedPeak, WebhookEndpoint } from '../contract/capacity.ts';
import type { MessageLaneDefinition } from '../contract/lanes.ts';
import type { StatusLedgerMode } from '../contract/status-ledger-mode.ts';
import type { SubscriberDefinitions } from '../contract/subscribers.ts';
import type { ArchiveProp } from './builders/archive.ts';
import type { WebhookAlarmThresholds } from './monitoring/alarms.ts';

export interface WhatsAppWebhookDedupProps {
  /**
   * Days a done claim keeps blocking redeliveries of the same event: at least Meta's 7 days of retries plus
   * the longest retry budget of the subscriber's lanes (a retry may wait that long in a queue before its
   * claim is checked); smaller values are refused with the smallest accepted one.
   * @default - 7 days plus the default retry budget, rounded up to whole days: 10
   *   (`DEFAULT_SETTINGS.retentionDays`)
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   retentionDays: 14, // two weeks of claims, above the floor of 7 days plus the retry budget
   * });
   * ```
   */
  readonly retentionDays?: number;
  /**
   * Margin added to the consumer invocation's remaining time to form the processing lease. Refused when
   * consumerTimeoutSeconds + maxBatchingWindowSeconds + this margin reaches visibilityTimeoutSeconds (a
   * redelivery would meet its own live lease).
   * @default 10000
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { leaseMarginMs: 20_000 });
   * ```
   */
  readonly leaseMarginMs?: number;
  /**
   * Consumer timeout in seconds: the longest a batch of side effects may run. The visibility timeout and the
   * lease follow from it.
   * @default 30
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * // The visibility timeout follows: 6 × 60 + 1 = 361 s.
   * new WhatsAppWebhookDedup(stack, 'Webhook', { consumerTimeoutSeconds: 60 });
   * ```
   */
  readonly consumerTimeoutSeconds?: number;
  /**
   * Receiver timeout in seconds: reading the secret, verifying and enqueueing with SDK retries. At most 29
   * with `endpoint: 'http-api'`, so the receiver's own 5xx reaches Meta before API Gateway's 30 s integration
   * timeout.
   * @default 10
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { receiverTimeoutSeconds: 15 });
   * ```
   */
  readonly receiverTimeoutSeconds?: number;
  /**
   * SQS records per consumer invocation.
   * @default 10
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { batchSize: 5 });
   * ```
   */
  readonly batchSize?: number;
  /**
   * Seconds the event source may wait to fill a batch.
   * @default 1
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { maxBatchingWindowSeconds: 5 });
   * ```
   */
  readonly maxBatchingWindowSeconds?: number;
  /**
   * Most concurrent consumer invocations the SQS event source starts (the event source mapping's
   * `ScalingConfig.MaximumConcurrency`, not reserved concurrency, so throttling cannot push records to the
   * DLQ). At least 2. Below what `expectedPeak` needs, the synth warns.
   * @default - sized for `expectedPeak` per lane by the capacity planner (docs/capacity.md)
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { maxConcurrency: 200 });
   * ```
   */
  readonly maxConcurrency?: number;
  /**
   * Visibility timeout of the delivery queue in seconds; values below 6 × consumerTimeoutSeconds +
   * maxBatchingWindowSeconds are refused.
   * @default 6 × consumerTimeoutSeconds + maxBatchingWindowSeconds (181)
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { visibilityTimeoutSeconds: 300 });
   * ```
   */
  readonly visibilityTimeoutSeconds?: number;
  /**
   * Receives before a record moves to the DLQ. With the retry delays it sets how long a downstream outage
   * records ride out (docs/consumer.md, "Retry budget"): values below 5, or too few to ride out a day-long
   * outage, or so many that a record could outlive the queues' retention, are refused.
   * @default 60
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   maxReceiveCount: 100,
   *   retentionDays: 12, // a longer retry budget needs a longer claim retention
   * });
   * ```
   */
  readonly maxReceiveCount?: number;
  /**
   * Ceiling in seconds of the delay before a failed record's second receive; it doubles with each receive.
   * @default 30
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { retryBaseDelaySeconds: 60 });
   * ```
   */
  readonly retryBaseDelaySeconds?: number;
  /**
   * Ceiling in seconds of every delay the consumer sets on a failed record, backoff and `RetryLater` alike.
   * @default 3600
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   retryMaxDelaySeconds: 1800,
   *   maxReceiveCount: 110, // a shorter cap needs more receives to ride out a day-long outage
   * });
   * ```
   */
  readonly retryMaxDelaySeconds?: number;
  /**
   * Largest SQS message the receiver writes (set explicitly on every queue); bigger deliveries are split on
   * event boundaries. 1,024 to 1,048,576.
   * @default 1048576
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { maximumMessageSizeBytes: 262_144 }); // 256 KiB
   * ```
   */
  readonly maximumMessageSizeBytes?: number;
  /**
   * Days an unprocessed delivery stays in the delivery queue. Once Meta got its 200 the queue holds the only
   * copy, so values below 7 are refused (SQS maximum: 14).
   * @default 14
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { queueRetentionDays: 10 });
   * ```
   */
  readonly queueRetentionDays?: number;
  /**
   * Days a message stays in the dead-letter queue (SQS maximum: 14). Values below `queueRetentionDays` are
   * refused: SQS keeps a redriven message's original enqueue time, so it could expire in the DLQ unseen.
   * @default 14
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { queueRetentionDays: 10, deadLetterRetentionDays: 10 });
   * ```
   */
  readonly deadLetterRetentionDays?: number;
  /**
   * Prefix of the claim keys (`<ns>#<key>`), so that several consumers can share one table.
   * Letters, digits, `_`, `.`, `-`. Refused with `subscribers`, where each subscriber has its own.
   * @default - no prefix
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { keyNamespace: 'support' });
   * ```
   */
  readonly keyNamespace?: string;
  /**
   * What happens to the claim table when it leaves the stack.
   * @default RemovalPolicy.RETAIN
   * @example
   * ```typescript
   * import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   tableRemovalPolicy: RemovalPolicy.DESTROY, // a throwaway test stack only: claims are lost with it
   *   tableDeletionProtection: false,
   * });
   * ```
   */
  readonly tableRemovalPolicy?: RemovalPolicy;
  /**
   * DynamoDB deletion protection on the claim table.
   * @default true
   * @example
   * ```typescript
   * import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   tableRemovalPolicy: RemovalPolicy.DESTROY, // a throwaway test stack only: claims are lost with it
   *   tableDeletionProtection: false,
   * });
   * ```
   */
  readonly tableDeletionProtection?: boolean;
  /**
   * Name of an existing Secrets Manager secret holding `{"appSecrets": [...], "verifyToken": "..."}`.
   * @default - a secret is created with a generated verify token and an empty list of app secrets
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { existingSecretName: 'whatsapp/support-webhook' });
   * ```
   */
  readonly existingSecretName?: string;
  /**
   * The webhook's front door (docs/design.md §4). `'http-api'`: an API Gateway HTTP API, throttled per route,
   * with an access log (AWS WAF attaches to neither door directly: both need CloudFront in front for one).
   * `'function-url'`: the receiver's own Lambda function URL (auth type `NONE`: the `X-Hub-Signature-256` HMAC
   * authenticates every POST), costing nothing beyond the receiver's invocation; its throttle is the receiver's
   * reserved concurrency (`receiverReservedConcurrency`, Lambda answers 429 beyond it and Meta retries), its
   * record of each request the receiver's own log line and the URL metrics. Both give Meta the same answers;
   * the trade-offs are in docs/decisions.md ("Front door").
   * @default 'http-api'
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   endpoint: 'function-url',
   *   expectedPeak: { messagesPerSecond: 80 }, // sizes the receiver's reserved concurrency
   * });
   * ```
   */
  readonly endpoint?: WebhookEndpoint;
  /**
   * The receiver's reserved concurrency: with `endpoint: 'function-url'`, the webhook's throttle (Lambda
   * answers 429 when every unit is busy or above 10 requests/s per unit). Taken from the account's concurrency
   * whether the receiver runs or not; Lambda keeps 100 of it unreserved. Below what `expectedPeak` needs, the
   * synth warns; refused with `'http-api'`, whose throttle is the route's.
   * @default - sized for `expectedPeak` by the capacity planner: POSTs/s / (10 × 0.8), and at most 0.1 % of
   *   the POSTs turned away at the receiver's duration (Erlang B)
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { endpoint: 'function-url', receiverReservedConcurrency: 100 });
   * ```
   */
  readonly receiverReservedConcurrency?: number;
  /**
   * Steady-state request rate limit of the webhook routes (requests per second), with `endpoint: 'http-api'`;
   * refused with `'function-url'`, whose throttle is `receiverReservedConcurrency`. Below the webhook POSTs/s
   * of `expectedPeak`, the synth warns.
   * @default - the POSTs/s of `expectedPeak`: 3 per outbound message and 1 per inbound one
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { throttlingRateLimit: 8_000 });
   * ```
   */
  readonly throttlingRateLimit?: number;
  /**
   * Burst limit of the webhook routes (requests), with `endpoint: 'http-api'`; refused with `'function-url'`.
   * Below a second of `expectedPeak`'s POSTs, the synth warns.
   * @default - one second of `expectedPeak`'s POSTs
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { throttlingBurstLimit: 8_000 });
   * ```
   */
  readonly throttlingBurstLimit?: number;
  /**
   * The traffic the pipeline must carry (docs/capacity.md): outbound messages/s per business phone number, and
   * optionally inbound messages/s and how many numbers. The capacity planner (`planCapacity`) sizes from it
   * what the props leave unset: the route throttle (or the receiver's reserved concurrency behind a function
   * URL), each lane's `maxConcurrency` and the claim table's warm write throughput. An explicit setting that cannot carry it, or an account quota it exceeds, is named in a
   * synth warning; nothing is refused.
   * @default - one number at Meta's top tier: 1,000 messages/s out and 1,000 in (`DEFAULT_EXPECTED_PEAK`)
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   expectedPeak: { messagesPerSecond: 80, inboundPerSecond: 20, numbers: 3 },
   * });
   * ```
   */
  readonly expectedPeak?: ExpectedPeak;
  /**
   * Alarm thresholds.
   * @default - see `WebhookAlarmThresholds`
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   alarmThresholds: { duplicateRatePercent: 20, oldestMessageAgeSeconds: 600 },
   * });
   * ```
   */
  readonly alarmThresholds?: WebhookAlarmThresholds;
  /**
   * SNS topic notified when an alarm fires and when it recovers.
   * @default - alarms have no actions
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { Topic } from 'aws-cdk-lib/aws-sns';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * const alarmTopic = new Topic(stack, 'WebhookAlarms');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { alarmTopic });
   * ```
   */
  readonly alarmTopic?: ITopic;
  /**
   * Retention of the functions' log groups and, with `endpoint: 'http-api'`, the API's access log.
   * @default RetentionDays.ONE_MONTH
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { RetentionDays } from 'aws-cdk-lib/aws-logs';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { logRetention: RetentionDays.THREE_MONTHS });
   * ```
   */
  readonly logRetention?: RetentionDays;
  /**
   * Application log level of both functions (Powertools `POWERTOOLS_LOG_LEVEL`).
   * @default 'INFO'
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { logLevel: 'DEBUG' });
   * ```
   */
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * Receiver memory in MB (CPU grows with it; the receiver hashes and parses bodies of up to 3 MB).
   * @default 512
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { receiverMemorySize: 1024 });
   * ```
   */
  readonly receiverMemorySize?: number;
  /**
   * Consumer memory in MB; with `subscribers`, of every subscriber that does not set its own `memorySize`.
   * @default 512
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { consumerMemorySize: 256 });
   * ```
   */
  readonly consumerMemorySize?: number;
  /**
   * Path of the consumer's entry file (exporting `handler`), for users who wire their own side effects.
   * Refused with `subscribers`, where each subscriber names its own `entry`.
   * @default - `functions/consumer.ts` of this project
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * // src/consumer.ts exports `handler = createConsumerFromEnv(webhookHandlers)`
   * new WhatsAppWebhookDedup(stack, 'Webhook', { consumerEntry: 'src/consumer.ts' });
   * ```
   */
  readonly consumerEntry?: string;
  /**
   * Name of the CloudWatch dashboard.
   * @default - generated by CloudFormation
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { dashboardName: 'support-webhook' });
   * ```
   */
  readonly dashboardName?: string;
  /**
   * When the consumer records message statuses in the status ledger (docs/design.md §3): `'with-handler'`
   * only when its handlers include `onStatus`; `'always'` for every status, for the ledger view alone (each
   * status then costs a claim, a ledger write and a completion). With `subscribers`, the mode of every
   * subscriber that does not set its own.
   * @default 'with-handler'
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * // Every status in the ledger, with or without an onStatus handler.
   * new WhatsAppWebhookDedup(stack, 'Webhook', { statusLedger: 'always' });
   * ```
   */
  readonly statusLedger?: StatusLedgerMode;
  /**
   * Whether the consumer claims events whose kind has no handler. `true` records each as done with one write,
   * so that its duplicates are still classified and counted (the duplicate rate per field is the early
   * warning of slow acknowledgements); `false` skips them: no write, and no duplicate counts for them. With
   * `subscribers`, the choice of every subscriber that does not make its own.
   * @default true
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { claimUnhandledEvents: false });
   * ```
   */
  readonly claimUnhandledEvents?: boolean;
  /**
   * The systems this webhook feeds (docs/design.md §7): each subscriber gets its own queue, DLQ, consumer
   * (its `entry`), event source mapping, claim namespace (its name unless it sets `keyNamespace`), alarms and
   * dashboard row, and receives only the fields it lists. The pipeline's settings above are every
   * subscriber's defaults; its own `settings` override them.
   *
   * A subscriber named `default` keeps the resources of a stack deployed without `subscribers` (same
   * construct ids), so adding subscribers beside it replaces nothing; set its `keyNamespace: ''` to keep
   * its unprefixed claims too.
   * @default - one subscriber, `default`: `consumerEntry` with unprefixed claim keys (or `keyNamespace`)
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: {
   *     bot: { entry: 'src/bot.ts', fields: ['messages'] },
   *     crm: { entry: 'src/crm.ts', messageLane: { ordered: false } },
   *   },
   * });
   * ```
   */
  readonly subscribers?: SubscriberDefinitions;
  /**
   * The message lane (docs/design.md §8): inbound messages in their own queue and consumer, apart from
   * statuses and other fields, ordered per conversation unless `ordered: false`. With `subscribers`, the
   * lane of every subscriber that does not define its own.
   * @default - an ordered lane (FIFO queue grouped by conversation, no batching window, a chat's retry budget)
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   messageLane: { ordered: false, settings: { maxBatchingWindowSeconds: 2 } },
   * });
   * ```
   */
  readonly messageLane?: MessageLaneDefinition;
  /**
   * The delivery archive (docs/design.md, "Archive"): every delivery the receiver accepted or quarantined,
   * its bytes verbatim with its arrival, verdict and subscribers, in an S3 bucket (S3-managed encryption, TLS
   * only, public access blocked, no versioning), hour-partitioned gzip JSON Lines kept `retentionDays`
   * (lifecycle expiry); `npm run ops -- replay` reads it. `false`: no bucket, no archive queue, no archiver.
   *
   * **The archive holds personal data**: message texts, phone numbers and names, as Meta sent them, for as
   * long as `retentionDays`. Choose the retention your privacy policy allows, and grant read access
   * (`archive.bucket.grantRead`) only to whoever may see them.
   * @default - on, kept DEFAULT_ARCHIVE_RETENTION_DAYS (30) days
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', { archive: { retentionDays: 90 } });
   * // or no archive at all: new WhatsAppWebhookDedup(stack, 'Webhook', { archive: false });
   * ```
   */
  readonly archive?: ArchiveProp;
}
