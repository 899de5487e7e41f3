/**
 * The claim store: exactly-once side effects over DynamoDB conditional writes (docs/design.md §2).
 *
 * - `claim` is one PutItem. It succeeds when the key is new, its record expired, or its lease lapsed, and
 *   otherwise fails its condition and returns the blocking record (`ALL_OLD`), which classifies the
 *   duplicate without a read. See `lease.ts` for the lease/expiry timeline.
 * - `complete` and `release` are conditioned on the owner token the claim wrote, so a worker whose lease
 *   lapsed can never mark done, or free, a claim that another worker has since taken over.
 */

import { randomUUID } from 'node:crypto';
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_SETTINGS, leaseMarginMsProblem, retentionDaysProblem } from '../../contract/settings.ts';
import { mapWithConcurrency } from '../commons/bounded-concurrency.ts';
import {
  CLAIM_ATTRIBUTES,
  type ClaimItem,
  type ClaimSnapshot,
  snapshotFromAttributeValues,
  snapshotFromItem,
} from './claim-record.ts';
import {
  ClaimLostError,
  ClaimStoreConfigError,
  type ClaimStoreError,
  MalformedClaimRecordError,
  toClaimStoreError,
} from './errors.ts';
import {
  type ClaimedAs,
  classifyAcquired,
  classifyBlocking,
  type DuplicateOutcome,
  expiresAtFor,
  leaseUntilFor,
  nextAttempt,
  toEpochSeconds,
} from './lease.ts';
import { storageKey } from './storage-key.ts';

export const DEFAULT_CLAIM_CONCURRENCY = 16;

export interface ClaimStoreOptions {
  readonly documentClient: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Prefix for keys (`<ns>#<key>`) so that several consumers can share one table. No `#` inside. */
  readonly keyNamespace?: string;
  /** Days a completed claim blocks retries; below 7 is refused. @default 8 (`DEFAULT_SETTINGS`) */
  readonly retentionDays?: number;
  /** Added to the invocation's deadline to form the lease. @default 10 000 (`DEFAULT_SETTINGS`) */
  readonly leaseMarginMs?: number;
  /** Epoch milliseconds. @default Date.now */
  readonly clock?: () => number;
  /** Most DynamoDB requests `claimMany` keeps in flight. @default 16 */
  readonly concurrency?: number;
}

/** What to claim: a `WebhookEvent` fits as is. */
export interface ClaimRequest {
  readonly key: string;
  readonly field: string;
  /**
   * The queue message carrying the event, stored with the claim at no extra cost. A duplicate found in flight
   * tells by it whether another message (retried if its holder fails) or this same message holds the claim.
   */
  readonly messageId?: string;
  /**
   * False for an event whose kind has no handler: it is claimed directly as `done` (one conditional write, no
   * lease, nothing to complete), so its duplicates are still classified and counted. @default true
   */
  readonly sideEffect?: boolean;
}

export interface ClaimOptions {
  /** Epoch ms by which the caller's invocation ends (see `deadlineFromRemainingTime`). */
  readonly deadlineMs: number;
}

interface ClaimIdentity {
  /** The event key as given, without namespace. */
  readonly key: string;
  /** The stored partition key (`<ns>#<key>` with a namespace). */
  readonly pk: string;
  readonly field: string;
}

/** This worker now owns the event and must run its side effect, then `complete` or `release`. */
export interface HeldClaim extends ClaimIdentity {
  readonly outcome: ClaimedAs;
  readonly owner: string;
  readonly attempt: number;
  readonly claimedAt: number;
  readonly leaseUntil: number;
  readonly expiresAt: number;
  /** The record this claim replaced (takeover, reclaimed). */
  readonly previous?: ClaimSnapshot;
}

/** An event without side effect, recorded directly as done: nothing to run, complete or release. */
export interface RecordedClaim extends ClaimIdentity {
  readonly outcome: 'recorded';
  /** How the key was free: new, expired, or a lapsed lease taken over. */
  readonly claimedAs: ClaimedAs;
}

/** Another claim blocks the event: do not run the side effect. */
export interface DuplicateClaim extends ClaimIdentity {
  readonly outcome: DuplicateOutcome;
  /** The blocking record, as returned by the failed condition. */
  readonly existing: ClaimSnapshot;
}

