import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { expiresAtFor } from '../claims/lease.ts';
import { storageKey } from '../claims/storage-key.ts';
import type { StatusObservation } from './status-event.ts';
import {
  highestStatus,
  LEGACY_FAILED_RANK,
  rankOfStatus,
  STATUS_RANK,
  statusesRankedAbove,
} from './status-rank.ts';

/**
 * The status ledger (docs/design.md §3), stored in the claim table beside the claims, one item per outbound message
 * (per participant for group sends):
 *
 *   pk            `[<ns>#]ledger:<wamid>[:<participant>]`, the participant as in the event key: phone
 *                 number (`recipient_participant_id`) else BSUID (`recipient_participant_user_id`)
 *   wamid, recipientParticipantId
 *   currentStatus, currentRank   the highest-ranked status seen (status-rank.ts: `failed` ranks between
 *                 `sent` and `delivered`; items of older releases may hold `failed` at rank 5, see below)
 *   statuses      string set of every status seen
 *   at_<status>   epoch seconds Meta reported for that status (the first one written wins)
 *   change_<status>  what recording that status did the first time (`advanced` | `merged`), so that every
 *                 attempt of the same status event (a retry after a failed handler, a lost answer, a
 *                 takeover) tells its handler the same thing, not what the earlier attempt left behind
 *   expiresAt     TTL, refreshed on every write, same retention as the claims
 *
 * No claim key starts with `ledger:` (docs/design.md §1 has no such field), so the two never collide.
 *
 * Items of older releases stored `failed` at LEGACY_FAILED_RANK (5), above everything. They are read by the
 * current rule rather than rewritten: a status that ranks above `failed` advances over such an item unless a
 * status ranking above it was recorded too (the old ranks let `failed` overtake a `read`, and a late
 * `delivered` must not then take the message back below `read`), and its view names the highest recorded
 * status. So nothing waits for those items to expire, and a deploy needs no migration.
 */

/**
 * A sent message's statuses as the ledger holds them, handed to `onStatus` as `ledger`.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onStatus({ ledger, logger }) {
 *     const readAt = ledger.times.read;
 *     if (readAt !== undefined) logger.info('Read', { wamid: ledger.wamid, readAt });
 *   },
 * });
 * ```
 */
export interface StatusLedgerView {
  /** The sent message's id, as Meta returned it to the send call. */
  readonly wamid: string;
  /** Group sends: the participant's phone number, else their BSUID (docs/design.md §1), as in the event key. */
  readonly recipientParticipantId: string | undefined;
  /** The highest-ranked status seen: `sent` < `failed` < `delivered` < `read` < `played`. */
  readonly current: string;
  readonly currentRank: number;
  /** Status → epoch seconds, for every status seen so far, late ones included. */
  readonly times: Readonly<Record<string, number>>;
}

/**
 * What this status event did to the ledger when it was first recorded; the same on every attempt of the event.
 * - `advanced`: the status became current.
 * - `merged`: a status ranked no higher than the current one arrived (a late `delivered` after `read`, a
 *   `failed` after `delivered`); its time is recorded, current unchanged.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onStatus({ ledger, ledgerChange }) {
 *     if (ledgerChange === 'merged') return; // a late status: nothing to show
 *     await fetch('https://crm.example.com/deliveries', { method: 'POST', body: JSON.stringify(ledger) });
 *   },
 * });
 * ```
 */
export type StatusLedgerChange = 'advanced' | 'merged';

export interface StatusLedgerUpdate {
  readonly change: StatusLedgerChange;
  readonly view: StatusLedgerView;
}

export interface StatusLedgerOptions {
  readonly documentClient: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Same namespace as the claim store, so that consumers sharing a table keep separate ledgers. */
  readonly keyNamespace?: string | undefined;
  readonly retentionDays: number;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
}

const TIME_PREFIX = 'at_';
const CHANGE_PREFIX = 'change_';

export function ledgerKey(wamid: string, recipientParticipantId?: string, keyNamespace?: string): string {
  const key =
    recipientParticipantId === undefined ? `ledger:${wamid}` : `ledger:${wamid}:${recipientParticipantId}`;
  return storageKey(key, keyNamespace);
}

export class StatusLedger {
  readonly #documentClient: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #keyNamespace: string | undefined;
  readonly #retentionDays: number;
  readonly #clock: () => number;

  constructor(options: StatusLedgerOptions) {
    this.#documentClient = options.documentClient;
    this.#tableName = options.tableName;
    this.#keyNamespace = options.keyNamespace || undefined;
    this.#retentionDays = options.retentionDays;
    this.#clock = options.clock ?? Date.now;
  }

