/**
 * Secure defaults for every AWS resource of the construct, kept in one place so that a reviewer can check
 * them at a glance and a prop can only loosen them on purpose.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Billing, type TablePropsV2 } from 'aws-cdk-lib/aws-dynamodb';
import {
  Architecture,
  FunctionUrlAuthType,
  type FunctionUrlOptions,
  InvokeMode,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
} from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { SecretProps } from 'aws-cdk-lib/aws-secretsmanager';
import { QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';

/**
 * Where the package's own sources are: the repository root when this module runs as TypeScript (tsx, vitest),
 * `dist/` inside `node_modules/whatsapp-webhook-dedup` when it runs compiled. The construct bundles its own
 * entries from there, by path (the CDK code never imports them), with the extension of this very module, so
 * that the repository bundles the sources and an installed package its compiled files.
 */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OWN_EXTENSION = path.extname(fileURLToPath(import.meta.url));
export const RECEIVER_ENTRY = path.join(PACKAGE_ROOT, 'functions', `receiver${OWN_EXTENSION}`);
/** The consumer with this project's handlers (`functions/webhook-handlers.ts`); `consumerEntry` replaces it. */
export const DEFAULT_CONSUMER_ENTRY = path.join(PACKAGE_ROOT, 'functions', `consumer${OWN_EXTENSION}`);
/** The consumer of a forward subscriber (`forward` instead of `entry`): this package's forwarding handlers. */
export const FORWARD_CONSUMER_ENTRY = path.join(
  PACKAGE_ROOT,
  'functions',
  `forward-consumer${OWN_EXTENSION}`,
);

/**
 * Newest Node.js runtime this aws-cdk-lib knows (cdk-nag AwsSolutions-L1 checks exactly this). Pinned rather
 * than `NODEJS_LATEST` so that upgrading aws-cdk-lib never changes the runtime behind the user's back.
 */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

/** Graviton: about 20 % cheaper per GB-second than x86 at the same memory. */
export const LAMBDA_ARCHITECTURE = Architecture.ARM_64;

/**
 * esbuild options shared by both functions. The AWS SDK is bundled (not taken from the runtime): we pin its
 * versions and test against them, and the runtime's copy changes without notice. ESM output keeps the SDK
 * tree-shakeable; the banner gives CommonJS-only dependencies a working `require`.
 */
export const BUNDLING: BundlingOptions = {
  forceDockerBundling: false,
  minify: true,
  sourceMap: true,
  // Stack traces map to file and line; the source text itself stays out of the bundle.
  sourcesContent: false,
  format: OutputFormat.ESM,
  // node22 is the oldest runtime the bundle must run on; it is a subset of what nodejs24.x supports.
  target: 'node22',
  mainFields: ['module', 'main'],
  bundleAwsSDK: true,
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
};

/** Node prints stack traces through the bundled source maps. */
export const NODE_OPTIONS = '--enable-source-maps';

export const LAMBDA_LOGGING = {
  loggingFormat: LoggingFormat.JSON,
  systemLogLevelV2: SystemLogLevel.WARN,
} as const;

/** Application log level (Powertools reads `POWERTOOLS_LOG_LEVEL`). */
export const DEFAULT_LOG_LEVEL = 'INFO';

export const DEFAULT_LOG_RETENTION = RetentionDays.ONE_MONTH;

/**
 * Memory sizes. Both functions mostly wait on the network, but the receiver hashes and parses bodies of up to
 * 3 MB, and Lambda allots CPU in proportion to memory: 512 MB keeps that fast without paying for idle memory.
 */
export const DEFAULT_RECEIVER_MEMORY_MB = 512;
export const DEFAULT_CONSUMER_MEMORY_MB = 512;

/**
 * Route throttling of the HTTP API, what the planner sizes for DEFAULT_EXPECTED_PEAK (contract/capacity.ts):
 * one number at Meta's top tier of 1,000 messages/s sends 3 status POSTs per outbound message and 1 per inbound
 * one, and the burst holds a second of that. Below it Meta's POSTs get 429 and come back late, as duplicates.
 * The construct sizes the throttle from `expectedPeak` when it is given; these are the values without it.
 */
export const DEFAULT_THROTTLING_RATE_LIMIT = 4_000;
export const DEFAULT_THROTTLING_BURST_LIMIT = 4_000;

/**
 * The access log of the webhook route. `routeKey` and `$context.path` leave out the query string, which
 * carries `hub.verify_token` on the subscription handshake.
 */
export const HTTP_API_ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTimeEpoch',
  sourceIp: '$context.identity.sourceIp',
  routeKey: '$context.routeKey',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
} as const;

/**
 * The receiver's function URL (`endpoint: 'function-url'`): public, since Meta sends no AWS credentials and the
 * receiver authenticates every POST by its HMAC and the handshake by the verify token; buffered (the answers are
 * a few bytes); no CORS, since no browser calls it. Its throttle is the receiver's reserved concurrency.
 */
export const FUNCTION_URL_DEFAULTS = {
  authType: FunctionUrlAuthType.NONE,
  invokeMode: InvokeMode.BUFFERED,
} as const satisfies FunctionUrlOptions;

