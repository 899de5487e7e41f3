/**
 * One pipeline on the shared emulators, for the end-to-end and reliability tests: its own claim table and
 * queues, the REAL receiver handler (`createReceiverHandler`, configured from env as in Lambda) fed signed API
 * Gateway v2 events, and the REAL consumer wiring (`createConsumerHandler`, configured from the variables a
 * Lambda consumer reads) driven by the local SQS event source.
 *
 * By default the pipeline has today's single subscriber (`default`, unprefixed claim keys) over the shipped
 * `webhookHandlers`, whose local effects journal records every side effect, and its DLQ doubles as the
 * quarantine queue. With {@link PipelineOptions.subscribers} it has several, as a stack with `subscribers`
 * does: each its own queue and DLQ, its own consumer (handlers, key namespace, fields, settings) and effects
 * journal, and one quarantine queue for the pipeline.
 *
 * The reliability tests swap in the consumer's own DynamoDB client (with a fault-injecting middleware) or
 * wrap its handlers through {@link ConsumerOptions}; by default the consumer is wired as in Lambda.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { interceptLocalhostDns } from 'fauxqs';
import {
  createPipelineQueues,
  createQuarantineQueue,
  type PipelineQueues,
} from '../../cli/local/emulators/sqs.ts';
import { toApiGatewayV2Event } from '../../cli/local/http/api-gateway-v2.ts';
import { readQueueCounts, totalMessages } from '../../cli/local/queue-counts.ts';
import {
  createSqsEventSource,
  type InvocationReport,
  type SqsEventSource,
} from '../../cli/local/sqs-event-source.ts';
import { consumerEnvironment, ENV, receiverEnvironment } from '../../contract/environment.ts';
import {
  type PipelineSettings,
  type PipelineSettingsInput,
  resolveSettings,
} from '../../contract/settings.ts';
import {
  DEFAULT_SUBSCRIBER_NAME,
  type SubscriberQueue,
  type SubscriberSettingsInput,
} from '../../contract/subscribers.ts';
import type { CompletionRetryPolicy } from '../../functions/consumer/complete-with-retry.ts';
import { consumerConfigFromEnv, createConsumerHandler } from '../../functions/consumer/create-consumer.ts';
import type {
  WebhookEventContext,
  WebhookHandler,
  WebhookHandlers,
} from '../../functions/consumer/handler-api.ts';
import { signBody } from '../../functions/receiver/signature.ts';
import { createReceiverHandler } from '../../functions/receiver.ts';
import { webhookHandlers } from '../../functions/webhook-handlers.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  createSqsClient,
  createTestClaimTable,
  dynamoDbEndpoint,
  TEST_CREDENTIALS,
  TEST_REGION,
  uniqueName,
} from './aws-clients.ts';

export const APP_SECRET = 'pipeline-test-app-secret';
export const SECOND_APP_SECRET = 'pipeline-test-rotated-secret';
export const VERIFY_TOKEN = 'pipeline-test-verify-token';

export function sign(body: Buffer | string, secret = APP_SECRET): string {
  return signBody(body, secret);
}

export interface PostOptions {
  /** A ready header value; `null` sends none. @default signed with APP_SECRET */
  readonly signature?: string | null;
}

/** One subscriber of a pipeline: its queues, its consumer and what it effected. */
export interface PipelineSubscriber {
  readonly name: string;
  /** Prefix of its claim keys (`<ns>#…`); `undefined`: unprefixed. */
  readonly keyNamespace: string | undefined;
  /** `undefined`: every field. */
  readonly fields: readonly string[] | undefined;
  /** The pipeline's settings with its own on top (its queue's visibility timeout, receives, retries, …). */
  readonly settings: PipelineSettings;
  readonly queues: PipelineQueues;
  readonly journalPath: string;
  /** Its consumer's environment, as its Lambda function would have it. */
  readonly env: Record<string, string>;
  /** Starts its consumer under the local event source (options over the pipeline's). */
  startConsumer(eventSource?: EventSourceOptions): Promise<SqsEventSource>;
  /** Its side effects so far: key → times. */
  effects(): Map<string, number>;
  /** Messages in its delivery queue: visible + in flight + delayed. */
  queueDepth(): Promise<number>;
  /** Messages in its DLQ: visible + in flight + delayed. */
  deadLetterDepth(): Promise<number>;
  /** Reads every message of its DLQ (and leaves them invisible for a while). */
  drainDeadLetters(): Promise<Message[]>;
  enqueueRaw(body: string): Promise<void>;
  /** Its claim items by state, keyed by event key (its namespace prefix removed). */
  claims(): Promise<Map<string, string>>;
}