/** A key repeated within one `claimMany` call: no request was made; it shares the first occurrence's fate. */
export interface RepeatedClaim extends ClaimIdentity {
  readonly outcome: 'repeat';
  readonly firstIndex: number;
}

/** `claimMany` only: this event's claim failed; the other events' results stand. */
export interface FailedClaim extends ClaimIdentity {
  readonly outcome: 'failed';
  readonly error: ClaimStoreError;
}

export type ClaimResult = HeldClaim | RecordedClaim | DuplicateClaim;
export type BatchClaimResult = ClaimResult | RepeatedClaim | FailedClaim;
export type ClaimOutcome = BatchClaimResult['outcome'];

/** What `complete` and `release` need from a held claim. */
export type ClaimHandle = Pick<HeldClaim, 'key' | 'pk' | 'owner' | 'attempt'>;

export interface CompletedClaim {
  readonly key: string;
  readonly pk: string;
  readonly doneAt: number;
  readonly expiresAt: number;
}

export function isHeld(result: BatchClaimResult): result is HeldClaim {
  return result.outcome === 'fresh' || result.outcome === 'takeover' || result.outcome === 'reclaimed';
}

export function isDuplicate(result: BatchClaimResult): result is DuplicateClaim {
  return result.outcome === 'duplicate-done' || result.outcome === 'duplicate-in-flight';
}

const A = CLAIM_ATTRIBUTES;
const NAMES = {
  '#pk': A.pk,
  '#state': A.state,
  '#owner': A.owner,
  '#leaseUntil': A.leaseUntil,
  '#expiresAt': A.expiresAt,
  '#doneAt': A.doneAt,
  '#attempt': A.attempt,
} as const;

/** The claim condition of docs/design.md §2; expiry is checked here because TTL deletion lags by up to days. */
export const CLAIM_CONDITION =
  'attribute_not_exists(#pk) OR #expiresAt < :nowS OR (#state = :processing AND #leaseUntil < :nowMs)';
export const OWNER_CONDITION = '#owner = :me';

export class ClaimStore {
  readonly tableName: string;
  readonly keyNamespace: string | undefined;
  readonly retentionDays: number;
  readonly leaseMarginMs: number;
  readonly concurrency: number;
  private readonly documentClient: DynamoDBDocumentClient;
  private readonly clock: () => number;

  constructor(options: ClaimStoreOptions) {
    this.documentClient = options.documentClient;
    this.tableName = options.tableName;
    this.keyNamespace = options.keyNamespace;
    this.retentionDays = options.retentionDays ?? DEFAULT_SETTINGS.retentionDays;
    this.leaseMarginMs = options.leaseMarginMs ?? DEFAULT_SETTINGS.leaseMarginMs;
    this.concurrency = options.concurrency ?? DEFAULT_CLAIM_CONCURRENCY;
    this.clock = options.clock ?? Date.now;
    validate(this);
  }

  /** The partition key an event key is stored under. */
  partitionKey(key: string): string {
    return storageKey(key, this.keyNamespace);
  }