/**
 * The webhook secret created when no existing one is named: a generated verify token (32 characters, no
 * punctuation, so that it can be typed in the Meta app) and an empty list of app secrets for the user to fill.
 */
export const WEBHOOK_SECRET_DEFAULTS = {
  description:
    'WhatsApp webhook: {"appSecrets": ["<Meta app secret>", ...], "verifyToken": "<token typed in the Meta app>"}',
  generateSecretString: {
    secretStringTemplate: JSON.stringify({ appSecrets: [] }),
    generateStringKey: 'verifyToken',
    excludePunctuation: true,
    passwordLength: 32,
  },
} as const satisfies SecretProps;

/**
 * Days the quarantine queue keeps a body: the SQS maximum, since nothing else holds a copy and an operator may
 * need the whole of it to fix the cause and requeue.
 */
export const QUARANTINE_RETENTION_DAYS = 14;

/** SQS queues (delivery, DLQ, quarantine): encrypted at rest with SQS-managed keys (no KMS cost or key policy), TLS only. */
export const QUEUE_DEFAULTS = {
  encryption: QueueEncryption.SQS_MANAGED,
  enforceSSL: true,
} as const satisfies QueueProps;

/**
 * The claim table: on-demand (no capacity to plan; webhook traffic is bursty), point-in-time recovery, and
 * kept with deletion protection when the stack is deleted, because losing claims re-runs side effects.
 */
export const CLAIM_TABLE_DEFAULTS = {
  billing: Billing.onDemand(),
  pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
  deletionProtection: true,
  removalPolicy: RemovalPolicy.RETAIN,
} as const satisfies Partial<TablePropsV2>;

/**
 * Alarm defaults (see `WebhookAlarmThresholds` in lib/monitoring/alarms.ts for what each alarm means). Counts
 * of things that should never happen (failed invocations, throttles, completion failures) alarm on the first
 * one; rates and throttling have a floor so that a single retried event on a quiet night pages nobody.
 */
export const ALARM_DEFAULTS = {
  period: Duration.minutes(5),
  oldestMessageAgeSeconds: 300,
  oldestMessageAgeEvaluationPeriods: 3,
  deadLetterQueueMessages: 1,
  /** New DLQ messages within one minute, each a fresh notification even while the DLQ is not empty. */
  deadLetterQueueArrivals: 1,
  duplicateRatePercent: 10,
  duplicateRateEvaluationPeriods: 3,
  duplicateRateMinimumEvents: 50,
  duplicateRateFields: ['message', 'status', 'error'] as readonly string[],
  apiServerErrors: 5,
  signatureRejections: 100,
  /** The consumer reports failures per record, so a failed invocation is a crash or a timeout: a bug. */
  consumerErrors: 1,
  /** The event source caps concurrency below the account limit; a throttle means that cap is not holding. */
  consumerThrottles: 1,
  /** The receiver answers every error itself, so a failed invocation is a crash or a timeout. */
  receiverErrors: 1,
  /** A throttled receiver is a failed delivery for Meta (it retries, but late). */
  receiverThrottles: 1,
  /** An effect ran but its claim could not be marked done: a retry may run it a second time. */
  completionFailures: 1,
  /** 5 % of fresh events failing their handler, over 2 periods, is a failing downstream, not bad luck. */
  handlerErrorRatePercent: 5,
  handlerErrorRateEvaluationPeriods: 2,
  handlerErrorRateMinimumEvents: 20,
  handlerErrorRateFields: ['message', 'status', 'error'] as readonly string[],
  /**
   * Claims failing in 2 consecutive periods: longer than a throttling burst the SDK absorbs, shorter than
   * the ~15 minutes (5 receives × the 181 s visibility timeout) after which records start reaching the DLQ.
   */
  claimFailures: 1,
  claimFailuresEvaluationPeriods: 2,
  /** The SDK retries a throttled write (3 attempts); 10 in a period is sustained pressure, not a blip. */
  claimTableThrottledRequests: 10,
  /** DynamoDB 500s are retried by the SDK; a handful in a period means DynamoDB itself is struggling. */
  claimTableSystemErrors: 5,
  /**
   * p99 of the message lane's `EventWaitTime` (enqueue → first handler call) above 5 s in 3 one-minute periods
   * in a row: people wait for their replies, far beyond the second a webhook endpoint is held to, and for
   * longer than one slow batch or a cold start explains.
   */
  messageEventWaitTimeP99Ms: 5_000,
  messageEventWaitTimeEvaluationPeriods: 3,
  /**
   * The message lane's oldest message older than a minute for 3 minutes: replies are not being sent at all (a
   * paused, failing or throttled message consumer emits no `EventWaitTime`, so the wait alarm cannot see it).
   */
  messageOldestMessageAgeSeconds: 60,
  messageOldestMessageAgeEvaluationPeriods: 3,
  /** Each one is a failed record coming back sooner than its backoff, spending receives towards the DLQ. */
  redeliveriesNotScheduled: 1,
} as const;
