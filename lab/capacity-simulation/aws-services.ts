/**
 * The SQS and DynamoDB the real code talks to at scale: real SDK v3 clients whose requests a middleware hands
 * to these models after a drawn latency, instead of the network (as ../simulated-clients.ts does for the
 * protocol simulator). DynamoDB requests go through the claim table's throughput (dynamodb-throughput.ts); a
 * throttled write is retried as the SDK's standard retry mode does, `maxAttempts` of
 * functions/commons/sdk-client-config.ts, then fails into the real code.
 */
import { createHash } from 'node:crypto';
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import {
  type ChangeMessageVisibilityBatchRequestEntry,
  type SendMessageBatchRequestEntry,
  type ServiceOutputTypes,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import { SDK_TIMEOUTS } from '../../functions/commons/sdk-client-config.ts';
import type { DynamoDbModel } from '../protocol-checker/dynamodb/dynamodb-model.ts';
import {
  type ModelRequest,
  modelDocumentClient,
} from '../protocol-checker/dynamodb/model-document-client.ts';
import { withoutWireMiddlewares } from '../protocol-checker/sdk-wire.ts';
import type { Engine } from '../virtual-time/engine.ts';
import type { TableThroughput } from './dynamodb-throughput.ts';
import { FifoLaneQueue, type LaneQueue, StandardLaneQueue } from './lane-queues.ts';
import type { Latency } from './latency.ts';

type Output = Record<string, unknown>;

/** The queues by URL, and what went to a DLQ or the quarantine queue. */
export class SqsService {
  readonly #engine: Engine;
  readonly #latency: Latency;
  readonly #queues = new Map<string, LaneQueue>();
  readonly #deadLetterUrls = new Set<string>();
  /** Messages the consumers moved to a lane DLQ themselves, and bodies quarantined. */
  movedToDeadLetter = 0;
  quarantined = 0;
  /** SQS requests, for the bill: sends by the receiver, and the consumers' own calls. */
  requests = { standard: 0, fifo: 0 };

  constructor(engine: Engine, latency: Latency) {
    this.#engine = engine;
    this.#latency = latency;
  }

  addQueue(url: string, queue: LaneQueue): void {
    this.#queues.set(url, queue);
  }

  addDeadLetterQueue(url: string): void {
    this.#deadLetterUrls.add(url);
  }

  count(fifo: boolean, requests = 1): void {
    if (fifo) this.requests.fifo += requests;
    else this.requests.standard += requests;
  }

  async send(commandName: string, input: Output): Promise<Output> {
    await this.#engine.sleep(this.#latency.draw());
    const url = String(input.QueueUrl);
    this.count(url.endsWith('.fifo'));
    if (commandName === 'SendMessageBatchCommand')
      return this.#sendBatch(url, input.Entries as SendMessageBatchRequestEntry[]);
    if (commandName === 'ChangeMessageVisibilityBatchCommand') {
      const queue = this.#queues.get(url);
      const entries = input.Entries as ChangeMessageVisibilityBatchRequestEntry[];
      const successful: { Id: string | undefined }[] = [];
      const failed: { Id: string | undefined; Code: string; SenderFault: boolean }[] = [];
      for (const entry of entries) {
        if (queue?.changeVisibility(entry.ReceiptHandle ?? '', entry.VisibilityTimeout ?? 0))
          successful.push({ Id: entry.Id });
        else failed.push({ Id: entry.Id, Code: 'ReceiptHandleIsInvalid', SenderFault: true });
      }
      return { Successful: successful, Failed: failed };
    }
    throw new Error(`The scale simulation's SQS does not serve ${commandName}.`);
  }

  #sendBatch(url: string, entries: readonly SendMessageBatchRequestEntry[]): Output {
    const queue = this.#queues.get(url);
    if (queue === undefined) {
      if (this.#deadLetterUrls.has(url)) this.movedToDeadLetter += entries.length;
      else this.quarantined += entries.length;
    }
    const successful = entries.map((entry) => {
      const body = entry.MessageBody ?? '';
      const attributes = (entry.MessageAttributes ?? {}) as Record<
        string,
        { DataType: string; StringValue?: string }
      >;
      let messageId = `${url}-${entry.Id}`;
      if (queue instanceof FifoLaneQueue) {
        const sent = queue.send(body, attributes, {
          groupId: entry.MessageGroupId ?? '-',
          deduplicationId: entry.MessageDeduplicationId ?? '-',
        });
        messageId = sent.message?.messageId ?? messageId;
      } else if (queue instanceof StandardLaneQueue) {
        // A standard queue's MessageGroupId names the message's tenant (fair queues, lane-queues.ts).
        messageId = queue.send(body, attributes, entry.MessageGroupId).messageId;
      }
      // The SDK checks it (middleware-sdk-sqs) and fails the call when it is missing or wrong.
      return {
        Id: entry.Id,
        MessageId: messageId,
        MD5OfMessageBody: createHash('md5').update(body).digest('hex'),
      };
    });
    return { Successful: successful, Failed: [] };
  }
}

export function scaleSqsClient(service: SqsService): SQSClient {
  const sqs = new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'simulation', secretAccessKey: 'simulation' },
    maxAttempts: 1,
  });
  sqs.middlewareStack.add(
    (_next, context) => async (args) => {
      const output = await service.send(context.commandName ?? 'unknown', args.input as Output);
      return {
        output: { ...output, $metadata: { httpStatusCode: 200 } } as ServiceOutputTypes,
        response: {},
      };
    },
    { step: 'initialize', priority: 'low', name: 'ScaleSimulatedSqs' },
  );
  return sqs;
}

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);

