import { describe, expect, it } from 'vitest';
import { dynamoDbItemBytes, refusedWriteUnits } from '../../bench/support/consumed-capacity.ts';

describe('refused conditional writes, counted by AWS rule', () => {
  it('sizes an item as DynamoDB documents it', () => {
    // name 2 + "abc" 3; name 1 + number 12345 (5 digits → 3 + 1); name 4 + bool 1.
    expect(dynamoDbItemBytes({ pk: { S: 'abc' }, n: { N: '12345' }, flag: { BOOL: true } })).toBe(5 + 5 + 5);
    expect(dynamoDbItemBytes({ s: { S: 'é' } })).toBe(1 + 2);
    // A map: 3 bytes + per element 1 + name + value.
    expect(dynamoDbItemBytes({ m: { M: { a: { S: 'xy' } } } })).toBe(1 + 3 + 1 + 1 + 2);
  });

  it('charges the larger of the new and the existing item, at least one unit', () => {
    expect(refusedWriteUnits({ pk: { S: 'a' } })).toBe(1);
    expect(refusedWriteUnits({ pk: { S: 'a' } }, { pk: { S: 'a' }, big: { S: 'x'.repeat(1500) } })).toBe(2);
    expect(refusedWriteUnits(undefined, undefined)).toBe(1);
  });
});
