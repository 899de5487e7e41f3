/**
 * The exact requests the claim store sends, and how it reads DynamoDB's answers, failure paths included.
 * The protocol itself is proven against DynamoDB Local in test/integration/claims.
 */
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, MIN_RETENTION_DAYS } from '../../../contract/settings.ts';
import { ClaimStore, type ClaimStoreOptions, type HeldClaim } from '../../../functions/claims/claim-store.ts';
import {
  ClaimLostError,
  ClaimStoreConfigError,
  ClaimStoreRequestError,
  MalformedClaimRecordError,
  TransientClaimStoreError,
} from '../../../functions/claims/errors.ts';

const NOW = 1_780_000_000_000;
const NOW_S = NOW / 1000;
/** The store's retention when none is given: the settings' default (contract/settings.ts). */
const DEFAULT_RETENTION_S = DEFAULT_SETTINGS.retentionDays * 86_400;
const DEADLINE = NOW + 30_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const CLAIM_CONDITION =
  'attribute_not_exists(#pk) OR #expiresAt < :nowS OR (#state = :processing AND #leaseUntil < :nowMs)';

const documentClient = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } }),
);
const dynamodb = mockClient(documentClient);

beforeEach(() => {
  dynamodb.reset();
});

afterEach(() => {
  dynamodb.reset();
});

function store(options: Partial<ClaimStoreOptions> = {}): ClaimStore {
  return new ClaimStore({ documentClient, tableName: 'claims', clock: () => NOW, ...options });
}

function conditionFailed(item?: Record<string, { S: string } | { N: string }>) {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    Item: item,
  });
}

function throttled() {
  return new ProvisionedThroughputExceededException({
    message: 'Rate of requests exceeds the allowed throughput',
    $metadata: { httpStatusCode: 400 },
  });
}

const held: HeldClaim = {
  key: 'msg:wamid.1',
  pk: 'crm#msg:wamid.1',
  field: 'messages',
  outcome: 'takeover',
  owner: 'owner-me',
  attempt: 2,
  claimedAt: NOW,
  leaseUntil: NOW + 40_000,
  expiresAt: NOW_S + DEFAULT_RETENTION_S,
};