  /**
   * One conditional write advances the current status when the new one ranks higher. When the condition
   * fails, a second, unconditional write records the late status's time only. Both are idempotent, so a
   * retried event changes nothing, and both keep the change of the first attempt (`if_not_exists`), which is
   * what every attempt reports: a retry must not read its own earlier write as somebody else's. That holds
   * because the stored rank never falls below a rank it held (the one exception, an item's legacy `failed`
   * at rank 5 giving way, lets through only statuses that rank above `failed`), so a status that was merged
   * once is merged on every later attempt, and one that advanced keeps its stored `advanced`.
   */
  async record(observation: StatusObservation): Promise<StatusLedgerUpdate> {
    const rank = rankOfStatus(observation.status);
    const overLegacyFailed = advanceOverLegacyFailed(observation.status);
    const key = { pk: ledgerKey(observation.wamid, observation.recipientParticipantId, this.#keyNamespace) };
    const names = {
      '#time': `${TIME_PREFIX}${observation.status}`,
      '#change': `${CHANGE_PREFIX}${observation.status}`,
    };
    const common = {
      ':time': observation.timestamp,
      ':statuses': new Set([observation.status]),
      ':expiresAt': expiresAtFor(this.#clock(), this.#retentionDays),
    };
    try {
      const advanced = await this.#documentClient.send(
        new UpdateCommand({
          TableName: this.#tableName,
          Key: key,
          UpdateExpression:
            'SET currentStatus = :status, currentRank = :rank, #time = if_not_exists(#time, :time), ' +
            '#change = if_not_exists(#change, :advanced), ' +
            'wamid = :wamid, expiresAt = :expiresAt' +
            (observation.recipientParticipantId === undefined
              ? ''
              : ', recipientParticipantId = :participant') +
            ' ADD statuses :statuses',
          ConditionExpression: `attribute_not_exists(currentRank) OR currentRank < :rank${overLegacyFailed.condition}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ...common,
            ':status': observation.status,
            ':rank': rank,
            ':advanced': 'advanced',
            ':wamid': observation.wamid,
            ...(observation.recipientParticipantId === undefined
              ? {}
              : { ':participant': observation.recipientParticipantId }),
            ...overLegacyFailed.values,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { change: changeOf(advanced.Attributes, observation.status), view: toView(advanced.Attributes) };
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
    }
    const merged = await this.#documentClient.send(
      new UpdateCommand({
        TableName: this.#tableName,
        Key: key,
        UpdateExpression:
          'SET #time = if_not_exists(#time, :time), #change = if_not_exists(#change, :merged), ' +
          'expiresAt = :expiresAt ADD statuses :statuses',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...common, ':merged': 'merged' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    if (merged.Attributes?.currentRank === undefined) {
      // The item expired and TTL removed it between the two writes: start over on the fresh item.
      return this.record(observation);
    }
    return { change: changeOf(merged.Attributes, observation.status), view: toView(merged.Attributes) };
  }

  /** The ledger's view of one message (one participant for group sends), or undefined if none was seen. */
  async view(wamid: string, recipientParticipantId?: string): Promise<StatusLedgerView | undefined> {
    const result = await this.#documentClient.send(
      new GetCommand({
        TableName: this.#tableName,
        Key: { pk: ledgerKey(wamid, recipientParticipantId, this.#keyNamespace) },
        ConsistentRead: true,
      }),
    );
    return result.Item === undefined ? undefined : toView(result.Item);
  }
}

/**
 * The part of the advance condition that lets `status` replace a `failed` stored at LEGACY_FAILED_RANK: only
 * a status that ranks above `failed`, and only when no status ranking above it was recorded. Empty for the
 * others, which such an item merges as it would a `failed` at its current rank.
 */
function advanceOverLegacyFailed(status: string): {
  readonly condition: string;
  readonly values: Record<string, unknown>;
} {
  if (rankOfStatus(status) <= (STATUS_RANK.failed as number)) return { condition: '', values: {} };
  const above = statusesRankedAbove(status);
  const values: Record<string, unknown> = { ':legacyFailedRank': LEGACY_FAILED_RANK };
  let condition = ' OR (currentRank = :legacyFailedRank';
  for (const [i, higher] of above.entries()) {
    values[`:above${i}`] = higher;
    condition += ` AND NOT contains(statuses, :above${i})`;
  }
  return { condition: `${condition})`, values };
}

function changeOf(item: Record<string, unknown> | undefined, status: string): StatusLedgerChange {
  const change = item?.[`${CHANGE_PREFIX}${status}`];
  if (change !== 'advanced' && change !== 'merged') {
    throw new Error(`The status ledger write returned no recorded change for status ${status}.`);
  }
  return change;
}

function toView(item: Record<string, unknown> | undefined): StatusLedgerView {
  if (item === undefined) throw new Error('The status ledger write returned no item.');
  const times: Record<string, number> = {};
  for (const [name, value] of Object.entries(item)) {
    if (name.startsWith(TIME_PREFIX)) times[name.slice(TIME_PREFIX.length)] = Number(value);
  }
  // An older release's `failed` (rank 5) reads as the highest status recorded, by the current ranks.
  const current =
    Number(item.currentRank) === LEGACY_FAILED_RANK
      ? (highestStatus(recordedStatuses(item)) ?? String(item.currentStatus))
      : String(item.currentStatus);
  return {
    wamid: String(item.wamid),
    recipientParticipantId:
      item.recipientParticipantId === undefined ? undefined : String(item.recipientParticipantId),
    current,
    currentRank:
      Number(item.currentRank) === LEGACY_FAILED_RANK ? rankOfStatus(current) : Number(item.currentRank),
    times,
  };
}

function recordedStatuses(item: Record<string, unknown>): Iterable<string> {
  const statuses = item.statuses;
  return statuses instanceof Set ? [...statuses].map(String) : [];
}
