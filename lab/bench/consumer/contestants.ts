/**
 * The consumers the benchmark compares, each built the way its documentation says, over the same
 * DynamoDB Local, with the same trivial side effect (count the message's wamid in an in-memory sink).
 *
 * - `ours`: the consumer Lambda's own wiring (what `createConsumerFromEnv` does: `createConsumerHandler` from
 *   `consumerConfigFromEnv`, the Powertools logger with the Lambda context, metrics), messages only.
 * - `powertools`: Powertools' "Idempotency with batch processing" recipe: `makeIdempotent` on the record
 *   handler, `eventKeyJmesPath` selecting the wamid out of the JSON body, `DynamoDBPersistenceLayer`,
 *   `BatchProcessor` + `processPartialResponse`, and `config.registerLambdaContext(context)` per invocation.
 * - `contractFloor`: not a consumer but a yardstick: docs/design.md §2's requests for the batch and nothing else (the
 *   claim store's `claimMany`, then `complete` for each fresh claim; no logging, metrics, batch processor,
 *   ledger or error handling). No consumer that writes what the contract prescribes runs faster on this
 *   DynamoDB Local, so `contractFloor / powertools` bounds the speedup any design could show here.
 *
 * - `powertoolsPerMessage` (bot mix and re-batched probe): Powertools' best use for multi-event bodies,
 *   `makeIdempotent` around the per-message function, keyed on the message id (`eventKeyJmesPath: 'id'`),
 *   called for each message of the record; statuses, which no handler wants, never reach it.
 *
 * Each call of `createContainer` is one warm Lambda container: its own clients, processor and state.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { createClaimTable } from '../../../cli/local/emulators/claim-table.ts';
import { consumerEnvironment } from '../../../contract/environment.ts';
import { resolveSettings } from '../../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../../contract/subscribers.ts';
import { ClaimStore, isHeld } from '../../../functions/claims/claim-store.ts';
import { deadlineFromRemainingTime } from '../../../functions/claims/lease.ts';
import {
  consumerConfigFromEnv,
  createConsumerHandler,
  createConsumerLogger,
  createConsumerMetrics,
} from '../../../functions/consumer/create-consumer.ts';
import { defineWebhookHandlers } from '../../../functions/consumer/handler-api.ts';
import { type CapacityMeter, meterCapacity } from '../support/consumed-capacity.ts';
import { countRequests, type RequestCounter } from '../support/request-counter.ts';
import { addRoundTrip, type LatencyRecorder, recordLatency } from '../support/request-latency.ts';
import type { SqsBatchHandler } from './in-memory-event-source.ts';

/** The side effect every contestant runs: one count per message wamid. */
export class EffectSink {
  readonly #counts = new Map<string, number>();
  #total = 0;

  record(wamid: string): void {
    this.#counts.set(wamid, (this.#counts.get(wamid) ?? 0) + 1);
    this.#total++;
  }

  get total(): number {
    return this.#total;
  }

  /** Wamids effected more than once. */
  repeated(): string[] {
    return [...this.#counts].filter(([, count]) => count > 1).map(([wamid]) => wamid);
  }

  has(wamid: string): boolean {
    return this.#counts.has(wamid);
  }
}

export interface ContainerDependencies {
  readonly endpoint: string;
  readonly tableName: string;
  readonly sink: EffectSink;
  /** Network added to every DynamoDB request (see `addRoundTrip`). @default 0 */
  readonly addedRoundTripMs?: number;
}

export interface Container {
  readonly handler: SqsBatchHandler;
  readonly requests: RequestCounter;
  readonly latency: LatencyRecorder;
  readonly capacity: CapacityMeter;
}

export interface Contestant {
  readonly name: string;
  createTable(client: DynamoDBClient, tableName: string): Promise<void>;
  createContainer(dependencies: ContainerDependencies): Container;
}

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

function dynamoDbClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: REGION, credentials: CREDENTIALS });
}

/** A container's client, with the middleware that counts and times its requests. */
function measuredClient({ endpoint, addedRoundTripMs = 0 }: ContainerDependencies): {
  client: DynamoDBClient;
  measures: Pick<Container, 'requests' | 'latency' | 'capacity'>;
} {
  const client = dynamoDbClient(endpoint);
  const measures = {
    requests: countRequests(client),
    latency: recordLatency(client),
    capacity: meterCapacity(client),
  };
  if (addedRoundTripMs > 0) addRoundTrip(client, addedRoundTripMs);
  return { client, measures };
}

export function adminClient(endpoint: string): DynamoDBClient {
  return dynamoDbClient(endpoint);
}

export async function deleteTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(new DeleteTableCommand({ TableName: tableName }));
}

/** Our consumer with the construct's defaults, or with `claimUnhandledEvents: false`. */
export function oursWith(
  name: string,
  settingsOverride: { claimUnhandledEvents?: boolean } = {},
): Contestant {
  return {
    name,
    createTable: (client, tableName) => createClaimTable(client, tableName),
    createContainer: (dependencies) => oursContainer(dependencies, settingsOverride),
  };
}

export const ours = oursWith('ours');

