/**
 * Wires the consumer from its configuration: the thin Lambda handler (`functions/consumer.ts`) builds it once
 * per container from the environment; tests and the local stack build it with their own clients.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { ENV, getChoiceFromEnv, getNumberFromEnv, getStringFromEnv } from '../../contract/environment.ts';
import { LANES, type LaneName } from '../../contract/lanes.ts';
import { METRICS_NAMESPACE, SERVICE_NAME, SUBSCRIBER_DIMENSION } from '../../contract/metric-names.ts';
import { DEFAULT_SETTINGS } from '../../contract/settings.ts';
import { STATUS_LEDGER_MODES, type StatusLedgerMode } from '../../contract/status-ledger-mode.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../contract/subscribers.ts';
import { ClaimStore, type ClaimStoreOptions } from '../claims/claim-store.ts';
import { createFunctionLogger } from '../commons/function-logger.ts';
import { useLogDigestKey } from '../commons/log-digest.ts';
import { sdkClientConfig } from '../commons/sdk-client-config.ts';
import { StatusLedger, type StatusLedgerOptions } from '../ledger/status-ledger.ts';
import { SqsConversationDeadLetters } from '../queue/sqs-conversation-dead-letters.ts';
import { SqsQuarantineQueue } from '../queue/sqs-quarantine-queue.ts';
import { SqsRedeliveryScheduler } from '../queue/sqs-redelivery-scheduler.ts';
import type { CompletionRetryPolicy } from './complete-with-retry.ts';
import type { ConsumerClaims, StatusRecorder } from './consumer-ports.ts';
import { createConsumerQuarantine } from './consumer-quarantine.ts';
import type { WebhookHandlers } from './handler-api.ts';
import { createSqsBatchHandler } from './sqs-batch-handler.ts';
import { WebhookConsumer } from './webhook-consumer.ts';

export interface ConsumerConfig {
  readonly tableName: string;
  /** Prefix of claim and ledger keys (`<ns>#…`), for several consumers sharing one table. */
  readonly keyNamespace: string | undefined;
  /** The subscriber this consumer runs for. */
  readonly subscriberName: string;
  /** The webhook fields it handles; `undefined`: every field. */
  readonly fields: readonly string[] | undefined;
  /** The phone number ids it handles (contract/event-origin.ts); `undefined`: no limit. */
  readonly numbers?: readonly string[] | undefined;
  /** The WABA ids it handles; `undefined`: no limit. */
  readonly wabas?: readonly string[] | undefined;
  /** Where quarantined records go: the pipeline's quarantine queue. */
  readonly quarantineQueueUrl: string;
  /** The queue this consumer reads: a record held back for a lease is brought back there at the lease end. */
  readonly deliveryQueueUrl: string;
  readonly retentionDays: number;
  readonly leaseMarginMs: number;
  readonly maximumMessageSizeBytes: number;
  readonly statusLedger: StatusLedgerMode;
  readonly claimUnhandledEvents: boolean;
  /** Backoff of failed records and cap of `RetryLater` delays (contract/retry-budget.ts). */
  readonly retryBaseDelaySeconds: number;
  readonly retryMaxDelaySeconds: number;
  /** The lane this consumer reads (contract/lanes.ts). @default 'status' */
  readonly lane?: LaneName;
  /** Its lane is a FIFO queue grouped by conversation: records run in conversation order. @default false */
  readonly ordered?: boolean;
  /** The lane's DLQ, for records a handler gave up on, and on an ordered lane those failing their last receive. */
  readonly laneDeadLetters?: { readonly queueUrl: string; readonly maxReceives: number };
}

export interface ConsumerDependencies {
  readonly documentClient: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly handlers: WebhookHandlers;
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  readonly completionRetry?: CompletionRetryPolicy;
  /** Epoch ms, for claims, ledger and consumer alike. @default Date.now */
  readonly clock?: () => number;
  /** Waits between completion retries. @default setTimeout from node:timers/promises */
  readonly sleep?: (ms: number) => Promise<unknown>;
  /**
   * Builds the claim port from the options the wiring resolved. The simulator's mutants (lab/protocol-checker/
   * consumer-under-test.ts) wrap the real store here to break one rule of the protocol.
   * @default `new ClaimStore(options)`
   */
  readonly claimStore?: (options: ClaimStoreOptions) => ConsumerClaims;
  /** Builds the status ledger port, as `claimStore` does the claim port. @default `new StatusLedger(options)` */
  readonly statusLedger?: (options: StatusLedgerOptions) => StatusRecorder;
}

/**
 * Reads the consumer's configuration from the variables the CDK construct and the local stack set. The values
 * were checked against each other where all settings are known (`resolveSettings`, at synth and at local-stack
 * start); the claim store checks each value it reads on its own when the consumer is built.
 */
