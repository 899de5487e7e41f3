import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { RawItem } from '../../../protocol-checker/dynamodb/attribute-value.ts';
import {
  canonicalNumber,
  compareDecimals,
  parseDecimal,
} from '../../../protocol-checker/dynamodb/decimal-number.ts';
import { DynamoDbModel } from '../../../protocol-checker/dynamodb/dynamodb-model.ts';

const TableName = 'model-unit';

function modelWith(...items: RawItem[]): DynamoDbModel {
  const model = new DynamoDbModel();
  for (const Item of items) model.execute('PutItemCommand', { TableName, Item });
  return model;
}

function failure(run: () => unknown): Error & { Item?: RawItem } {
  try {
    run();
  } catch (error) {
    return error as Error & { Item?: RawItem };
  }
  throw new Error('expected the request to fail');
}

function conditionHolds(item: RawItem, ConditionExpression: string, values: RawItem = {}): boolean {
  const model = modelWith(item);
  try {
    model.execute('DeleteItemCommand', {
      TableName,
      Key: { pk: item.pk },
      ConditionExpression,
      ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
    });
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

describe('conditions', () => {
  const item: RawItem = {
    pk: { S: 'k' },
    big: { N: '12345678901234567890' },
    word: { S: '\uffff' },
    tags: { SS: ['a', 'b'] },
    bytes: { B: Uint8Array.from([1, 2, 3]) },
    nested: { M: { list: { L: [{ S: 'x' }, { N: '2' }] } } },
  };

  it.each([
    // Numbers compare as exact decimals: as doubles, these two are equal.
    ['big < :v', { ':v': { N: '12345678901234567891' } }, true],
    ['big = :v', { ':v': { N: '1.2345678901234567890e19' } }, true],
    // Strings compare by UTF-8 bytes (U+FFFF is EF BF BF, the emoji F0 …): by UTF-16 units it would be greater.
    ['word < :v', { ':v': { S: '😀' } }, true],
    // A comparison across types is false, not an error; <> across types (or with a missing attribute) is true.
    ['big < :v', { ':v': { S: 'z' } }, false],
    ['big <> :v', { ':v': { S: 'z' } }, true],
    ['absent <> :v', { ':v': { S: 'z' } }, true],
    ['absent = :v', { ':v': { S: 'z' } }, false],
    ['contains(tags, :v)', { ':v': { S: 'b' } }, true],
    ['contains(bytes, :v)', { ':v': { B: Uint8Array.from([2, 3]) } }, true],
    ['begins_with(word, :v)', { ':v': { S: '\uffff' } }, true],
    ['size(tags) = :v', { ':v': { N: '2' } }, true],
    ['size(big) = :v OR NOT size(big) = :v', { ':v': { N: '2' } }, true],
    ['nested.#list[1] BETWEEN :lo AND :hi', { ':lo': { N: '1' }, ':hi': { N: '2' } }, true],
    ['attribute_type(nested, :v)', { ':v': { S: 'M' } }, true],
    ['attribute_exists(nested.#list[2])', {}, false],
  ])('%s with %j is %s', (expression, values, expected) => {
    const model = modelWith(item);
    const names = expression.includes('#list') ? { ExpressionAttributeNames: { '#list': 'list' } } : {};
    const run = () =>
      model.execute('DeleteItemCommand', {
        TableName,
        Key: { pk: item.pk },
        ConditionExpression: expression,
        ...names,
        ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
      });
    if (expected) expect(run()).toEqual({});
    else expect(failure(run)).toBeInstanceOf(ConditionalCheckFailedException);
  });

  it('returns the raw old item on a failed condition only with ALL_OLD, and no Item when there was none', () => {
    const model = modelWith({ pk: { S: 'k' }, holder: { S: 'a' } });
    const put = (pk: string, onFailure?: string) => () =>
      model.execute('PutItemCommand', {
        TableName,
        Item: { pk: { S: pk } },
        ConditionExpression: 'attribute_exists(extra)',
        ...(onFailure ? { ReturnValuesOnConditionCheckFailure: onFailure } : {}),
      });
    expect(failure(put('k', 'ALL_OLD')).Item).toEqual({ pk: { S: 'k' }, holder: { S: 'a' } });
    expect(failure(put('k')).Item).toBeUndefined();
    expect(failure(put('absent', 'ALL_OLD'))).toBeInstanceOf(ConditionalCheckFailedException);
    expect(failure(put('absent', 'ALL_OLD')).Item).toBeUndefined();
  });

  it('evaluates a condition against an absent item as an item without attributes', () => {
    expect(conditionHolds({ pk: { S: 'k' } }, 'attribute_not_exists(holder)')).toBe(true);
  });
});

describe('updates', () => {
  const update = (model: DynamoDbModel, input: Record<string, unknown>) =>
    model.execute('UpdateItemCommand', { TableName, Key: { pk: { S: 'k' } }, ...input });

  it('creates a missing item with its key, and reads every right-hand side from the item as it was', () => {
    const model = new DynamoDbModel();
    expect(
      update(model, {
        UpdateExpression:
          'SET a = :one, b = if_not_exists(b, :two), l = list_append(:list, :list) ADD n :one',
        ExpressionAttributeValues: { ':one': { N: '1' }, ':two': { N: '2' }, ':list': { L: [{ S: 'x' }] } },
        ReturnValues: 'ALL_NEW',
      }),
    ).toEqual({
      Attributes: {
        pk: { S: 'k' },
        a: { N: '1' },
        b: { N: '2' },
        l: { L: [{ S: 'x' }, { S: 'x' }] },
        n: { N: '1' },
      },
    });
    expect(update(model, { UpdateExpression: 'SET a = b, b = a', ReturnValues: 'UPDATED_NEW' })).toEqual({
      Attributes: { a: { N: '2' }, b: { N: '1' } },
    });
  });

  it('adds and subtracts numbers exactly, and ADD and DELETE work on sets', () => {
    const model = modelWith({ pk: { S: 'k' }, n: { N: '0.1' }, tags: { SS: ['a', 'b'] } });
    update(model, {
      UpdateExpression: 'SET n = n + :x, m = :big - :one ADD tags :more',
      ExpressionAttributeValues: {
        ':x': { N: '0.2' },
        ':big': { N: '100000000000000000000' },
        ':one': { N: '1' },
        ':more': { SS: ['b', 'c'] },
      },
    });
    expect(model.item(TableName, { pk: { S: 'k' } })).toMatchObject({
      n: { N: '0.3' },
      m: { N: '99999999999999999999' },
      tags: { SS: ['a', 'b', 'c'] },
    });
    update(model, {
      UpdateExpression: 'DELETE tags :all',
      ExpressionAttributeValues: { ':all': { SS: ['a', 'b', 'c'] } },
    });
    expect(model.item(TableName, { pk: { S: 'k' } })?.tags).toBeUndefined();
  });

  it('returns UPDATED_OLD of the attributes it changed that existed before', () => {
    const model = modelWith({ pk: { S: 'k' }, a: { S: 'old' }, keep: { S: 'k' } });
    expect(
      update(model, {
        UpdateExpression: 'SET a = :v, fresh = :v',
        ExpressionAttributeValues: { ':v': { S: 'new' } },
        ReturnValues: 'UPDATED_OLD',
      }),
    ).toEqual({ Attributes: { a: { S: 'old' } } });
  });

  it('refuses what DynamoDB refuses', () => {
    const model = modelWith({ pk: { S: 'k' }, s: { S: 'text' } });
    const refused = (input: Record<string, unknown>) => failure(() => update(model, input));
    expect(
      refused({ UpdateExpression: 'SET a = absent + :v', ExpressionAttributeValues: { ':v': { N: '1' } } })
        .message,
    ).toContain('does not exist in the item');
    expect(
      refused({ UpdateExpression: 'SET a = s + :v', ExpressionAttributeValues: { ':v': { N: '1' } } })
        .message,
    ).toContain('incorrect data type');
    expect(
      refused({ UpdateExpression: 'SET a = :v REMOVE a', ExpressionAttributeValues: { ':v': { N: '1' } } })
        .message,
    ).toContain('overlap');
    expect(
      refused({ UpdateExpression: 'SET pk = :v', ExpressionAttributeValues: { ':v': { S: 'k' } } }).message,
    ).toContain('part of the key');
    expect(
      refused({
        UpdateExpression: 'SET a = :v',
        ExpressionAttributeValues: { ':v': { N: '1' }, ':unused': { N: '2' } },
      }).message,
    ).toContain('unused in expressions: keys: {:unused}');
    expect(
      refused({
        UpdateExpression: 'SET a = :v',
        ExpressionAttributeNames: {},
        ExpressionAttributeValues: { ':v': { N: '1' } },
      }).message,
    ).toContain('must not be empty');
    expect(
      refused({ UpdateExpression: 'SET a = :v', ExpressionAttributeValues: { ':v': { SS: [] } } }).message,
    ).toContain('may not be empty');
    expect(
      refused({ UpdateExpression: 'SET a.b = :v', ExpressionAttributeValues: { ':v': { N: '1' } } }).name,
    ).toBe('UnsupportedByModelError');
  });

  it('lets a failed condition win over a write to the key, as DynamoDB Local does', () => {
    const model = modelWith({ pk: { S: 'k' } });
    const error = failure(() =>
      update(model, {
        UpdateExpression: 'SET pk = :v',
        ConditionExpression: 'attribute_exists(nope)',
        ExpressionAttributeValues: { ':v': { S: 'other' } },
      }),
    );
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
  });
});

describe('requests', () => {
  it('refuses keys that do not match the schema and attributes DynamoDB cannot store', () => {
    const model = new DynamoDbModel({ partitionKeys: { other: 'id' } });
    expect(
      failure(() => model.execute('GetItemCommand', { TableName, Key: { pk: { S: 'k' }, x: { S: 'y' } } }))
        .message,
    ).toBe('The provided key element does not match the schema');
    expect(
      failure(() => model.execute('PutItemCommand', { TableName, Item: { pk: { N: '1' } } })).message,
    ).toContain('Type mismatch for key pk');
    expect(
      failure(() => model.execute('PutItemCommand', { TableName: 'other', Item: { pk: { S: 'k' } } }))
        .message,
    ).toContain('Missing the key id');
    expect(
      failure(() => model.execute('PutItemCommand', { TableName, Item: { pk: { S: '' } } })).message,
    ).toContain('empty string');
    expect(
      failure(() =>
        model.execute('PutItemCommand', { TableName, Item: { pk: { S: 'k' }, ns: { NS: ['1', '1.0'] } } }),
      ).message,
    ).toContain('duplicates');
    expect(
      failure(() =>
        model.execute('PutItemCommand', { TableName, Item: { pk: { S: 'k' } }, ReturnValues: 'ALL_NEW' }),
      ).message,
    ).toBe('Return values set to invalid value');
  });

  it('stores numbers trimmed, as AWS documents', () => {
    const model = modelWith({
      pk: { S: 'k' },
      a: { N: '1.50' },
      b: { N: '-0' },
      c: { L: [{ N: '1e2' }] },
      d: { NS: ['0.10'] },
    });
    expect(model.item(TableName, { pk: { S: 'k' } })).toEqual({
      pk: { S: 'k' },
      a: { N: '1.5' },
      b: { N: '0' },
      c: { L: [{ N: '100' }] },
      d: { NS: ['0.1'] },
    });
  });

  it('projects the attributes a GetItem asks for', () => {
    const model = modelWith({ pk: { S: 'k' }, a: { S: 'x' }, state: { S: 'done' } });
    expect(
      model.execute('GetItemCommand', {
        TableName,
        Key: { pk: { S: 'k' } },
        ProjectionExpression: 'a, #state, absent',
        ExpressionAttributeNames: { '#state': 'state' },
      }),
    ).toEqual({ Item: { a: { S: 'x' }, state: { S: 'done' } } });
  });

  it('refuses what it does not model instead of answering something made up', () => {
    const model = new DynamoDbModel();
    expect(failure(() => model.execute('QueryCommand', { TableName })).name).toBe('UnsupportedByModelError');
    expect(
      failure(() => model.execute('PutItemCommand', { TableName, Item: { pk: { S: 'k' } }, Expected: {} }))
        .name,
    ).toBe('UnsupportedByModelError');
    expect(
      failure(() =>
        model.execute('GetItemCommand', {
          TableName,
          Key: { pk: { S: 'k' } },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ).name,
    ).toBe('UnsupportedByModelError');
  });

  it('hands out copies: changing a returned item changes nothing stored', () => {
    const model = modelWith({ pk: { S: 'k' }, tags: { SS: ['a'] } });
    const copy = model.items(TableName)[0] as RawItem;
    copy.tags?.SS?.push('b');
    expect(model.item(TableName, { pk: { S: 'k' } })?.tags).toEqual({ SS: ['a'] });
  });
});

describe('expireItems', () => {
  it('deletes items whose TTL lies before now, never those without a number or more than five years old', () => {
    const now = 2_000_000_000;
    const model = modelWith(
      { pk: { S: 'expired' }, expiresAt: { N: String(now - 1) } },
      { pk: { S: 'live' }, expiresAt: { N: String(now + 1) } },
      { pk: { S: 'now' }, expiresAt: { N: String(now) } },
      { pk: { S: 'ancient' }, expiresAt: { N: String(now - 6 * 365 * 86_400) } },
      { pk: { S: 'text' }, expiresAt: { S: '1' } },
      { pk: { S: 'none' } },
    );
    expect(model.expireItems(TableName, now).map((item) => item.pk?.S)).toEqual(['expired']);
    expect(
      model
        .items(TableName)
        .map((item) => item.pk?.S)
        .sort(),
    ).toEqual(['ancient', 'live', 'none', 'now', 'text']);
  });
});

describe('decimal numbers', () => {
  it.each([
    ['1.50', '1.5'],
    ['-0', '0'],
    ['1e2', '100'],
    ['.5', '0.5'],
    ['+2', '2'],
    ['0.000120', '0.00012'],
    ['-1E-3', '-0.001'],
  ])('%s is stored as %s', (input, stored) => {
    expect(canonicalNumber(input)).toBe(stored);
  });

  it('orders numbers exactly beyond double precision', () => {
    expect(compareDecimals(parseDecimal('9007199254740993'), parseDecimal('9007199254740992'))).toBe(1);
    expect(compareDecimals(parseDecimal('-1.5'), parseDecimal('-1.25'))).toBe(-1);
  });

  it.each([' 1', '1.2.3', 'abc', '', '1e126', '1e-131', '123456789012345678901234567890123456789'])(
    'refuses %j',
    (input) => {
      expect(() => parseDecimal(input)).toThrow(expect.objectContaining({ name: 'ValidationException' }));
    },
  );
});