/** The pipeline; the members it shares with {@link PipelineSubscriber} are those of its first subscriber. */
export interface Pipeline {
  readonly settings: PipelineSettings;
  readonly tableName: string;
  readonly queues: PipelineQueues;
  readonly journalPath: string;
  /** The environment the handlers read (receiver and first subscriber's consumer; also for a child process). */
  readonly env: Record<string, string>;
  readonly subscribers: readonly PipelineSubscriber[];
  /** The subscriber named `name`; throws for an unknown one. */
  subscriber(name: string): PipelineSubscriber;
  /** Where the receiver and the consumers quarantine bodies (the default subscriber's DLQ when alone). */
  readonly quarantineQueueUrl: string;
  /** Reads every message of the quarantine queue (and leaves them invisible for a while). */
  drainQuarantine(): Promise<Message[]>;
  post(body: Buffer | string, options?: PostOptions): Promise<APIGatewayProxyStructuredResultV2>;
  /** Starts the consumer under the local event source. */
  startConsumer(): Promise<SqsEventSource>;
  /** Side effects recorded so far: key → times. */
  effects(): Map<string, number>;
  /** Messages in the delivery queue: visible + in flight + delayed. */
  queueDepth(queueUrl?: string): Promise<number>;
  /** Reads every message of the DLQ (and leaves them invisible for a while). */
  drainDeadLetters(): Promise<Message[]>;
  enqueueRaw(body: string): Promise<void>;
  /** Claim items of every subscriber by state, keyed by the item's `pk`. */
  claims(): Promise<Map<string, string>>;
  close(): Promise<void>;
}

/**
 * The handlers build their SDK clients from the environment, as in Lambda. fauxqs queue URLs are
 * `http://sqs.<region>.localhost:<port>/…`, and such a client sends each request to the QueueUrl's host:
 * resolve `*.localhost` to loopback in this process.
 */
let restoreDns: (() => void) | undefined;
function setAwsEnvironment(queueUrl: string): void {
  restoreDns ??= interceptLocalhostDns();
  Object.assign(process.env, {
    AWS_REGION: TEST_REGION,
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoDbEndpoint(),
    AWS_ENDPOINT_URL_SQS: new URL(queueUrl).origin,
    // Keep the test output readable: the consumer's per-event info lines are not what these tests check.
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
    POWERTOOLS_METRICS_DISABLED: 'true',
  });
}

export function restoreEnvironment(): void {
  restoreDns?.();
  restoreDns = undefined;
}

export interface EventSourceOptions {
  /** @default 2 */
  readonly pollers?: number;
  /** @default settings.batchSize */
  readonly batchSize?: number;
  readonly onInvocation?: (report: InvocationReport) => void;
  /** Where the event source reports operational problems. @default console.error */
  readonly log?: (line: string) => void;
  /** The event source's SQS client (receives and deletes), e.g. one whose deletes fail. @default a plain one */
  readonly sqs?: SQSClient;
}

export interface ConsumerOptions {
  /** The consumer's DynamoDB client (claims and ledger). @default a plain client on DynamoDB Local */
  readonly documentClient?: DynamoDBDocumentClient;
  /**
   * @default the shipped `webhookHandlers` (which journal every effect) for the single default subscriber;
   * a handler for every kind of event, doing nothing, for the subscribers of {@link PipelineOptions.subscribers}
   */
  readonly handlers?: WebhookHandlers;
  readonly completionRetry?: CompletionRetryPolicy;
}

