/**
 * Child process of `npm run bench -- --only overhead`: the consumer Lambda's own handler (`createConsumerFromEnv`,
 * as `functions/consumer.ts` exports it) for the default subscriber's message lane, configured by the variables
 * the construct sets, on DynamoDB Local. Each invocation carries one fresh message record; its handler notes
 * `performance.now()` on its first line. Interleaved with the invocations, in the same process and the same
 * order of magnitude of work, a bare conditional PutItem of a fresh key on the same table through a client built
 * with the same configuration (`sdkClientConfig('consumerDynamoDb')` and the same endpoint variables): the round
 * trip a claim cannot do without. Which of the two goes first alternates, so that a change of the machine's load
 * weighs on both alike.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { defaultPipeline } from '../../../cli/capacity/pipeline.ts';
import { createClaimTable } from '../../../cli/local/emulators/claim-table.ts';
import { createLambdaContext } from '../../../cli/local/lambda-context.ts';
import { seededRandom } from '../../../cli/local/seeded-random.ts';
import { inboundTextMessage, singleMessageBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { CLAIM_TABLE_SCHEMA } from '../../../contract/claim-table-schema.ts';
import { consumerEnvironment } from '../../../contract/environment.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../../contract/subscribers.ts';
import { sdkClientConfig } from '../../../functions/commons/sdk-client-config.ts';
import { createConsumerFromEnv } from '../../../functions/consumer/create-consumer.ts';
import { defineWebhookHandlers } from '../../../functions/consumer/handler-api.ts';
import { DEFAULT_CONSUMER_MEMORY_MB } from '../../../lib/defaults.ts';
import { CONSUMER_FUNCTION_NAME } from '../support/lambda-names.ts';
import { serveWorker } from '../support/worker-process.ts';
import { adminClient, deleteTable } from './contestants.ts';
import type { ConsumerOverheadOutput } from './overhead-results.ts';
import { toQueueRecord } from './workload.ts';

export interface ConsumerOverheadInput {
  readonly dynamodbEndpoint: string;
  /** Measured invocations, and as many bare PutItems. */
  readonly invocations: number;
  /** Unmeasured pairs first: the container's first invocation builds its clients, and the JIT warms up. */
  readonly warmupPairs: number;
}

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';
const queueUrl = (name: string) => `http://127.0.0.1:9/${ACCOUNT}/${name}`;

serveWorker<ConsumerOverheadInput, ConsumerOverheadOutput>(async (input, progress) => {
  // What the Lambda runtime gives every function: the SDK clients read their endpoint, Region and credentials here.
  Object.assign(process.env, {
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: input.dynamodbEndpoint,
    // Never called: one fresh message a record, nothing to quarantine, redeliver or dead-letter.
    AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:9',
  });
  const tableName = `overhead-${randomUUID().slice(0, 8)}`;
  const admin = adminClient(input.dynamodbEndpoint);
  await createClaimTable(admin, tableName);

  const subscriber = defaultPipeline().subscribers[0];
  const lane = subscriber?.messageLane;
  if (subscriber === undefined || lane === undefined)
    throw new Error('The default subscriber has no message lane.');
  const env = {
    ...process.env,
    ...consumerEnvironment({
      tableName,
      subscriberName: DEFAULT_SUBSCRIBER_NAME,
      quarantineQueueUrl: queueUrl('quarantine'),
      deliveryQueueUrl: queueUrl('messages.fifo'),
      retentionDays: lane.settings.retentionDays,
      leaseMarginMs: lane.settings.leaseMarginMs,
      maximumMessageSizeBytes: lane.settings.maximumMessageSizeBytes,
      retryBaseDelaySeconds: lane.settings.retryBaseDelaySeconds,
      retryMaxDelaySeconds: lane.settings.retryMaxDelaySeconds,
      lane: 'message',
      laneOrdered: lane.ordered,
      laneDeadLetters: {
        queueUrl: queueUrl('messages-dlq.fifo'),
        maxReceives: lane.settings.maxReceiveCount,
      },
      // The local stack's form of the deployment's digest key: no Secrets Manager to call.
      logDigest: { key: randomUUID() },
    }),
  };
  let handlerStartedAt = Number.NaN;
  const handler = createConsumerFromEnv(
    defineWebhookHandlers({
      onMessage: () => {
        handlerStartedAt = performance.now();
      },
    }),
    env,
  );
  const bare = DynamoDBDocumentClient.from(new DynamoDBClient(sdkClientConfig('consumerDynamoDb')));

  const random = seededRandom(20_261_203);
  let serial = 0;
  const invoke = async () => {
    const n = serial++;
    const record = toQueueRecord(singleMessageBody(inboundTextMessage(n, random)));
    const event: SQSEvent = {
      Records: [
        {
          ...record,
          attributes: {
            ...record.attributes,
            MessageGroupId: `conversation-${n}`,
            MessageDeduplicationId: randomUUID(),
            SequenceNumber: String(18_000_000_000_000_000_000 + n),
          },
          eventSourceARN: `arn:aws:sqs:${REGION}:${ACCOUNT}:messages.fifo`,
        },
      ],
    };
    const context = createLambdaContext({
      functionName: CONSUMER_FUNCTION_NAME,
      memoryLimitInMB: DEFAULT_CONSUMER_MEMORY_MB,
      region: REGION,
      deadlineMs: Date.now() + lane.settings.consumerTimeoutSeconds * 1000,
    });
    handlerStartedAt = Number.NaN;
    const started = performance.now();
    const response = await handler(event, context);
    const ended = performance.now();
    if (response.batchItemFailures.length > 0 || Number.isNaN(handlerStartedAt)) {
      throw new Error(`Invocation ${n}: the handler did not run once and succeed.`);
    }
    return { toHandlerMs: handlerStartedAt - started, invocationMs: ended - started };
  };
  const barePut = async () => {
    const started = performance.now();
    await bare.send(
      new PutCommand({
        TableName: tableName,
        Item: { [CLAIM_TABLE_SCHEMA.partitionKey]: `bare:${randomUUID()}` },
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': CLAIM_TABLE_SCHEMA.partitionKey },
      }),
    );
    return performance.now() - started;
  };

  const toHandlerMs: number[] = [];
  const invocationMs: number[] = [];
  const barePutMs: number[] = [];
  const pairs = input.warmupPairs + input.invocations;
  for (let i = 0; i < pairs; i++) {
    const measured = i >= input.warmupPairs;
    const putFirst = i % 2 === 1;
    const put = putFirst ? await barePut() : undefined;
    const invocation = await invoke();
    const putAfter = putFirst ? put : await barePut();
    if (!measured) continue;
    toHandlerMs.push(invocation.toHandlerMs);
    invocationMs.push(invocation.invocationMs);
    barePutMs.push(putAfter as number);
    if ((i - input.warmupPairs + 1) % 100 === 0) {
      progress(`overhead: ${i - input.warmupPairs + 1}/${input.invocations} invocations`);
    }
  }
  await deleteTable(admin, tableName);
  return {
    toHandlerMs,
    invocationMs,
    barePutMs,
    warmupPairs: input.warmupPairs,
    lane: 'message',
    ordered: lane.ordered,
  };
});
