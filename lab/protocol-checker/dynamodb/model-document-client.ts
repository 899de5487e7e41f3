/**
 * A real `DynamoDBDocumentClient` whose requests reach a DynamoDbModel instead of the network. Everything the
 * production code relies on runs as in production: the command classes, the document client's marshalling
 * of the input and unmarshalling of the output, the SDK's error classes (a failed condition still carries
 * the raw `Item`). Only the hop from the serialized request to the parsed response is replaced:
 *
 *   DocumentMarshall (serialize step) → … serializer, signing, retry (maxAttempts 1) …
 *   → DocumentUnmarshall (deserialize step) → [model short-circuit] ⨯ deserializerMiddleware → HTTP
 *
 * The short-circuit sits right after DocumentUnmarshall, so it receives the marshalled input and its raw
 * output is unmarshalled on the way back. It exists only for the document client's commands (Put, Update,
 * Delete, Get…); a raw client command sent through this client fails with "DocumentUnmarshall is not found".
 */
import { DynamoDBClient, type ServiceInputTypes, type ServiceOutputTypes } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeserializeMiddleware } from '@smithy/types';
import type { DynamoDbModel } from './dynamodb-model.ts';

export interface ModelRequest {
  /** The SDK command, e.g. `PutItemCommand` (the document client's PutCommand sends a PutItemCommand). */
  readonly commandName: string;
  /** The marshalled input, as DynamoDB would receive it. */
  readonly input: Record<string, unknown>;
}

/**
 * Decides when and how a request reaches the model: the checker makes every request an await point it
 * schedules (delay, reorder, apply-then-lose-answer, throttle). Default: apply at once.
 */
export type RequestInterceptor = (
  request: ModelRequest,
  apply: () => Record<string, unknown>,
) => Promise<Record<string, unknown>>;

export const MODEL_MIDDLEWARE_NAME = 'DynamoDbModelShortCircuit';

const applyAtOnce: RequestInterceptor = async (_request, apply) => apply();

export function modelDocumentClient(
  model: DynamoDbModel,
  intercept: RequestInterceptor = applyAtOnce,
): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'model', secretAccessKey: 'model' },
    // The checker decides about retries itself; the SDK's own would hide its faults.
    maxAttempts: 1,
  });
  const shortCircuit: DeserializeMiddleware<ServiceInputTypes, ServiceOutputTypes> =
    (_next, context) => async (args) => {
      const request: ModelRequest = {
        commandName: context.commandName ?? 'unknown',
        input: args.input as Record<string, unknown>,
      };
      const output = await intercept(request, () => model.execute(request.commandName, request.input));
      return {
        output: { ...output, $metadata: { httpStatusCode: 200 } } as ServiceOutputTypes,
        response: { statusCode: 200 },
      };
    };
  client.middlewareStack.addRelativeTo(shortCircuit, {
    name: MODEL_MIDDLEWARE_NAME,
    relation: 'after',
    toMiddleware: 'DocumentUnmarshall',
  });
  return DynamoDBDocumentClient.from(client);
}
