/**
 * The errors the model throws are the SDK's own classes, shaped as the SDK's deserializer builds them from a
 * DynamoDB error response, so that code under test sees exactly what it sees in production.
 */
import { ConditionalCheckFailedException, DynamoDBServiceException } from '@aws-sdk/client-dynamodb';

const CLIENT_FAULT_METADATA = { httpStatusCode: 400 } as const;

/**
 * A model error's stack would only point into the model, and capturing it costs more than the rest of a
 * request: duplicates make failed conditions the most common answer in a simulation.
 */
function withoutStack<E>(create: () => E): E {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return create();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** DynamoDB's ValidationException has no class of its own in the SDK: it arrives as the service's base class. */
export function validationError(message: string): DynamoDBServiceException {
  return withoutStack(
    () =>
      new DynamoDBServiceException({
        name: 'ValidationException',
        $fault: 'client',
        $metadata: { ...CLIENT_FAULT_METADATA },
        message,
      }),
  );
}

/** `item` is the raw old item, present only for ReturnValuesOnConditionCheckFailure ALL_OLD and an existing item. */
export function conditionalCheckFailed(
  item: ConditionalCheckFailedException['Item'],
): ConditionalCheckFailedException {
  return withoutStack(
    () =>
      new ConditionalCheckFailedException({
        $metadata: { ...CLIENT_FAULT_METADATA },
        message: 'The conditional request failed',
        ...(item === undefined ? {} : { Item: item }),
      }),
  );
}

/** A request the model does not implement: a test bug or a model gap, never a DynamoDB answer. */
export class UnsupportedByModelError extends Error {
  constructor(what: string) {
    super(`The DynamoDB model does not support ${what}.`);
    this.name = 'UnsupportedByModelError';
  }
}