/** One subscriber of a several-subscriber pipeline, defined as in `bin/subscribers.ts` plus its test wiring. */
export interface SubscriberOptions extends ConsumerOptions {
  readonly name: string;
  /** @default every field */
  readonly fields?: readonly string[];
  /** @default the name; `''` keeps keys unprefixed */
  readonly keyNamespace?: string;
  /** Its settings over the pipeline's, as a subscriber definition's `settings`. */
  readonly settings?: SubscriberSettingsInput;
  /** Its event source's options over the pipeline's. */
  readonly eventSource?: EventSourceOptions;
}

export interface PipelineOptions {
  /** The default subscriber's consumer (without {@link subscribers}). */
  readonly consumer?: ConsumerOptions;
  /**
   * Several subscribers, each with its own queue, DLQ and consumer; every effect its handlers return from is
   * recorded in its own journal. @default one subscriber, `default`, unprefixed, configured by `consumer`
   */
  readonly subscribers?: readonly SubscriberOptions[];
  /**
   * Variables to override in the receiver's environment, given the pipeline's (e.g. queue URLs that go
   * through a fault-injecting proxy). The consumers keep the pipeline's.
   */
  readonly receiverEnv?: (env: Readonly<Record<string, string>>) => Record<string, string>;
}

/**
 * Test pipelines run in compressed time: a failed record comes back within seconds and reaches the DLQ after
 * five receives, so the day-long outage a production budget must ride out is not asked of them.
 */
const COMPRESSED_RETRIES = { maxReceiveCount: 5, retryBaseDelaySeconds: 1, retryMaxDelaySeconds: 4 };

/** A subscriber before its queues exist: names, settings and handlers settled. */
interface SubscriberPlan {
  readonly options: SubscriberOptions;
  readonly keyNamespace: string | undefined;
  readonly settings: PipelineSettings;
  readonly queueName: string;
  readonly journalPath: string;
  readonly handlers: WebhookHandlers;
}

