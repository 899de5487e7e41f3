import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDbModel } from '../../../protocol-checker/dynamodb/dynamodb-model.ts';
import {
  type ModelRequest,
  modelDocumentClient,
} from '../../../protocol-checker/dynamodb/model-document-client.ts';

const TableName = 'model-client';

describe('modelDocumentClient', () => {
  it('marshalls inputs and unmarshalls outputs as the real document client does', async () => {
    const model = new DynamoDbModel();
    const client = modelDocumentClient(model);
    const put = await client.send(
      new PutCommand({ TableName, Item: { pk: 'a', n: 1, tags: new Set(['x']) }, ReturnValues: 'ALL_OLD' }),
    );
    expect(put.Attributes).toBeUndefined();
    expect(put.$metadata.httpStatusCode).toBe(200);
    expect(model.item(TableName, { pk: { S: 'a' } })).toEqual({
      pk: { S: 'a' },
      n: { N: '1' },
      tags: { SS: ['x'] },
    });

    const updated = await client.send(
      new UpdateCommand({
        TableName,
        Key: { pk: 'a' },
        UpdateExpression: 'SET n = n + :one ADD tags :more',
        ExpressionAttributeValues: { ':one': 1, ':more': new Set(['y']) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    expect(updated.Attributes).toEqual({ pk: 'a', n: 2, tags: new Set(['x', 'y']) });

    const read = await client.send(new GetCommand({ TableName, Key: { pk: 'a' }, ConsistentRead: true }));
    expect(read.Item).toEqual({ pk: 'a', n: 2, tags: new Set(['x', 'y']) });

    const deleted = await client.send(
      new DeleteCommand({ TableName, Key: { pk: 'a' }, ReturnValues: 'ALL_OLD' }),
    );
    expect(deleted.Attributes).toEqual({ pk: 'a', n: 2, tags: new Set(['x', 'y']) });
    expect((await client.send(new GetCommand({ TableName, Key: { pk: 'a' } }))).Item).toBeUndefined();
  });

  it('throws the SDK ConditionalCheckFailedException with the raw old item, as the real SDK does', async () => {
    const client = modelDocumentClient(new DynamoDbModel());
    await client.send(new PutCommand({ TableName, Item: { pk: 'b', owner: 'me' } }));
    const failure = await client
      .send(
        new PutCommand({
          TableName,
          Item: { pk: 'b', owner: 'you' },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      )
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConditionalCheckFailedException);
    expect((failure as ConditionalCheckFailedException).Item).toEqual({ pk: { S: 'b' }, owner: { S: 'me' } });
  });

  it('lets the interceptor see every marshalled request and decide when it applies', async () => {
    const model = new DynamoDbModel();
    const seen: ModelRequest[] = [];
    const lostAnswers = modelDocumentClient(model, async (request, apply) => {
      seen.push(request);
      apply();
      throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
    });
    await expect(lostAnswers.send(new PutCommand({ TableName, Item: { pk: 'c' } }))).rejects.toThrow(
      'socket hang up',
    );
    expect(seen).toEqual([{ commandName: 'PutItemCommand', input: { TableName, Item: { pk: { S: 'c' } } } }]);
    expect(model.item(TableName, { pk: { S: 'c' } })).toEqual({ pk: { S: 'c' } });
  });
});
