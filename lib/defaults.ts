/**
 * Secure defaults for every AWS resource of the construct, kept in one place so that a reviewer can check
 * them at a glance and a prop can only loosen them on purpose.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Billing, type TablePropsV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, LoggingFormat, Runtime, SystemLogLevel } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';

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
 * Route throttling of the HTTP API. Meta's default Cloud API throughput is 80 messages/s (upgradable to
 * 1,000), with a few status webhooks per message; 1,000 requests/s with a burst of 2,000 leaves room for that
 * and for Meta's retry bursts, while capping what an unsigned flood can cost before the receiver rejects it.
 */
export const DEFAULT_THROTTLING_RATE_LIMIT = 1_000;
export const DEFAULT_THROTTLING_BURST_LIMIT = 2_000;

/** SQS queue and DLQ: encrypted at rest with SQS-managed keys (no KMS cost or key policy), TLS only. */
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

/** Alarm defaults (see `WebhookAlarmThresholds`). */
export const ALARM_DEFAULTS = {
  period: Duration.minutes(5),
  oldestMessageAgeSeconds: 300,
  oldestMessageAgeEvaluationPeriods: 3,
  deadLetterQueueMessages: 1,
  duplicateRatePercent: 10,
  duplicateRateEvaluationPeriods: 3,
  duplicateRateMinimumEvents: 50,
  duplicateRateFields: ['message', 'status', 'error'] as readonly string[],
  apiServerErrors: 5,
  signatureRejections: 100,
} as const;
