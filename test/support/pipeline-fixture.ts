/**
 * One pipeline on the shared emulators, for the end-to-end and reliability tests: its own claim table and
 * queues, the REAL receiver handler (`createReceiverHandler`, configured from env as in Lambda) fed signed API
 * Gateway v2 events, and the REAL consumer wiring (`createConsumerHandler` with the shipped `webhookHandlers`,
 * whose local effects journal records every side effect) driven by the local SQS event source.
 *
 * The reliability tests swap in the consumer's own DynamoDB client (with a fault-injecting middleware) or
 * wrap its handlers through {@link ConsumerOptions}; by default the consumer is wired as in Lambda.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { interceptLocalhostDns } from 'fauxqs';
import { consumerEnvironment, ENV, receiverEnvironment } from '../../contract/environment.ts';
import {
  type PipelineSettings,
  type PipelineSettingsInput,
  resolveSettings,
} from '../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../contract/subscribers.ts';
import type { CompletionRetryPolicy } from '../../functions/consumer/complete-with-retry.ts';
import { consumerConfigFromEnv, createConsumerHandler } from '../../functions/consumer/create-consumer.ts';
import type { WebhookHandlers } from '../../functions/consumer/handler-api.ts';
import { signBody } from '../../functions/receiver/signature.ts';
import { createReceiverHandler } from '../../functions/receiver.ts';
import { webhookHandlers } from '../../functions/webhook-handlers.ts';
import { createPipelineQueues, type PipelineQueues } from '../../local/emulators/sqs.ts';
import { toApiGatewayV2Event } from '../../local/http/api-gateway-v2.ts';
import { readQueueCounts, totalMessages } from '../../local/queue-counts.ts';
import {
  createSqsEventSource,
  type InvocationReport,
  type SqsEventSource,
} from '../../local/sqs-event-source.ts';
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

export interface Pipeline {
  readonly settings: PipelineSettings;
  readonly tableName: string;
  readonly queues: PipelineQueues;
  readonly journalPath: string;
  /** The environment the handlers read (also for a child process). */
  readonly env: Record<string, string>;
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
  /** Claim items by state. */
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
}

export interface ConsumerOptions {
  /** The consumer's DynamoDB client (claims and ledger). @default a plain client on DynamoDB Local */
  readonly documentClient?: DynamoDBDocumentClient;
  /** @default the shipped `webhookHandlers` (which journal every effect) */
  readonly handlers?: WebhookHandlers;
  readonly completionRetry?: CompletionRetryPolicy;
}

export interface PipelineOptions {
  readonly consumer?: ConsumerOptions;
  /**
   * Variables to override in the receiver's environment, given the pipeline's (e.g. queue URLs that go
   * through a fault-injecting proxy). The consumer keeps the pipeline's.
   */
  readonly receiverEnv?: (env: Readonly<Record<string, string>>) => Record<string, string>;
}

/**
 * Test pipelines run in compressed time: a failed record comes back within seconds and reaches the DLQ after
 * five receives, so the day-long outage a production budget must ride out is not asked of them.
 */
const COMPRESSED_RETRIES = { maxReceiveCount: 5, retryBaseDelaySeconds: 1, retryMaxDelaySeconds: 4 };

export async function createPipeline(
  label: string,
  settingsInput: PipelineSettingsInput = {},
  eventSource: EventSourceOptions = {},
  options: PipelineOptions = {},
): Promise<Pipeline> {
  const consumerOptions = options.consumer ?? {};
  const settings = resolveSettings(
    { maxBatchingWindowSeconds: 0, ...COMPRESSED_RETRIES, ...settingsInput },
    { outageToRideOutSeconds: 0 },
  );
  const dynamodb = createDynamoDbClient();
  const documentClient = createDocumentClient(dynamodb);
  const sqs = createSqsClient();
  const tableName = await createTestClaimTable(dynamodb, label);
  const name = uniqueName(label);
  const queues = await createPipelineQueues(sqs, settings, {
    deliveryQueueName: name,
    deadLetterQueueName: `${name}-dlq`,
  });
  const directory = mkdtempSync(join(tmpdir(), `pipeline-${label}-`));
  const journalPath = join(directory, 'effects.journal');
  setAwsEnvironment(queues.queueUrl);

  const env: Record<string, string> = {
    ...receiverEnvironment({
      subscriberQueues: [{ name: DEFAULT_SUBSCRIBER_NAME, queueUrl: queues.queueUrl }],
      quarantineQueueUrl: queues.dlqUrl,
      maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
      webhookSecrets: { appSecrets: [APP_SECRET, SECOND_APP_SECRET], verifyToken: VERIFY_TOKEN },
    }),
    ...consumerEnvironment({
      tableName,
      subscriberName: DEFAULT_SUBSCRIBER_NAME,
      quarantineQueueUrl: queues.dlqUrl,
      deliveryQueueUrl: queues.queueUrl,
      retentionDays: settings.retentionDays,
      leaseMarginMs: settings.leaseMarginMs,
      maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
      retryBaseDelaySeconds: settings.retryBaseDelaySeconds,
      retryMaxDelaySeconds: settings.retryMaxDelaySeconds,
      effectsJournal: journalPath,
    }),
  };
  // The default handler reads the journal path when it runs; one pipeline runs at a time per test file.
  process.env[ENV.effectsJournal] = journalPath;
  const receiver = createReceiverHandler({ ...process.env, ...env, ...options.receiverEnv?.(env) });
  // The consumer reads its configuration from the same variables as in Lambda.
  const consumer = createConsumerHandler(consumerConfigFromEnv(env), {
    documentClient: consumerOptions.documentClient ?? documentClient,
    sqs,
    handlers: consumerOptions.handlers ?? webhookHandlers,
    ...(consumerOptions.completionRetry === undefined
      ? {}
      : { completionRetry: consumerOptions.completionRetry }),
  });
  const sources: SqsEventSource[] = [];

  return {
    settings,
    tableName,
    queues,
    journalPath,
    env,

    async post(body, options = {}) {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
      const signature = options.signature === undefined ? sign(bytes) : options.signature;
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

    async startConsumer() {
      const source = createSqsEventSource({
        sqs,
        queueUrl: queues.queueUrl,
        handler: consumer,
        batchSize: eventSource.batchSize ?? settings.batchSize,
        maxBatchingWindowSeconds: settings.maxBatchingWindowSeconds,
        functionTimeoutSeconds: settings.consumerTimeoutSeconds,
        pollers: eventSource.pollers ?? 2,
        waitTimeSeconds: 1,
        ...(eventSource.onInvocation === undefined ? {} : { onInvocation: eventSource.onInvocation }),
        ...(eventSource.log === undefined ? {} : { log: eventSource.log }),
      });
      await source.start();
      sources.push(source);
      return source;
    },

    effects: () => readEffects(journalPath),

    async queueDepth(queueUrl = queues.queueUrl) {
      return totalMessages(await readQueueCounts(sqs, queueUrl));
    },

    async drainDeadLetters() {
      const messages: Message[] = [];
      for (;;) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queues.dlqUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 0,
            MessageAttributeNames: ['All'],
            VisibilityTimeout: 60,
          }),
        );
        if (Messages.length === 0) return messages;
        messages.push(...Messages);
      }
    },

    async enqueueRaw(body) {
      await sqs.send(new SendMessageCommand({ QueueUrl: queues.queueUrl, MessageBody: body }));
    },

    async claims() {
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
    },

    async close() {
      await Promise.all(sources.map((source) => source.stop()));
      rmSync(directory, { recursive: true, force: true });
    },
  };
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
