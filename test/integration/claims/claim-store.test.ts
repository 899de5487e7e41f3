/**
 * The claim protocol against DynamoDB Local: real conditional writes, no mocks. Time comes from an injected
 * clock (the store sends it as `:nowS`/`:nowMs`), so days can pass between two lines.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../contract/settings.ts';
import {
  ClaimStore,
  type ClaimStoreOptions,
  type HeldClaim,
  isHeld,
} from '../../../functions/claims/claim-store.ts';
import { ClaimLostError } from '../../../functions/claims/errors.ts';
import { countRequests, type RequestCounter } from '../../../lab/bench/support/request-counter.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  createTestClaimTable,
} from '../../support/aws-clients.ts';

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;
/** The store's retention when none is given: the settings' default (contract/settings.ts). */
const RETENTION = DEFAULT_SETTINGS.retentionDays * DAY;
// Not a fixed date: DynamoDB Local runs TTL deletion on its real clock, so injected times must not be in the
// real past, or records would vanish mid-test. Whole seconds keep the expected epoch-second values exact.
const START = Math.floor(Date.now() / SECOND) * SECOND;

let client: DynamoDBClient;
let inspectorClient: DynamoDBClient;
let inspector: DynamoDBDocumentClient;
let requests: RequestCounter;
let tableName: string;
let clock: { now: number };
let keySeq = 0;

beforeAll(async () => {
  client = createDynamoDbClient();
  requests = countRequests(client);
  // Reads that prove what is stored go through a second client, so they never count as the store's requests.
  inspectorClient = createDynamoDbClient();
  inspector = createDocumentClient(inspectorClient);
  tableName = await createTestClaimTable(inspectorClient, 'claim-store');
});

afterAll(() => {
  client.destroy();
  inspectorClient.destroy();
});

beforeEach(() => {
  clock = { now: START };
  requests.reset();
});

function newStore(options: Partial<ClaimStoreOptions> = {}): ClaimStore {
  return new ClaimStore({
    documentClient: createDocumentClient(client),
    tableName,
    clock: () => clock.now,
    ...options,
  });
}

/** A key no other test uses (the table is shared by the whole file). */
function newKey(label: string): string {
  keySeq += 1;
  return `msg:wamid.${label}.${keySeq}`;
}

function deadline(inMs = 30 * SECOND): { deadlineMs: number } {
  return { deadlineMs: clock.now + inMs };
}

async function storedItem(pk: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await inspector.send(
    new GetCommand({ TableName: tableName, Key: { pk }, ConsistentRead: true }),
  );
  return Item;
}

async function claimHeld(store: ClaimStore, key: string, deadlineInMs?: number): Promise<HeldClaim> {
  const result = await store.claim({ key, field: 'messages' }, deadline(deadlineInMs));
  if (!isHeld(result)) throw new Error(`expected to hold ${key}, got ${result.outcome}`);
  return result;
}

