import { describe, expect, it } from 'vitest';
import {
  ClaimStoreError,
  ClaimStoreRequestError,
  isTransientDynamoDbError,
  TransientClaimStoreError,
  toClaimStoreError,
} from '../../../functions/claims/errors.ts';

function sdkError(name: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${name} happened`), { name, $metadata: {}, ...extra });
}

describe('isTransientDynamoDbError', () => {
  it.each([
    ['ProvisionedThroughputExceededException', sdkError('ProvisionedThroughputExceededException')],
    ['ThrottlingException', sdkError('ThrottlingException')],
    ['RequestLimitExceeded', sdkError('RequestLimitExceeded')],
    ['InternalServerError', sdkError('InternalServerError')],
    ['a server fault', sdkError('Whatever', { $fault: 'server' })],
    ['an HTTP 503', sdkError('Whatever', { $metadata: { httpStatusCode: 503 } })],
    ['a connection reset', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
  ])('%s is transient', (_label, error) => {
    expect(isTransientDynamoDbError(error)).toBe(true);
  });

  it.each([
    ['ResourceNotFoundException', sdkError('ResourceNotFoundException', { $fault: 'client' })],
    ['ValidationException', sdkError('ValidationException', { $metadata: { httpStatusCode: 400 } })],
    ['AccessDeniedException', sdkError('AccessDeniedException')],
    ['a string', 'nope'],
  ])('%s is not transient', (_label, error) => {
    expect(isTransientDynamoDbError(error)).toBe(false);
  });
});

describe('toClaimStoreError', () => {
  it('wraps a throttle as a named transient error that keeps its cause', () => {
    const cause = sdkError('ThrottlingException');
    const error = toClaimStoreError('complete', 'msg:wamid.1', cause);
    expect(error).toBeInstanceOf(TransientClaimStoreError);
    expect(error).toBeInstanceOf(ClaimStoreError);
    expect(error).toMatchObject({
      name: 'TransientClaimStoreError',
      operation: 'complete',
      transient: true,
      cause,
    });
  });

  it('wraps a refusal as a non-transient request error', () => {
    const error = toClaimStoreError('claim', 'msg:wamid.1', sdkError('ResourceNotFoundException'));
    expect(error).toBeInstanceOf(ClaimStoreRequestError);
    expect(error).toMatchObject({ name: 'ClaimStoreRequestError', transient: false });
  });

  it('passes claim store errors through unchanged', () => {
    const original = new ClaimStoreError('already typed');
    expect(toClaimStoreError('release', 'k', original)).toBe(original);
  });
});