export function consumerConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ConsumerConfig {
  return {
    tableName: getStringFromEnv(ENV.claimTableName, env),
    keyNamespace: env[ENV.keyNamespace] || undefined,
    subscriberName: env[ENV.subscriberName] || DEFAULT_SUBSCRIBER_NAME,
    fields: commaListFromEnv(ENV.subscriberFields, env),
    numbers: commaListFromEnv(ENV.subscriberNumbers, env),
    wabas: commaListFromEnv(ENV.subscriberWabas, env),
    quarantineQueueUrl: getStringFromEnv(ENV.quarantineQueueUrl, env),
    deliveryQueueUrl: getStringFromEnv(ENV.deliveryQueueUrl, env),
    retentionDays: getNumberFromEnv(ENV.retentionDays, DEFAULT_SETTINGS.retentionDays, env),
    leaseMarginMs: getNumberFromEnv(ENV.leaseMarginMs, DEFAULT_SETTINGS.leaseMarginMs, env),
    maximumMessageSizeBytes: getNumberFromEnv(
      ENV.maximumMessageSizeBytes,
      DEFAULT_SETTINGS.maximumMessageSizeBytes,
      env,
    ),
    statusLedger: getChoiceFromEnv(ENV.statusLedger, STATUS_LEDGER_MODES, 'with-handler', env),
    claimUnhandledEvents:
      getChoiceFromEnv(ENV.claimUnhandledEvents, ['true', 'false'], 'true', env) === 'true',
    retryBaseDelaySeconds: getNumberFromEnv(
      ENV.retryBaseDelaySeconds,
      DEFAULT_SETTINGS.retryBaseDelaySeconds,
      env,
    ),
    retryMaxDelaySeconds: getNumberFromEnv(
      ENV.retryMaxDelaySeconds,
      DEFAULT_SETTINGS.retryMaxDelaySeconds,
      env,
    ),
    lane: getChoiceFromEnv(ENV.lane, LANES, 'status', env),
    ordered: getChoiceFromEnv(ENV.laneOrdered, ['true', 'false'], 'false', env) === 'true',
    ...laneDeadLettersFromEnv(env),
  };
}

function laneDeadLettersFromEnv(env: NodeJS.ProcessEnv): Pick<ConsumerConfig, 'laneDeadLetters'> {
  const queueUrl = env[ENV.laneDeadLetterQueueUrl];
  if (queueUrl === undefined || queueUrl === '') return {};
  const maxReceives = getNumberFromEnv(ENV.laneMaxReceives, Number.NaN, env);
  if (!Number.isInteger(maxReceives) || maxReceives < 1) {
    throw new Error(
      `Environment variable ${ENV.laneMaxReceives} must be a whole number >= 1 with ${ENV.laneDeadLetterQueueUrl}.`,
    );
  }
  return { laneDeadLetters: { queueUrl, maxReceives } };
}

/** `SUBSCRIBER_FIELDS`, `SUBSCRIBER_NUMBERS`, `SUBSCRIBER_WABAS`: comma-separated; absent or empty = no limit. */
function commaListFromEnv(variable: string, env: NodeJS.ProcessEnv): readonly string[] | undefined {
  const raw = env[variable];
  if (raw === undefined || raw === '') return undefined;
  const items = raw.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) {
    throw new Error(`Environment variable ${variable} has an empty item: "${raw}".`);
  }
  return items;
}

export function createConsumerLogger(): Logger {
  return createFunctionLogger();
}

export function createConsumerMetrics(): Metrics {
  return new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME });
}

/**
 * The consumer over `config` and `dependencies`. The logger and the Metrics (given or not) are marked with the
 * subscriber: every log line carries `subscriber`, every metric the `Subscriber` dimension. Give each consumer
 * its own, or one consumer's name ends up on another's lines and metrics.
 */