describe('claim', () => {
  it('writes a processing record with owner, lease and expiry on a fresh key', async () => {
    const store = newStore();
    const key = newKey('fresh');
    const claim = await claimHeld(store, key, 20 * SECOND);

    expect(claim.outcome).toBe('fresh');
    expect(claim.attempt).toBe(1);
    expect(await storedItem(key)).toEqual({
      pk: key,
      state: 'processing',
      owner: claim.owner,
      leaseUntil: START + 20 * SECOND + store.leaseMarginMs,
      expiresAt: (START + RETENTION) / SECOND,
      field: 'messages',
      claimedAt: START,
      attempt: 1,
    });
  });

  it('lets exactly one of 50 concurrent claims of one key win; the others are in flight, with no reads', async () => {
    const key = newKey('race');
    const workers = Array.from({ length: 50 }, () => newStore());

    const results = await Promise.all(
      workers.map((store) => store.claim({ key, field: 'messages' }, deadline())),
    );

    const outcomes = results.map((result) => result.outcome);
    expect(outcomes.filter((outcome) => outcome === 'fresh')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'duplicate-in-flight')).toHaveLength(49);
    const winner = results.find(isHeld);
    for (const result of results) {
      if (result.outcome === 'duplicate-in-flight') expect(result.existing.owner).toBe(winner?.owner);
    }
    expect(requests.counts()).toEqual({ PutItem: 50 });
    expect((await storedItem(key))?.owner).toBe(winner?.owner);
  });

  it('classifies a completed event as duplicate-done and a running one as duplicate-in-flight, without GetItem', async () => {
    const store = newStore();
    const doneKey = newKey('done');
    const runningKey = newKey('running');
    const done = await claimHeld(store, doneKey);
    await store.complete(done);
    const running = await claimHeld(store, runningKey);
    requests.reset();

    const [again, meanwhile] = await Promise.all([
      store.claim({ key: doneKey, field: 'messages' }, deadline()),
      store.claim({ key: runningKey, field: 'messages' }, deadline()),
    ]);

    expect(again).toMatchObject({
      outcome: 'duplicate-done',
      existing: { state: 'done', owner: done.owner },
    });
    expect(meanwhile).toMatchObject({
      outcome: 'duplicate-in-flight',
      existing: { state: 'processing', owner: running.owner, leaseUntil: running.leaseUntil },
    });
    expect(requests.count('GetItem')).toBe(0);
    expect(requests.counts()).toEqual({ PutItem: 2 });
  });
});

describe('cost floor (docs/design.md §2)', () => {
  it('a fresh event costs 2 writes: the claim and the completion', async () => {
    const store = newStore();
    const claim = await claimHeld(store, newKey('cost-fresh'));
    await store.complete(claim);

    expect(requests.counts()).toEqual({ PutItem: 1, UpdateItem: 1 });
  });

  it('a duplicate costs 1 failed conditional write and no read', async () => {
    const store = newStore();
    const key = newKey('cost-dup');
    await store.complete(await claimHeld(store, key));
    requests.reset();

    const duplicate = await store.claim({ key, field: 'messages' }, deadline());

    expect(duplicate.outcome).toBe('duplicate-done');
    expect(requests.counts()).toEqual({ PutItem: 1 });
  });

  it('a key repeated within one claimMany costs nothing', async () => {
    const store = newStore();
    const a = newKey('batch-a');
    const b = newKey('batch-b');
    const events = [a, a, b, a, b].map((key) => ({ key, field: 'messages' }));

    const results = await store.claimMany(events, deadline());

    expect(results.map((result) => result.outcome)).toEqual(['fresh', 'repeat', 'fresh', 'repeat', 'repeat']);
    expect(results.map((result) => (result.outcome === 'repeat' ? result.firstIndex : undefined))).toEqual([
      undefined,
      0,
      undefined,
      0,
      2,
    ]);
    expect(requests.counts()).toEqual({ PutItem: 2 });
  });

  it('claimMany keeps input order across outcomes', async () => {
    const store = newStore();
    const done = newKey('order-done');
    const running = newKey('order-running');
    const fresh = newKey('order-fresh');
    await store.complete(await claimHeld(store, done));
    await claimHeld(store, running);

    const results = await newStore({ concurrency: 2 }).claimMany(
      [running, fresh, done, fresh].map((key) => ({ key, field: 'messages' })),
      deadline(),
    );

    expect(results.map((result) => [result.key, result.outcome])).toEqual([
      [running, 'duplicate-in-flight'],
      [fresh, 'fresh'],
      [done, 'duplicate-done'],
      [fresh, 'repeat'],
    ]);
  });
});