describe('claim', () => {
  it('sends one conditional PutItem with the full item, namespaced key and ALL_OLD both ways', async () => {
    dynamodb.on(PutCommand).resolves({});

    const result = await store({ keyNamespace: 'crm' }).claim(
      { key: 'msg:wamid.1', field: 'messages' },
      { deadlineMs: DEADLINE },
    );

    expect(dynamodb.calls()).toHaveLength(1);
    const input = dynamodb.commandCalls(PutCommand)[0]?.args[0].input;
    expect(input).toEqual({
      TableName: 'claims',
      Item: {
        pk: 'crm#msg:wamid.1',
        state: 'processing',
        owner: expect.stringMatching(UUID),
        leaseUntil: DEADLINE + 10_000,
        expiresAt: NOW_S + DEFAULT_RETENTION_S,
        field: 'messages',
        claimedAt: NOW,
        attempt: 1,
      },
      ConditionExpression: CLAIM_CONDITION,
      ExpressionAttributeNames: {
        '#pk': 'pk',
        '#expiresAt': 'expiresAt',
        '#state': 'state',
        '#leaseUntil': 'leaseUntil',
      },
      ExpressionAttributeValues: { ':nowS': NOW_S, ':nowMs': NOW, ':processing': 'processing' },
      ReturnValues: 'ALL_OLD',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(result).toEqual({
      key: 'msg:wamid.1',
      pk: 'crm#msg:wamid.1',
      field: 'messages',
      outcome: 'fresh',
      owner: input?.Item?.owner,
      attempt: 1,
      claimedAt: NOW,
      leaseUntil: DEADLINE + 10_000,
      expiresAt: NOW_S + DEFAULT_RETENTION_S,
    });
  });

  it('stores the key as given without a namespace, and honours retention and margin options', async () => {
    dynamodb.on(PutCommand).resolves({});

    await store({ retentionDays: 10, leaseMarginMs: 0 }).claim(
      { key: 'st:wamid.9:read', field: 'messages' },
      { deadlineMs: DEADLINE },
    );

    expect(dynamodb.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({
      pk: 'st:wamid.9:read',
      leaseUntil: DEADLINE,
      expiresAt: NOW_S + 10 * 86_400,
    });
  });

  it.each([
    { label: 'a deadline in the past', deadlineMs: NOW - 1_000, leaseUntil: NOW + 10_000 },
    { label: 'an unknown deadline', deadlineMs: Number.NaN, leaseUntil: NOW + 15 * 60_000 + 10_000 },
  ])('writes a lease even with $label', async ({ deadlineMs, leaseUntil }) => {
    dynamodb.on(PutCommand).resolves({});

    await store().claim({ key: 'k', field: 'calls' }, { deadlineMs });

    expect(dynamodb.commandCalls(PutCommand)[0]?.args[0].input.Item?.leaseUntil).toBe(leaseUntil);
  });

  it('uses a fresh owner token for every claim', async () => {
    dynamodb.on(PutCommand).resolves({});
    const claims = store();

    await claims.claim({ key: 'a', field: 'messages' }, { deadlineMs: DEADLINE });
    await claims.claim({ key: 'a', field: 'messages' }, { deadlineMs: DEADLINE });

    const [first, second] = dynamodb.commandCalls(PutCommand).map((call) => call.args[0].input.Item?.owner);
    expect(first).not.toBe(second);
  });

  it('classifies a put over a lapsed lease (ALL_OLD) as a takeover, one attempt more', async () => {
    dynamodb.on(PutCommand).resolves({
      Attributes: {
        pk: 'k',
        state: 'processing',
        owner: 'dead-worker',
        leaseUntil: NOW - 1,
        expiresAt: NOW_S + 9,
        attempt: 2,
      },
    });

    const result = await store().claim({ key: 'k', field: 'messages' }, { deadlineMs: DEADLINE });

    expect(result).toMatchObject({
      outcome: 'takeover',
      attempt: 3,
      previous: { owner: 'dead-worker', attempt: 2 },
    });
  });

  it('classifies a put over an expired record (ALL_OLD) as reclaimed, attempt 1', async () => {
    dynamodb.on(PutCommand).resolves({
      Attributes: {
        pk: 'k',
        state: 'done',
        owner: 'old',
        leaseUntil: NOW - 9e8,
        expiresAt: NOW_S - 1,
        attempt: 1,
      },
    });

    const result = await store().claim({ key: 'k', field: 'messages' }, { deadlineMs: DEADLINE });

    expect(result).toMatchObject({
      outcome: 'reclaimed',
      attempt: 1,
      previous: { state: 'done', owner: 'old' },
    });
  });

  it.each([
    { state: 'done', outcome: 'duplicate-done' },
    { state: 'processing', outcome: 'duplicate-in-flight' },
  ])(
    'classifies a refused claim over a $state record as $outcome from the returned item',
    async ({ state, outcome }) => {
      dynamodb.on(PutCommand).rejects(
        conditionFailed({
          pk: { S: 'k' },
          state: { S: state },
          owner: { S: 'other' },
          leaseUntil: { N: String(NOW + 5_000) },
          expiresAt: { N: String(NOW_S + 100) },
          attempt: { N: '1' },
          field: { S: 'messages' },
        }),
      );

      const result = await store().claim({ key: 'k', field: 'messages' }, { deadlineMs: DEADLINE });

      expect(result).toMatchObject({
        outcome,
        key: 'k',
        existing: { state, owner: 'other', leaseUntil: NOW + 5_000, expiresAt: NOW_S + 100, attempt: 1 },
      });
      expect(dynamodb.calls()).toHaveLength(1);
    },
  );

  it('refuses to guess about a record in an unknown state', async () => {
    dynamodb.on(PutCommand).rejects(conditionFailed({ pk: { S: 'k' }, state: { S: 'pending' } }));

    await expect(
      store().claim({ key: 'k', field: 'messages' }, { deadlineMs: DEADLINE }),
    ).rejects.toBeInstanceOf(MalformedClaimRecordError);
  });

  it('propagates throttling as a transient error carrying the SDK error', async () => {
    const cause = throttled();
    dynamodb.on(PutCommand).rejects(cause);

    const claim = store().claim({ key: 'k', field: 'messages' }, { deadlineMs: DEADLINE });

    await expect(claim).rejects.toBeInstanceOf(TransientClaimStoreError);
    await expect(claim).rejects.toMatchObject({ operation: 'claim', key: 'k', transient: true, cause });
  });

  it('propagates a missing table as a non-transient request error', async () => {
    dynamodb
      .on(PutCommand)
      .rejects(new ResourceNotFoundException({ message: 'Requested resource not found', $metadata: {} }));

    await expect(
      store().claim({ key: 'k', field: 'messages' }, { deadlineMs: DEADLINE }),
    ).rejects.toBeInstanceOf(ClaimStoreRequestError);
  });
});

describe('complete', () => {
  it('sends one UpdateItem conditioned on the owner, setting done, doneAt, a new expiry and the attempt', async () => {
    dynamodb.on(UpdateCommand).resolves({});

    const completed = await store({ keyNamespace: 'crm' }).complete(held);

    expect(dynamodb.calls()).toHaveLength(1);
    expect(dynamodb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'claims',
      Key: { pk: 'crm#msg:wamid.1' },
      UpdateExpression: 'SET #state = :done, #doneAt = :nowMs, #expiresAt = :expiresAt, #attempt = :attempt',
      ConditionExpression: '#owner = :me',
      ExpressionAttributeNames: {
        '#state': 'state',
        '#doneAt': 'doneAt',
        '#expiresAt': 'expiresAt',
        '#attempt': 'attempt',
        '#owner': 'owner',
      },
      ExpressionAttributeValues: {
        ':done': 'done',
        ':nowMs': NOW,
        ':expiresAt': NOW_S + DEFAULT_RETENTION_S,
        ':attempt': 2,
        ':me': 'owner-me',
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(completed).toEqual({
      key: 'msg:wamid.1',
      pk: 'crm#msg:wamid.1',
      doneAt: NOW,
      expiresAt: NOW_S + DEFAULT_RETENTION_S,
    });
  });

  it('throws ClaimLostError naming the current owner when the condition fails', async () => {
    dynamodb
      .on(UpdateCommand)
      .rejects(conditionFailed({ pk: { S: 'crm#msg:wamid.1' }, owner: { S: 'usurper' } }));

    const completion = store().complete(held);

    await expect(completion).rejects.toBeInstanceOf(ClaimLostError);
    await expect(completion).rejects.toMatchObject({
      key: 'msg:wamid.1',
      owner: 'owner-me',
      currentOwner: 'usurper',
    });
  });

  it('throws ClaimLostError without a current owner when the record is gone', async () => {
    dynamodb.on(UpdateCommand).rejects(conditionFailed());

    await expect(store().complete(held)).rejects.toMatchObject({
      name: 'ClaimLostError',
      currentOwner: undefined,
    });
  });

  it('propagates throttling as a transient error', async () => {
    dynamodb.on(UpdateCommand).rejects(throttled());

    await expect(store().complete(held)).rejects.toMatchObject({
      name: 'TransientClaimStoreError',
      operation: 'complete',
    });
  });
});

describe('release', () => {
  it('sends one DeleteItem conditioned on the owner and reports the release', async () => {
    dynamodb.on(DeleteCommand).resolves({});

    expect(await store().release(held)).toBe(true);
    expect(dynamodb.commandCalls(DeleteCommand)[0]?.args[0].input).toEqual({
      TableName: 'claims',
      Key: { pk: 'crm#msg:wamid.1' },
      ConditionExpression: '#owner = :me',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':me': 'owner-me' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('returns false, without throwing, when another worker owns the claim', async () => {
    dynamodb.on(DeleteCommand).rejects(
      conditionFailed({
        pk: { S: 'crm#msg:wamid.1' },
        state: { S: 'processing' },
        owner: { S: 'owner-b' },
      }),
    );

    expect(await store().release(held)).toBe(false);
  });

  it('reports a release when no record is left (its own delete landed, the answer was lost)', async () => {
    dynamodb.on(DeleteCommand).rejects(conditionFailed());

    expect(await store().release(held)).toBe(true);
  });

  it('propagates throttling as a transient error', async () => {
    dynamodb.on(DeleteCommand).rejects(throttled());

    await expect(store().release(held)).rejects.toBeInstanceOf(TransientClaimStoreError);
  });
});

describe('claimMany', () => {
  it('sends one PutItem per distinct key and reports repeats against their first occurrence', async () => {
    dynamodb.on(PutCommand).resolves({});

    const results = await store().claimMany(
      ['a', 'b', 'a', 'c', 'b'].map((key) => ({ key, field: 'messages' })),
      { deadlineMs: DEADLINE },
    );

    expect(
      dynamodb
        .commandCalls(PutCommand)
        .map((call) => call.args[0].input.Item?.pk)
        .sort(),
    ).toEqual(['a', 'b', 'c']);
    expect(results.map((result) => [result.key, result.outcome])).toEqual([
      ['a', 'fresh'],
      ['b', 'fresh'],
      ['a', 'repeat'],
      ['c', 'fresh'],
      ['b', 'repeat'],
    ]);
    expect(results[2]).toMatchObject({ outcome: 'repeat', firstIndex: 0 });
    expect(results[4]).toMatchObject({ outcome: 'repeat', firstIndex: 1 });
  });

  it('reports one event failing without losing the claims taken for the others', async () => {
    dynamodb.on(PutCommand).callsFake(async (input: { Item: { pk: string } }) => {
      if (input.Item.pk === 'b') throw throttled();
      return {};
    });

    const results = await store().claimMany(
      ['a', 'b', 'c'].map((key) => ({ key, field: 'messages' })),
      { deadlineMs: DEADLINE },
    );

    expect(results.map((result) => result.outcome)).toEqual(['fresh', 'failed', 'fresh']);
    expect(results[1]).toMatchObject({ key: 'b', error: expect.any(TransientClaimStoreError) });
  });

  it('keeps at most `concurrency` PutItems in flight', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    dynamodb.on(PutCommand).callsFake(async () => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 2));
      inFlight -= 1;
      return {};
    });

    await store({ concurrency: 3 }).claimMany(
      Array.from({ length: 12 }, (_, i) => ({ key: `k${i}`, field: 'messages' })),
      { deadlineMs: DEADLINE },
    );

    expect(dynamodb.commandCalls(PutCommand)).toHaveLength(12);
    expect(maxInFlight).toBe(3);
  });

  it('sends nothing for an empty batch', async () => {
    expect(await store().claimMany([], { deadlineMs: DEADLINE })).toEqual([]);
    expect(dynamodb.calls()).toHaveLength(0);
  });
});

describe('configuration', () => {
  it.each([6, 6.99, 0, -1, Number.NaN])(
    'refuses retentionDays %s with a message naming the minimum',
    (retentionDays) => {
      expect(() => store({ retentionDays })).toThrow(ClaimStoreConfigError);
      expect(() => store({ retentionDays })).toThrow(
        /Meta retries a webhook for up to 7 days: use at least 7/,
      );
    },
  );

  it("accepts Meta's 7 days, the part of the floor it can check alone, and defaults to the settings' default", () => {
    expect(store({ retentionDays: MIN_RETENTION_DAYS }).retentionDays).toBe(7);
    expect(store().retentionDays).toBe(DEFAULT_SETTINGS.retentionDays);
  });

  it.each([
    { label: 'a namespace containing #', options: { keyNamespace: 'a#b' } },
    { label: 'an empty namespace', options: { keyNamespace: '' } },
    { label: 'a negative lease margin', options: { leaseMarginMs: -1 } },
    { label: 'a concurrency of 0', options: { concurrency: 0 } },
  ])('refuses $label', ({ options }) => {
    expect(() => store(options)).toThrow(ClaimStoreConfigError);
  });
});
