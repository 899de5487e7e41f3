/** A consumer wired exactly as in Lambda, over clients that `aws-sdk-client-mock` replaces. */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, type SendMessageBatchCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../contract/metric-names.ts';
import { DEFAULT_SETTINGS } from '../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../contract/subscribers.ts';
import { type ConsumerConfig, createConsumerHandler } from '../../functions/consumer/create-consumer.ts';
import type { WebhookHandlers } from '../../functions/consumer/handler-api.ts';

export const DLQ_URL = 'http://sqs.eu-west-1.localhost/000000000000/webhook-dlq';
export const DELIVERY_QUEUE_URL = 'http://sqs.eu-west-1.localhost/000000000000/webhook-deliveries';

const CONFIG: ConsumerConfig = {
  tableName: 'claims',
  keyNamespace: undefined,
  subscriberName: DEFAULT_SUBSCRIBER_NAME,
  fields: undefined,
  quarantineQueueUrl: DLQ_URL,
  deliveryQueueUrl: DELIVERY_QUEUE_URL,
  retentionDays: 8,
  leaseMarginMs: 10_000,
  maximumMessageSizeBytes: 256 * 1024,
  statusLedger: 'with-handler',
  claimUnhandledEvents: true,
  retryBaseDelaySeconds: DEFAULT_SETTINGS.retryBaseDelaySeconds,
  retryMaxDelaySeconds: DEFAULT_SETTINGS.retryMaxDelaySeconds,
};

/** A consumer configuration for tests; only what a test cares about needs overriding. */
export function testConsumerConfig(overrides: Partial<ConsumerConfig> = {}): ConsumerConfig {
  return { ...CONFIG, ...overrides };
}

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

export function createHarness(
  handlers: WebhookHandlers,
  config: Partial<ConsumerConfig> = {},
  options: { readonly logLevel?: 'INFO' | 'DEBUG' } = {},
) {
  const documentClient = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'eu-west-1', credentials }),
  );
  const sqs = new SQSClient({ region: 'eu-west-1', credentials });
  const dynamodb = mockClient(documentClient);
  const queue = mockClient(sqs);
  queue.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => ({
    Successful: (input.Entries ?? []).map((entry) => ({
      Id: entry.Id,
      MessageId: `dlq-${entry.Id}`,
      MD5OfMessageBody: '',
    })),
    Failed: [],
  }));
  const handler = createConsumerHandler(testConsumerConfig(config), {
    documentClient,
    sqs,
    handlers,
    logger: new Logger({ serviceName: SERVICE_NAME, logLevel: options.logLevel ?? 'DEBUG' }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
    completionRetry: { retries: 2, baseDelayMs: 1, deadlineReserveMs: 0 },
  });
  const invoke = (event: SQSEvent) => handler(event, { getRemainingTimeInMillis: () => 30_000 });
  return { dynamodb, queue, invoke };
}

/**
 * The claim's `PutItem` refused as DynamoDB refuses it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`): the
 * item another queue message holds, `done` or `processing` under a lease of `leaseMs` from now.
 */
export function claimHeldElsewhere(
  state: 'done' | 'processing',
  leaseMs = 20_000,
): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    Item: {
      state: { S: state },
      owner: { S: 'someone' },
      leaseUntil: { N: String(Date.now() + leaseMs) },
      messageId: { S: 'another-message' },
    },
  });
}

export function sqsRecord(body: string, messageId: string): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '1749416383000',
      SenderId: '000000000000',
      ApproximateFirstReceiveTimestamp: '1749416383000',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:webhook-deliveries',
    awsRegion: 'eu-west-1',
  };
}

export function sqsEvent(...records: [messageId: string, body: string][]): SQSEvent {
  return { Records: records.map(([messageId, body]) => sqsRecord(body, messageId)) };
}

/**
 * Everything written to stdout and stderr (Powertools logs, warnings and errors go to stderr, EMF documents
 * to stdout) while `run` runs, as lines.
 */
export async function captureOutput<T>(run: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  const chunks: string[] = [];
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((stream) => stream.write);
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array, ..._rest: unknown[]) => {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof stream.write;
  }
  try {
    const result = await run();
    return {
      result,
      lines: chunks
        .join('')
        .split('\n')
        .filter((line) => line.trim() !== ''),
    };
  } finally {
    streams.forEach((stream, index) => {
      stream.write = originals[index] as typeof stream.write;
    });
  }
}

export interface EmfDocument {
  readonly dimensions: string[][];
  readonly values: Record<string, unknown>;
}

/** The EMF documents among captured lines. */
export function emfDocuments(lines: readonly string[]): EmfDocument[] {
  const documents: EmfDocument[] = [];
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    const parsed = JSON.parse(line) as Record<string, unknown> & {
      _aws?: { CloudWatchMetrics: { Dimensions: string[][] }[] };
    };
    if (parsed._aws === undefined) continue;
    documents.push({ dimensions: parsed._aws.CloudWatchMetrics[0]?.Dimensions ?? [], values: parsed });
  }
  return documents;
}

/** Sums a metric over the EMF documents whose `Field` is `field` (undefined: documents without `Field`). */
export function metricValue(documents: readonly EmfDocument[], name: string, field?: string): number {
  let total = 0;
  for (const document of documents) {
    if (document.values.Field !== field) continue;
    const value = document.values[name];
    if (typeof value === 'number') total += value;
  }
  return total;
}