describe('lease', () => {
  it('keeps the claim in flight up to leaseUntil and lets the next claim take over 1 ms later (attempt 2)', async () => {
    const first = newStore();
    const second = newStore();
    const key = newKey('lapse');
    const original = await claimHeld(first, key, 5 * SECOND);

    clock.now = original.leaseUntil;
    expect((await second.claim({ key, field: 'messages' }, deadline())).outcome).toBe('duplicate-in-flight');

    clock.now = original.leaseUntil + 1;
    const takeover = await claimHeld(second, key);

    expect(takeover).toMatchObject({ outcome: 'takeover', attempt: 2, previous: { owner: original.owner } });
    expect(takeover.owner).not.toBe(original.owner);
    await second.complete(takeover);
    expect(await storedItem(key)).toMatchObject({ state: 'done', owner: takeover.owner, attempt: 2 });
  });

  it('refuses completion by the worker whose lease lapsed, and leaves the item unchanged', async () => {
    const slow = newStore();
    const key = newKey('lost-complete');
    const original = await claimHeld(slow, key, 5 * SECOND);
    clock.now = original.leaseUntil + 1;
    const takeover = await claimHeld(newStore(), key);
    const before = await storedItem(key);

    const completion = slow.complete(original);

    await expect(completion).rejects.toBeInstanceOf(ClaimLostError);
    await expect(completion).rejects.toMatchObject({ owner: original.owner, currentOwner: takeover.owner });
    expect(await storedItem(key)).toEqual(before);
  });

  it('refuses release by the worker whose lease lapsed, and leaves the item unchanged', async () => {
    const slow = newStore();
    const key = newKey('lost-release');
    const original = await claimHeld(slow, key, 5 * SECOND);
    clock.now = original.leaseUntil + 1;
    await claimHeld(newStore(), key);
    const before = await storedItem(key);

    expect(await slow.release(original)).toBe(false);
    expect(await storedItem(key)).toEqual(before);
  });

  it('release by the owner frees the key for an immediate fresh claim', async () => {
    const store = newStore();
    const key = newKey('release');
    const claim = await claimHeld(store, key);

    expect(await store.release(claim)).toBe(true);
    expect(await storedItem(key)).toBeUndefined();
    expect((await store.claim({ key, field: 'messages' }, deadline())).outcome).toBe('fresh');
  });

  it('completion by the owner after its lease lapsed, with nobody taking over, still counts', async () => {
    const store = newStore();
    const key = newKey('late-complete');
    const claim = await claimHeld(store, key, 5 * SECOND);
    clock.now = claim.leaseUntil + 10 * SECOND;

    const completed = await store.complete(claim);

    expect(completed.expiresAt).toBe(Math.floor(clock.now / SECOND) + RETENTION / SECOND);
    expect(await storedItem(key)).toMatchObject({
      state: 'done',
      doneAt: clock.now,
      expiresAt: completed.expiresAt,
    });
  });
});

describe('retention (injected clock)', () => {
  it.each([
    { label: 'completed 6 days 23 hours ago', age: 6 * DAY + 23 * HOUR, outcome: 'duplicate-done' },
    { label: 'completed exactly the default retention ago', age: RETENTION, outcome: 'duplicate-done' },
    {
      label: 'completed the default retention and 1 second ago',
      age: RETENTION + SECOND,
      outcome: 'reclaimed',
    },
  ])('an event $label → $outcome', async ({ age, outcome }) => {
    const store = newStore();
    const key = newKey('retention');
    await store.complete(await claimHeld(store, key));

    clock.now = START + age;
    const retry = await store.claim({ key, field: 'messages' }, deadline());

    expect(retry.outcome).toBe(outcome);
  });

  it('reclaims a record whose expiresAt passed while TTL has not deleted it yet (attempt restarts at 1)', async () => {
    const store = newStore();
    const key = newKey('reclaim');
    const first = await claimHeld(store, key);
    await store.complete(first);
    clock.now = START + RETENTION + DAY;
    const expired = await storedItem(key);
    expect(expired?.expiresAt).toBeLessThan(clock.now / SECOND);

    const reclaimed = await claimHeld(store, key);

    expect(reclaimed).toMatchObject({
      outcome: 'reclaimed',
      attempt: 1,
      previous: { state: 'done', owner: first.owner },
    });
    expect(await storedItem(key)).toMatchObject({ state: 'processing', owner: reclaimed.owner });
  });

  it('an abandoned claim expires like any record: reclaimed once past its expiry', async () => {
    const store = newStore();
    const key = newKey('abandoned');
    const abandoned = await claimHeld(store, key);
    clock.now = abandoned.expiresAt * SECOND + SECOND;

    expect((await store.claim({ key, field: 'messages' }, deadline())).outcome).toBe('reclaimed');
  });
});