/** The SDK's standard retry mode after a throttle: full jitter up to 1 s, doubling (sdk-client-config.ts). */
const THROTTLE_BACKOFF_BASE_MS = 1_000;
const THROTTLE_BACKOFF_CAP_MS = 20_000;

export interface DynamoDbCounts {
  writes: number;
  reads: number;
  /** Write attempts the table throttled (each SDK attempt counted). */
  throttledAttempts: number;
  /** Calls that failed after every SDK attempt was throttled: the real code saw the error. */
  throttledCalls: number;
}

export function scaleDocumentClient(options: {
  model: DynamoDbModel;
  table: TableThroughput;
  engine: Engine;
  latency: Latency;
  random: SeededRandom;
  counts: DynamoDbCounts;
}): DynamoDBDocumentClient {
  const { model, table, engine, latency, random, counts } = options;
  const maxAttempts = SDK_TIMEOUTS.consumerDynamoDb.maxAttempts;
  return withoutWireMiddlewares(
    modelDocumentClient(model, async (request: ModelRequest, apply) => {
      const write = WRITES.has(request.commandName);
      for (let attempt = 1; ; attempt++) {
        await engine.sleep(latency.draw());
        if (!write) {
          counts.reads++;
          return apply();
        }
        if (table.write(engine.now, partitionKeyOf(request.input))) {
          counts.writes++;
          return apply();
        }
        counts.throttledAttempts++;
        if (attempt >= maxAttempts) {
          counts.throttledCalls++;
          throw throughputExceeded();
        }
        const ceiling = Math.min(THROTTLE_BACKOFF_CAP_MS, THROTTLE_BACKOFF_BASE_MS * 2 ** (attempt - 1));
        await engine.sleep(random.next() * ceiling);
      }
    }),
  );
}

function partitionKeyOf(input: Output): string {
  const item = (input.Item ?? input.Key) as Record<string, { S?: string }> | undefined;
  return item?.pk?.S ?? '';
}

function throughputExceeded(): ProvisionedThroughputExceededException {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new ProvisionedThroughputExceededException({
      $metadata: { httpStatusCode: 400 },
      message: 'The level of configured provisioned throughput for the table was exceeded.',
    });
  } finally {
    Error.stackTraceLimit = limit;
  }
}