export function createConsumerHandler(config: ConsumerConfig, dependencies: ConsumerDependencies) {
  const logger = dependencies.logger ?? createConsumerLogger();
  const metrics = dependencies.metrics ?? createConsumerMetrics();
  const lane = config.lane ?? 'status';
  const ordered = config.ordered === true;
  logger.appendPersistentKeys({ subscriber: config.subscriberName, lane });
  metrics.setDefaultDimensions({ [SUBSCRIBER_DIMENSION]: config.subscriberName });
  const claimStore = dependencies.claimStore ?? ((options) => new ClaimStore(options));
  const claims = claimStore({
    documentClient: dependencies.documentClient,
    tableName: config.tableName,
    keyNamespace: config.keyNamespace,
    retentionDays: config.retentionDays,
    leaseMarginMs: config.leaseMarginMs,
    clock: dependencies.clock,
  });
  const statusLedger = dependencies.statusLedger ?? ((options) => new StatusLedger(options));
  const ledger = statusLedger({
    documentClient: dependencies.documentClient,
    tableName: config.tableName,
    keyNamespace: config.keyNamespace,
    retentionDays: config.retentionDays,
    clock: dependencies.clock,
  });
  const deadLetters = new SqsQuarantineQueue({
    sqs: dependencies.sqs,
    quarantineQueueUrl: config.quarantineQueueUrl,
    maximumMessageSizeBytes: config.maximumMessageSizeBytes,
  });
  const consumer = new WebhookConsumer({
    claims,
    ledger,
    quarantine: createConsumerQuarantine(deadLetters),
    redelivery: new SqsRedeliveryScheduler({
      sqs: dependencies.sqs,
      deliveryQueueUrl: config.deliveryQueueUrl,
    }),
    handlers: dependencies.handlers,
    statusLedger: config.statusLedger,
    claimUnhandledEvents: config.claimUnhandledEvents,
    retry: {
      retryBaseDelaySeconds: config.retryBaseDelaySeconds,
      retryMaxDelaySeconds: config.retryMaxDelaySeconds,
    },
    fields: config.fields,
    numbers: config.numbers,
    wabas: config.wabas,
    ordered,
    deadLetters:
      config.laneDeadLetters !== undefined
        ? new SqsConversationDeadLetters({
            sqs: dependencies.sqs,
            deadLetterQueueUrl: config.laneDeadLetters.queueUrl,
            maxReceives: config.laneDeadLetters.maxReceives,
          })
        : undefined,
    logger,
    completionRetry: dependencies.completionRetry,
    clock: dependencies.clock,
    sleep: dependencies.sleep,
  });
  return createSqsBatchHandler({
    consumer,
    metrics,
    logger,
    lane,
    ordered: ordered ? { handlers: dependencies.handlers, clock: dependencies.clock } : undefined,
  });
}

/**
 * The consumer Lambda's handler over `handlers`, the Lambda context added to every log line. Lazy: the
 * configuration (from `env`) and the SDK clients are built on the first invocation, once per container, so
 * that importing a subscriber module (`handler = createConsumerFromEnv(webhookHandlers)`) has no side effect;
 * the local stack imports them for their handlers. A missing variable fails that first invocation (and every
 * later one), naming the variable. `functions/consumer.ts`, the subscriber modules and the local stack run this.
 *
 * @param handlers - The subscriber's handlers, from {@link defineWebhookHandlers}.
 * @param env - Where the configuration is read from; the construct sets these variables on the consumer.
 * @returns The Lambda handler: export it as `handler` from the module the construct bundles (`entry`).
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
export function createConsumerFromEnv(
  handlers: WebhookHandlers,
  env: NodeJS.ProcessEnv = process.env,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  let built: { logger: Logger; consumeBatch: ReturnType<typeof createConsumerHandler> } | undefined;
  const build = () => {
    const logger = createConsumerLogger();
    const consumeBatch = createConsumerHandler(consumerConfigFromEnv(env), {
      documentClient: DynamoDBDocumentClient.from(new DynamoDBClient(sdkClientConfig('consumerDynamoDb'))),
      sqs: new SQSClient(sdkClientConfig('consumerSqs')),
      handlers,
      logger,
    });
    return { logger, consumeBatch };
  };
  let digestKeyLoaded: Promise<void> | undefined;
  return async (event, context) => {
    built ??= build();
    digestKeyLoaded ??= loadLogDigestKey(env, built.logger);
    await digestKeyLoaded;
    built.logger.addContext(context);
    return built.consumeBatch(event, context);
  };
}

/**
 * Sets the deployment's log digest key once per container: from `LOG_DIGEST_KEY` (the local stack), else from
 * the secret `LOG_DIGEST_SECRET_ID` names. A key that cannot be read leaves the random per-container key in
 * place, with a warning: the logs stay free of personal data, only their correlation across containers and
 * with `ops key` is lost, and no side effect waits on a log concern.
 */
async function loadLogDigestKey(env: NodeJS.ProcessEnv, logger: Logger): Promise<void> {
  const localKey = env[ENV.logDigestKey];
  if (localKey !== undefined && localKey !== '') {
    useLogDigestKey(localKey);
    return;
  }
  const secretId = env[ENV.logDigestSecretId];
  if (secretId === undefined || secretId === '') return;
  try {
    const provider = new SecretsProvider({
      awsSdkV3Client: new SecretsManagerClient(sdkClientConfig('consumerSecretsManager')),
    });
    const key = await provider.get(secretId);
    if (typeof key !== 'string' || key === '') throw new TypeError('the secret holds no string');
    useLogDigestKey(key);
  } catch (error) {
    logger.warn('Log digest key not read: digests correlate within this container only', {
      errorName: error instanceof Error ? error.name : typeof error,
    });
  }
}