describe('namespace', () => {
  it('isolates consumers sharing one table: the same key is fresh once per namespace', async () => {
    const key = newKey('shared');
    const crm = newStore({ keyNamespace: 'crm' });
    const analytics = newStore({ keyNamespace: 'analytics' });

    const [forCrm, forAnalytics] = await Promise.all([claimHeld(crm, key), claimHeld(analytics, key)]);

    expect([forCrm.outcome, forAnalytics.outcome]).toEqual(['fresh', 'fresh']);
    expect(forCrm.pk).toBe(`crm#${key}`);
    expect((await storedItem(`crm#${key}`))?.owner).toBe(forCrm.owner);
    expect((await storedItem(`analytics#${key}`))?.owner).toBe(forAnalytics.owner);
    expect(await storedItem(key)).toBeUndefined();
    expect((await crm.claim({ key, field: 'messages' }, deadline())).outcome).toBe('duplicate-in-flight');
  });
});

describe('overlong keys', () => {
  it('claims a key above DynamoDB’s 2048-byte partition-key limit once, and blocks its repeat', async () => {
    // A malformed body can put a long string into a key part; its PutItem must not fail on every retry.
    const key = `${newKey('long')}:${'é'.repeat(3000)}`;
    const store = newStore();

    const first = await claimHeld(store, key);
    await store.complete(first);

    expect(first.outcome).toBe('fresh');
    expect(Buffer.byteLength(first.pk)).toBeLessThan(2048);
    expect((await storedItem(first.pk))?.state).toBe('done');
    expect((await store.claim({ key, field: 'messages' }, deadline())).outcome).toBe('duplicate-done');
    expect((await store.claim({ key: `${key}x`, field: 'messages' }, deadline())).outcome).toBe('fresh');
  });
});

describe('an event without side effect, recorded directly as done', () => {
  it('is one conditional write: state done, doneAt, no lease; its repeat is a duplicate-done', async () => {
    const store = newStore();
    const key = newKey('recorded');
    const recorded = await store.claim({ key, field: 'messages', sideEffect: false }, deadline());
    expect(recorded).toMatchObject({ outcome: 'recorded', claimedAs: 'fresh' });
    expect(requests.counts()).toEqual({ PutItem: 1 });
    const item = await storedItem(key);
    expect(item).toMatchObject({ state: 'done', doneAt: START, expiresAt: (START + RETENTION) / SECOND });
    expect(item?.leaseUntil).toBeUndefined();

    clock.now += 3 * DAY;
    expect((await store.claim({ key, field: 'messages' }, deadline())).outcome).toBe('duplicate-done');
  });

  it('takes over a lapsed lease, and reports it as such', async () => {
    const store = newStore({ leaseMarginMs: 0 });
    const key = newKey('recorded-takeover');
    expect(isHeld(await store.claim({ key, field: 'messages' }, deadline(SECOND)))).toBe(true);
    clock.now += 2 * SECOND;
    const recorded = await store.claim({ key, field: 'messages', sideEffect: false }, deadline());
    expect(recorded).toMatchObject({ outcome: 'recorded', claimedAs: 'takeover' });
    expect((await storedItem(key))?.state).toBe('done');
  });
});
