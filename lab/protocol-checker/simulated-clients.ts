/**
 * The consumer's AWS clients in the protocol checker: one DynamoDB document client and one SQS client for the
 * whole process, real SDK v3 clients whose requests a middleware hands to the schedule that runs now (its
 * DynamoDB link and model, its SQS link) instead of the network. Built once, they do their lazy setup
 * (configuration providers, endpoint rules) once, outside any schedule, and cost nothing per schedule.
 * Schedules run one after another; `route` refuses a second one while the first runs.
 */
import { type ServiceOutputTypes, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbModel } from './dynamodb/dynamodb-model.ts';
import {
  type ModelRequest,
  modelDocumentClient,
  type RequestInterceptor,
} from './dynamodb/model-document-client.ts';
import { withoutWireMiddlewares } from './sdk-wire.ts';
import type { SqsLink } from './sqs-link.ts';

export interface ScheduleRoute {
  readonly model: DynamoDbModel;
  readonly dynamodb: RequestInterceptor;
  readonly sqs: SqsLink;
}

let current: ScheduleRoute | undefined;

function routeOf(): ScheduleRoute {
  if (current === undefined) throw new Error('A simulated client was used outside a schedule.');
  return current;
}

// The interceptor applies requests to the running schedule's model, not to the one the client was built with.
const documentClient: DynamoDBDocumentClient = withoutWireMiddlewares(
  modelDocumentClient(new DynamoDbModel(), (request: ModelRequest) => {
    const route = routeOf();
    return route.dynamodb(request, () => route.model.execute(request.commandName, request.input));
  }),
);

const sqs = new SQSClient({
  region: 'us-east-1',
  credentials: { accessKeyId: 'simulation', secretAccessKey: 'simulation' },
  maxAttempts: 1,
});
sqs.middlewareStack.add(
  (_next, context) => async (args) => {
    const output = await routeOf().sqs.send(
      context.commandName ?? 'unknown',
      args.input as Record<string, unknown>,
    );
    return { output: { ...output, $metadata: { httpStatusCode: 200 } } as ServiceOutputTypes, response: {} };
  },
  { step: 'initialize', priority: 'low', name: 'SimulatedSqs' },
);

/** Routes the clients to one schedule until `release` is called. */
export function route(schedule: ScheduleRoute): {
  readonly documentClient: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  release(): void;
} {
  if (current !== undefined) throw new Error('Another schedule is running: schedules run one after another.');
  current = schedule;
  return {
    documentClient,
    sqs,
    release: () => {
      if (current === schedule) current = undefined;
    },
  };
}
