import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseBatchResponse } from '../../../local/lambda-sqs-batch.ts';

const records = ['a', 'b', 'c'].map((messageId) => ({ messageId }) as SQSRecord);

describe('parseBatchResponse (Lambda ReportBatchItemFailures rules)', () => {
  it.each([
    ['nothing', undefined],
    ['null', null],
    ['an empty list', { batchItemFailures: [] }],
    ['an object without the list', {}],
  ])('counts %s as full success', (_, response) => {
    expect(parseBatchResponse(response, records)).toEqual({ outcome: 'success', failedIds: new Set() });
  });

  it('fails only the listed records', () => {
    expect(parseBatchResponse({ batchItemFailures: [{ itemIdentifier: 'b' }] }, records)).toEqual({
      outcome: 'partial-failure',
      failedIds: new Set(['b']),
    });
  });

  it.each([
    ['an unknown id', { batchItemFailures: [{ itemIdentifier: 'z' }] }],
    ['an empty id', { batchItemFailures: [{ itemIdentifier: '' }] }],
    ['a wrongly cased key', { batchItemFailures: [{ ItemIdentifier: 'a' }] }],
    ['a non-list', { batchItemFailures: 'a' }],
    ['a string response', 'ok'],
  ])('fails the whole batch on %s', (_, response) => {
    expect(parseBatchResponse(response, records)).toEqual({
      outcome: 'invalid-response',
      failedIds: new Set(['a', 'b', 'c']),
    });
  });
});