export async function createPipeline(
  label: string,
  settingsInput: PipelineSettingsInput = {},
  eventSource: EventSourceOptions = {},
  options: PipelineOptions = {},
): Promise<Pipeline> {
  const resolve = (input: PipelineSettingsInput) =>
    resolveSettings(
      { maxBatchingWindowSeconds: 0, ...COMPRESSED_RETRIES, ...settingsInput, ...input },
      { outageToRideOutSeconds: 0 },
    );
  const settings = resolve({});
  const dynamodb = createDynamoDbClient();
  const documentClient = createDocumentClient(dynamodb);
  const sqs = createSqsClient();
  const tableName = await createTestClaimTable(dynamodb, label);
  const name = uniqueName(label);
  const directory = mkdtempSync(join(tmpdir(), `pipeline-${label}-`));
  const single = options.subscribers === undefined;

  const plans: SubscriberPlan[] = single
    ? [
        {
          options: { name: DEFAULT_SUBSCRIBER_NAME, ...options.consumer },
          keyNamespace: undefined,
          settings,
          queueName: name,
          journalPath: join(directory, 'effects.journal'),
          handlers: options.consumer?.handlers ?? webhookHandlers,
        },
      ]
    : (options.subscribers ?? []).map((subscriber) => {
        const journalPath = join(directory, `effects-${subscriber.name}.journal`);
        const keyNamespace = subscriber.keyNamespace ?? subscriber.name;
        return {
          options: subscriber,
          keyNamespace: keyNamespace === '' ? undefined : keyNamespace,
          settings: resolve(subscriber.settings ?? {}),
          queueName: `${name}-${subscriber.name}`,
          journalPath,
          handlers: journaled(subscriber.handlers ?? HANDLE_EVERY_KIND, journalPath),
        };
      });
  if (plans.length === 0) throw new Error('subscribers is empty: give at least one, or leave it out.');

  const queuesOf = await Promise.all(
    plans.map((plan) =>
      createPipelineQueues(sqs, plan.settings, {
        deliveryQueueName: plan.queueName,
        deadLetterQueueName: `${plan.queueName}-dlq`,
      }),
    ),
  );
  const firstQueues = queuesOf[0] as PipelineQueues;
  const quarantineQueueUrl = single
    ? firstQueues.dlqUrl
    : await createQuarantineQueue(sqs, settings, `${name}-quarantine`);
  setAwsEnvironment(firstQueues.queueUrl);
  // The shipped handler (and the example subscriber modules) journal where this variable says, when they run;
  // one pipeline runs at a time per test file. Several subscribers each get their own journal instead (below).
  process.env[ENV.effectsJournal] = single
    ? (plans[0] as SubscriberPlan).journalPath
    : join(directory, 'modules.journal');

  const receiverEnv = receiverEnvironment({
    subscriberQueues: plans.map(
      (plan, index): SubscriberQueue => ({
        name: plan.options.name,
        queueUrl: (queuesOf[index] as PipelineQueues).queueUrl,
        fields: plan.options.fields,
      }),
    ),
    quarantineQueueUrl,
    maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
    webhookSecrets: { appSecrets: [APP_SECRET, SECOND_APP_SECRET], verifyToken: VERIFY_TOKEN },
  });
  const receiver = createReceiverHandler({
    ...process.env,
    ...receiverEnv,
    ...options.receiverEnv?.(receiverEnv),
  });
  const sources: SqsEventSource[] = [];
  const namespaces = plans.map((plan) => plan.keyNamespace).filter((ns) => ns !== undefined);

  const subscribers = plans.map((plan, index): PipelineSubscriber => {
    const queues = queuesOf[index] as PipelineQueues;
    const subscriberSettings = plan.settings;
    const env = consumerEnvironment({
      tableName,
      keyNamespace: plan.keyNamespace,
      subscriberName: plan.options.name,
      fields: plan.options.fields,
      quarantineQueueUrl,
      deliveryQueueUrl: queues.queueUrl,
      retentionDays: subscriberSettings.retentionDays,
      leaseMarginMs: subscriberSettings.leaseMarginMs,
      maximumMessageSizeBytes: subscriberSettings.maximumMessageSizeBytes,
      retryBaseDelaySeconds: subscriberSettings.retryBaseDelaySeconds,
      retryMaxDelaySeconds: subscriberSettings.retryMaxDelaySeconds,
      ...(single ? { effectsJournal: plan.journalPath } : {}),
    });
    // The consumer reads its configuration from the same variables as in Lambda.
    const consumer = createConsumerHandler(consumerConfigFromEnv(env), {
      documentClient: plan.options.documentClient ?? documentClient,
      sqs,
      handlers: plan.handlers,
      completionRetry: plan.options.completionRetry,
    });
    const ownKey = (pk: string): string | undefined => {
      if (plan.keyNamespace !== undefined) {
        const prefix = `${plan.keyNamespace}#`;
        return pk.startsWith(prefix) ? pk.slice(prefix.length) : undefined;
      }
      return namespaces.some((ns) => pk.startsWith(`${ns}#`)) ? undefined : pk;
    };
    return {
      name: plan.options.name,
      keyNamespace: plan.keyNamespace,
      fields: plan.options.fields,
      settings: subscriberSettings,
      queues,
      journalPath: plan.journalPath,
      env,

      async startConsumer(overrides = {}) {
        const chosen = { ...eventSource, ...plan.options.eventSource, ...overrides };
        const source = createSqsEventSource({
          sqs: chosen.sqs ?? sqs,
          queueUrl: queues.queueUrl,
          handler: consumer,
          batchSize: chosen.batchSize ?? subscriberSettings.batchSize,
          maxBatchingWindowSeconds: subscriberSettings.maxBatchingWindowSeconds,
          functionTimeoutSeconds: subscriberSettings.consumerTimeoutSeconds,
          pollers: chosen.pollers ?? 2,
          waitTimeSeconds: 1,
          functionName: `consumer-${plan.options.name}`,
          onInvocation: chosen.onInvocation,
          log: chosen.log,
        });
        await source.start();
        sources.push(source);
        return source;
      },

      effects: () => readEffects(plan.journalPath),
      queueDepth: async () => totalMessages(await readQueueCounts(sqs, queues.queueUrl)),
      deadLetterDepth: async () => totalMessages(await readQueueCounts(sqs, queues.dlqUrl)),
      drainDeadLetters: () => drainQueue(sqs, queues.dlqUrl),

      async enqueueRaw(body) {
        await sqs.send(new SendMessageCommand({ QueueUrl: queues.queueUrl, MessageBody: body }));
      },

      async claims() {
        const own = new Map<string, string>();
        for (const [pk, state] of await claimStates(documentClient, tableName)) {
          const key = ownKey(pk);
          if (key !== undefined) own.set(key, state);
        }
        return own;
      },
    };
  });
  const first = subscribers[0] as PipelineSubscriber;

  return {
    settings,
    tableName,
    queues: first.queues,
    journalPath: first.journalPath,
    env: { ...receiverEnv, ...first.env },
    subscribers,
    subscriber(wanted) {
      const found = subscribers.find((subscriber) => subscriber.name === wanted);
      if (found === undefined) throw new Error(`No subscriber ${wanted} in this pipeline.`);
      return found;
    },
    quarantineQueueUrl,
    drainQuarantine: () => drainQueue(sqs, quarantineQueueUrl),

    async post(body, postOptions = {}) {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
      const signature = postOptions.signature === undefined ? sign(bytes) : postOptions.signature;
      const rawHeaders = ['content-type', 'application/json', 'user-agent', 'facebookexternalua'];
      if (signature !== null) rawHeaders.push('X-Hub-Signature-256', signature);
      const event: APIGatewayProxyEventV2 = toApiGatewayV2Event({
        method: 'POST',
        url: '/webhook',
        rawHeaders,
        body: bytes,
      });
      return (await receiver(event)) as APIGatewayProxyStructuredResultV2;
    },

    startConsumer: () => first.startConsumer(),
    effects: () => first.effects(),
    async queueDepth(queueUrl = first.queues.queueUrl) {
      return totalMessages(await readQueueCounts(sqs, queueUrl));
    },
    drainDeadLetters: () => first.drainDeadLetters(),
    enqueueRaw: (body) => first.enqueueRaw(body),
    claims: () => claimStates(documentClient, tableName),

    async close() {
      await Promise.all(sources.map((source) => source.stop()));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A handler for every kind of event that does nothing but succeed (the journal records it). */
const HANDLE_EVERY_KIND: WebhookHandlers = {
  onMessage: () => undefined,
  onStatus: () => undefined,
  onError: () => undefined,
  onManagementEvent: () => undefined,
};

/** `handlers` with each call that returns recorded in `journalPath` as one effect. */
function journaled(handlers: WebhookHandlers, journalPath: string): WebhookHandlers {
  const wrap = <C extends WebhookEventContext>(
    handler: WebhookHandler<C> | undefined,
  ): WebhookHandler<C> | undefined =>
    handler === undefined
      ? undefined
      : async (context: C) => {
          await handler(context);
          // Synchronous: once the consumer completes the claim, the effect is in the file.
          appendFileSync(journalPath, `${context.key}\n`);
        };
  return {
    ...(handlers.onMessage && { onMessage: wrap(handlers.onMessage) }),
    ...(handlers.onStatus && { onStatus: wrap(handlers.onStatus) }),
    ...(handlers.onError && { onError: wrap(handlers.onError) }),
    ...(handlers.onManagementEvent && { onManagementEvent: wrap(handlers.onManagementEvent) }),
    ...(handlers.onGroupEvent && { onGroupEvent: wrap(handlers.onGroupEvent) }),
  };
}

async function drainQueue(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  const messages: Message[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        VisibilityTimeout: 60,
      }),
    );
    if (Messages.length === 0) return messages;
    messages.push(...Messages);
  }
}

/** Claim items of the table by state, keyed by `pk` (ledger items have no state and are left out). */
async function claimStates(
  documentClient: DynamoDBDocumentClient,
  tableName: string,
): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documentClient.send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    for (const item of page.Items ?? []) {
      if (typeof item.state === 'string') states.set(String(item.pk), item.state);
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return states;
}

export function readEffects(journalPath: string): Map<string, number> {
  const counts = new Map<string, number>();
  let text = '';
  try {
    text = readFileSync(journalPath, 'utf8');
  } catch {
    return counts;
  }
  for (const key of text.split('\n')) {
    if (key !== '') counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}