  /** Claims one event with exactly one PutItem. A duplicate is a result; only request failures throw. */
  async claim(request: ClaimRequest, options: ClaimOptions): Promise<ClaimResult> {
    const nowMs = this.clock();
    const pk = this.partitionKey(request.key);
    const common = {
      pk,
      owner: randomUUID(),
      field: request.field,
      claimedAt: nowMs,
      // The previous attempt is only known once the put has returned it; `complete` stores the real count.
      attempt: 1,
      messageId: request.messageId,
    };
    if (request.sideEffect === false) {
      return this.#record(
        request,
        { ...common, state: 'done', doneAt: nowMs, expiresAt: expiresAtFor(nowMs, this.retentionDays) },
        nowMs,
      );
    }
    const leaseUntil = leaseUntilFor(nowMs, options.deadlineMs, this.leaseMarginMs);
    return this.#hold(
      request,
      {
        ...common,
        state: 'processing',
        leaseUntil,
        expiresAt: expiresAtFor(nowMs, this.retentionDays, leaseUntil),
      },
      nowMs,
    );
  }

  async #record(
    request: ClaimRequest,
    item: ClaimItem,
    nowMs: number,
  ): Promise<RecordedClaim | DuplicateClaim> {
    const identity = { key: request.key, pk: item.pk, field: request.field };
    const put = await this.#put(request, item, nowMs);
    if ('existing' in put) return { ...identity, ...put };
    return { ...identity, outcome: 'recorded', claimedAs: put.outcome };
  }

  async #hold(
    request: ClaimRequest,
    item: ClaimItem & { leaseUntil: number },
    nowMs: number,
  ): Promise<HeldClaim | DuplicateClaim> {
    const identity = { key: request.key, pk: item.pk, field: request.field };
    const put = await this.#put(request, item, nowMs);
    if ('existing' in put) return { ...identity, ...put };
    return {
      ...identity,
      outcome: put.outcome,
      owner: item.owner,
      attempt: nextAttempt(put.outcome, put.previous),
      claimedAt: item.claimedAt,
      leaseUntil: item.leaseUntil,
      expiresAt: item.expiresAt,
      previous: put.previous,
    };
  }

  /** The claim's PutItem: how the key was acquired, or the record that blocks it. */
  async #put(
    request: ClaimRequest,
    item: ClaimItem,
    nowMs: number,
  ): Promise<
    { outcome: ClaimedAs; previous?: ClaimSnapshot } | { outcome: DuplicateOutcome; existing: ClaimSnapshot }
  > {
    try {
      const output = await this.documentClient.send(
        new PutCommand({
          TableName: this.tableName,
          Item: toStoredItem(item),
          ConditionExpression: CLAIM_CONDITION,
          ExpressionAttributeNames: pick(NAMES, '#pk', '#expiresAt', '#state', '#leaseUntil'),
          ExpressionAttributeValues: {
            ':nowS': toEpochSeconds(nowMs),
            ':nowMs': nowMs,
            ':processing': 'processing',
          },
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const previous = output.Attributes ? snapshotFromItem(output.Attributes) : undefined;
      return { outcome: classifyAcquired(previous, nowMs), previous };
    } catch (error) {
      const existing = conditionFailureItem(error);
      if (existing === undefined) throw toClaimStoreError('claim', request.key, error);
      // Our own put landed but its answer was lost (timeout, reset), and the SDK's retry of the same put met
      // the record it had just written. Taking that for another worker's claim would skip the event with
      // nobody left to run it. What the first put replaced is gone, so it is reported as fresh.
      if (existing.owner === item.owner) return { outcome: 'fresh' };
      const outcome = classifyBlocking(existing);
      if (outcome === undefined) {
        throw new MalformedClaimRecordError(request.key, `unknown state ${JSON.stringify(existing.state)}`);
      }
      return { outcome, existing };
    }
  }

  /**
   * Claims many events: a key repeated in `requests` costs no request (`repeat`, pointing at its first
   * occurrence); the others are claimed concurrently, at most `concurrency` at a time. Results come in input
   * order, and one event's failure (`failed`) does not hide the claims already taken for the others.
   */
  async claimMany(requests: readonly ClaimRequest[], options: ClaimOptions): Promise<BatchClaimResult[]> {
    const firstIndexByPk = new Map<string, number>();
    const firstOccurrences: number[] = [];
    requests.forEach((request, index) => {
      const pk = this.partitionKey(request.key);
      if (!firstIndexByPk.has(pk)) {
        firstIndexByPk.set(pk, index);
        firstOccurrences.push(index);
      }
    });
    const results = new Array<BatchClaimResult>(requests.length);
    await mapWithConcurrency(firstOccurrences, this.concurrency, async (index) => {
      const request = requests[index] as ClaimRequest;
      try {
        results[index] = await this.claim(request, options);
      } catch (error) {
        results[index] = {
          key: request.key,
          pk: this.partitionKey(request.key),
          field: request.field,
          outcome: 'failed',
          error: toClaimStoreError('claim', request.key, error),
        };
      }
    });
    requests.forEach((request, index) => {
      const pk = this.partitionKey(request.key);
      const firstIndex = firstIndexByPk.get(pk) as number;
      if (firstIndex !== index) {
        results[index] = { key: request.key, pk, field: request.field, outcome: 'repeat', firstIndex };
      }
    });
    return results;
  }

  /**
   * Marks the side effect done: the record then blocks retries for `retentionDays` from now. Throws
   * {@link ClaimLostError} (item unchanged) when another worker owns the claim by now.
   */
  async complete(claim: ClaimHandle): Promise<CompletedClaim> {
    const nowMs = this.clock();
    const expiresAt = expiresAtFor(nowMs, this.retentionDays);
    try {
      await this.documentClient.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [A.pk]: claim.pk },
          UpdateExpression:
            'SET #state = :done, #doneAt = :nowMs, #expiresAt = :expiresAt, #attempt = :attempt',
          ConditionExpression: OWNER_CONDITION,
          ExpressionAttributeNames: pick(NAMES, '#state', '#doneAt', '#expiresAt', '#attempt', '#owner'),
          ExpressionAttributeValues: {
            ':done': 'done',
            ':nowMs': nowMs,
            ':expiresAt': expiresAt,
            ':attempt': claim.attempt,
            ':me': claim.owner,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { key: claim.key, pk: claim.pk, doneAt: nowMs, expiresAt };
    } catch (error) {
      if (!isConditionFailure(error)) throw toClaimStoreError('complete', claim.key, error);
      throw new ClaimLostError(claim.key, claim.owner, conditionFailureItem(error)?.owner);
    }
  }

  /**
   * Frees the claim after a failed side effect so that a retry can claim it at once. Returns false, without
   * touching the item, when this worker no longer owns it (another worker took it over, or it is gone).
   */
  async release(claim: ClaimHandle): Promise<boolean> {
    try {
      await this.documentClient.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { [A.pk]: claim.pk },
          ConditionExpression: OWNER_CONDITION,
          ExpressionAttributeNames: pick(NAMES, '#owner'),
          ExpressionAttributeValues: { ':me': claim.owner },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return true;
    } catch (error) {
      // No record left means the key is free: typically our own delete landed and only its answer was lost,
      // so the SDK's retry found nothing. A record with another owner means another worker took over.
      if (isConditionFailure(error)) return error.Item === undefined;
      throw toClaimStoreError('release', claim.key, error);
    }
  }
}

/**
 * The settings the store reads, checked with the same rules as `resolveSettings` (contract/settings.ts). How
 * the margin compares with the queue's visibility timeout is checked where both are known: at synth and at
 * local-stack start.
 */
function validate(store: ClaimStore): void {
  for (const problem of [
    retentionDaysProblem(store.retentionDays),
    leaseMarginMsProblem(store.leaseMarginMs),
  ]) {
    if (problem !== undefined) throw new ClaimStoreConfigError(problem);
  }
  if (!Number.isInteger(store.concurrency) || store.concurrency < 1) {
    throw new ClaimStoreConfigError(`concurrency must be an integer >= 1, got ${store.concurrency}.`);
  }
  if (store.tableName === '') throw new ClaimStoreConfigError('tableName must not be empty.');
  if (store.keyNamespace !== undefined && (store.keyNamespace === '' || store.keyNamespace.includes('#'))) {
    throw new ClaimStoreConfigError(
      `keyNamespace ${JSON.stringify(store.keyNamespace)} must be non-empty and free of "#", which separates it from the key.`,
    );
  }
}

function toStoredItem(item: ClaimItem): Record<string, string | number> {
  return {
    [A.pk]: item.pk,
    [A.state]: item.state,
    [A.owner]: item.owner,
    ...(item.leaseUntil === undefined ? {} : { [A.leaseUntil]: item.leaseUntil }),
    [A.expiresAt]: item.expiresAt,
    [A.field]: item.field,
    [A.claimedAt]: item.claimedAt,
    ...(item.doneAt === undefined ? {} : { [A.doneAt]: item.doneAt }),
    [A.attempt]: item.attempt,
    ...(item.messageId === undefined ? {} : { [A.messageId]: item.messageId }),
  };
}

function isConditionFailure(error: unknown): error is { name: string; Item?: Record<string, unknown> } {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** The record returned by a failed condition (`ALL_OLD`), or undefined when the error is something else. */
function conditionFailureItem(error: unknown): ClaimSnapshot | undefined {
  if (!isConditionFailure(error) || error.Item === undefined) return undefined;
  return snapshotFromAttributeValues(error.Item as Parameters<typeof snapshotFromAttributeValues>[0]);
}

function pick<T extends Record<string, string>, K extends keyof T>(source: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((key) => [key, source[key]])) as Pick<T, K>;
}