function oursContainer(
  dependencies: ContainerDependencies,
  settingsOverride: { claimUnhandledEvents?: boolean },
): Container {
  const { tableName, sink } = dependencies;
  const { client, measures } = measuredClient(dependencies);
  const settings = resolveSettings();
  const config = consumerConfigFromEnv(
    consumerEnvironment({
      tableName,
      // Never called: every benchmark body is a valid envelope, so nothing is quarantined.
      subscriberName: DEFAULT_SUBSCRIBER_NAME,
      quarantineQueueUrl: 'http://127.0.0.1:9/000000000000/bench-quarantine',
      deliveryQueueUrl: 'http://127.0.0.1:9/000000000000/bench-deliveries',
      retentionDays: settings.retentionDays,
      leaseMarginMs: settings.leaseMarginMs,
      maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
      ...settingsOverride,
    }),
  );
  // What createConsumerFromEnv (the consumer Lambda's wiring) does, with our own clients: they carry the
  // counting middleware, where the Lambda builds its clients from the environment.
  const logger = createConsumerLogger();
  const consume = createConsumerHandler(config, {
    documentClient: DynamoDBDocumentClient.from(client),
    sqs: new SQSClient({ endpoint: 'http://127.0.0.1:9', region: REGION, credentials: CREDENTIALS }),
    handlers: defineWebhookHandlers({ onMessage: ({ payload }) => sink.record(String(payload.id)) }),
    logger,
    metrics: createConsumerMetrics(),
  });
  return {
    handler: (event, context) => {
      logger.addContext(context);
      return consume(event, context);
    },
    ...measures,
  };
}

/** The wamid of the body's first message: Powertools' idempotency key for one record. */
export const POWERTOOLS_EVENT_KEY = 'powertools_json(body).entry[0].changes[0].value.messages[0].id';

/**
 * The event of a body holding one event of either kind: `[wamid, null, null]` for a message, `[null, wamid,
 * status]` for a status. Keyed on the message wamid alone, Powertools would skip idempotency for every status
 * (it does when the key selects nothing and `throwOnNoIdempotencyKey` is off), so that this per-record recipe
 * would not deduplicate the statuses at all.
 */
export const POWERTOOLS_ANY_EVENT_KEY =
  'powertools_json(body).entry[0].changes[0].value.[messages[0].id, statuses[0].id, statuses[0].status]';

/** The table of Powertools' documentation: partition key `id`, TTL on `expiration`, on demand. */
async function createPowertoolsTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
    }),
  );
}

/** Powertools' recipe with the idempotency key taken by `eventKeyJmesPath` (see {@link POWERTOOLS_EVENT_KEY}). */
export function powertoolsKeyedOn(eventKeyJmesPath: string, name = 'powertools'): Contestant {
  return {
    name,
    createTable: createPowertoolsTable,
    createContainer(dependencies) {
      const { tableName, sink } = dependencies;
      const { client, measures } = measuredClient(dependencies);
      const processor = new BatchProcessor(EventType.SQS);
      const persistenceStore = new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client });
      const config = new IdempotencyConfig({ eventKeyJmesPath });
      const processIdempotently = makeIdempotent(
        async (record: SQSRecord) => {
          for (const message of messagesOf(JSON.parse(record.body) as WebhookBody)) sink.record(message.id);
        },
        { persistenceStore, config },
      );
      return {
        handler: async (event, context): Promise<SQSBatchResponse> => {
          config.registerLambdaContext(context);
          return processPartialResponse(event, processIdempotently, processor, { context });
        },
        ...measures,
      };
    },
  };
}

export const powertools = powertoolsKeyedOn(POWERTOOLS_EVENT_KEY);

export const powertoolsPerMessage: Contestant = {
  name: 'powertoolsPerMessage',
  createTable: createPowertoolsTable,
  createContainer(dependencies) {
    const { tableName, sink } = dependencies;
    const { client, measures } = measuredClient(dependencies);
    const processor = new BatchProcessor(EventType.SQS);
    const persistenceStore = new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client });
    const config = new IdempotencyConfig({ eventKeyJmesPath: 'id' });
    const processMessage = makeIdempotent(
      async (message: { id: string }) => {
        sink.record(message.id);
      },
      { persistenceStore, config },
    );
    const processRecord = async (record: SQSRecord) => {
      for (const message of messagesOf(JSON.parse(record.body) as WebhookBody)) await processMessage(message);
    };
    return {
      handler: async (event, context): Promise<SQSBatchResponse> => {
        config.registerLambdaContext(context);
        return processPartialResponse(event, processRecord, processor, { context });
      },
      ...measures,
    };
  },
};

export const contractFloor: Contestant = {
  name: 'contractFloor',
  createTable: (client, tableName) => createClaimTable(client, tableName),
  createContainer(dependencies) {
    const { tableName, sink } = dependencies;
    const { client, measures } = measuredClient(dependencies);
    const claims = new ClaimStore({ documentClient: DynamoDBDocumentClient.from(client), tableName });
    return {
      handler: async (event, context) => {
        const messages = event.Records.flatMap((record) =>
          messagesOf(JSON.parse(record.body) as WebhookBody),
        );
        const results = await claims.claimMany(
          messages.map((message) => ({ key: `msg:${message.id}`, field: 'messages' })),
          { deadlineMs: deadlineFromRemainingTime(Date.now(), context.getRemainingTimeInMillis()) },
        );
        await Promise.all(
          results.filter(isHeld).map(async (claim) => {
            sink.record(claim.key.slice('msg:'.length));
            await claims.complete(claim);
          }),
        );
        return { batchItemFailures: [] };
      },
      ...measures,
    };
  },
};

function messagesOf(body: WebhookBody): { id: string }[] {
  return (body.entry ?? []).flatMap((entry) =>
    (entry.changes ?? []).flatMap((change) => change.value?.messages ?? []),
  );
}

/** Every wamid of the body, as a list: one key per distinct set of messages. */
export const POWERTOOLS_ALL_WAMIDS_KEY = 'powertools_json(body).entry[].changes[].value.messages[].id';

interface WebhookBody {
  entry?: { changes?: { value?: { messages?: { id: string }[] } }[] }[];
}
