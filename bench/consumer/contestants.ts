/**
 * The two consumers the benchmark compares, each built the way its documentation says, over the same
 * DynamoDB Local, with the same trivial side effect (count the message's wamid in an in-memory sink).
 *
 * - `ours`: the consumer Lambda's own wiring (what `createConsumerFromEnv` does: `createConsumerHandler` from
 *   `consumerConfigFromEnv`, the Powertools logger with the Lambda context, metrics), messages only.
 * - `powertools`: Powertools' "Idempotency with batch processing" recipe: `makeIdempotent` on the record
 *   handler, `eventKeyJmesPath` selecting the wamid out of the JSON body, `DynamoDBPersistenceLayer`,
 *   `BatchProcessor` + `processPartialResponse`, and `config.registerLambdaContext(context)` per invocation.
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
import { createClaimTable } from '../../functions/claims/claim-table.ts';
import { ENV } from '../../functions/commons/environment.ts';
import {
  consumerConfigFromEnv,
  createConsumerHandler,
  createConsumerLogger,
  createConsumerMetrics,
} from '../../functions/consumer/create-consumer.ts';
import { defineWebhookHandlers } from '../../functions/consumer/handler-api.ts';
import { countRequests, type RequestCounter } from '../../test/support/request-counter.ts';
import { type LatencyRecorder, recordLatency } from '../support/request-latency.ts';
import type { SqsBatchHandler } from './in-memory-event-source.ts';

export type ContestantName = 'ours' | 'powertools';

/** The side effect both consumers run: one count per message wamid. */
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
}

export interface Container {
  readonly handler: SqsBatchHandler;
  readonly requests: RequestCounter;
  readonly latency: LatencyRecorder;
}

export interface Contestant {
  readonly name: ContestantName;
  createTable(client: DynamoDBClient, tableName: string): Promise<void>;
  createContainer(dependencies: ContainerDependencies): Container;
}

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

function dynamoDbClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: REGION, credentials: CREDENTIALS });
}

export function adminClient(endpoint: string): DynamoDBClient {
  return dynamoDbClient(endpoint);
}

export async function deleteTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(new DeleteTableCommand({ TableName: tableName }));
}

export const ours: Contestant = {
  name: 'ours',
  createTable: (client, tableName) => createClaimTable(client, tableName),
  createContainer({ endpoint, tableName, sink }) {
    const client = dynamoDbClient(endpoint);
    const requests = countRequests(client);
    const latency = recordLatency(client);
    // The variables the CDK construct sets; retention and lease margin take the construct's defaults.
    const config = consumerConfigFromEnv({
      [ENV.claimTableName]: tableName,
      // Never called: every benchmark body is a valid envelope, so nothing is quarantined.
      [ENV.deadLetterQueueUrl]: 'http://127.0.0.1:9/000000000000/bench-dlq',
    });
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
      requests,
      latency,
    };
  },
};

/** The wamid of the body's first message: Powertools' idempotency key for one record. */
export const POWERTOOLS_EVENT_KEY = 'powertools_json(body).entry[0].changes[0].value.messages[0].id';

/** Powertools' recipe with the idempotency key taken by `eventKeyJmesPath` (see {@link POWERTOOLS_EVENT_KEY}). */
export function powertoolsKeyedOn(eventKeyJmesPath: string): Contestant {
  return {
    name: 'powertools',
    // The table of Powertools' documentation: partition key `id`, TTL on `expiration`, on demand.
    async createTable(client, tableName) {
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
    },
    createContainer({ endpoint, tableName, sink }) {
      const client = dynamoDbClient(endpoint);
      const requests = countRequests(client);
      const latency = recordLatency(client);
      const processor = new BatchProcessor(EventType.SQS);
      const persistenceStore = new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client });
      const config = new IdempotencyConfig({ eventKeyJmesPath });
      const processIdempotently = makeIdempotent(
        async (record: SQSRecord) => {
          const body = JSON.parse(record.body) as WebhookBody;
          for (const entry of body.entry ?? []) {
            for (const change of entry.changes ?? []) {
              for (const message of change.value?.messages ?? []) sink.record(message.id);
            }
          }
        },
        { persistenceStore, config },
      );
      return {
        handler: async (event, context): Promise<SQSBatchResponse> => {
          config.registerLambdaContext(context);
          return processPartialResponse(event, processIdempotently, processor, { context });
        },
        requests,
        latency,
      };
    },
  };
}

export const powertools = powertoolsKeyedOn(POWERTOOLS_EVENT_KEY);

/** Every wamid of the body, as a list: one key per distinct set of messages. */
export const POWERTOOLS_ALL_WAMIDS_KEY = 'powertools_json(body).entry[].changes[].value.messages[].id';

interface WebhookBody {
  entry?: { changes?: { value?: { messages?: { id: string }[] } }[] }[];
}
