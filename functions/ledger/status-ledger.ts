import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { expiresAtFor } from '../claims/lease.ts';
import { storageKey } from '../claims/storage-key.ts';
import type { StatusObservation } from './status-event.ts';
import { rankOfStatus } from './status-rank.ts';

/**
 * The status ledger (docs/design.md §3), stored in the claim table beside the claims, one item per outbound message
 * (per participant for group sends):
 *
 *   pk            `[<ns>#]ledger:<wamid>[:<recipient_participant_id>]`
 *   wamid, recipientParticipantId
 *   currentStatus, currentRank   the highest-ranked status seen (`failed` is terminal)
 *   statuses      string set of every status seen
 *   at_<status>   epoch seconds Meta reported for that status (the first one written wins)
 *   change_<status>  what recording that status did the first time (`advanced` | `merged`), so that every
 *                 attempt of the same status event (a retry after a failed handler, a lost answer, a
 *                 takeover) tells its handler the same thing, not what the earlier attempt left behind
 *   expiresAt     TTL, refreshed on every write, same retention as the claims
 *
 * No claim key starts with `ledger:` (docs/design.md §1 has no such field), so the two never collide.
 */

export interface StatusLedgerView {
  readonly wamid: string;
  readonly recipientParticipantId: string | undefined;
  readonly current: string;
  readonly currentRank: number;
  /** Status → epoch seconds, for every status seen so far, late ones included. */
  readonly times: Readonly<Record<string, number>>;
}

/**
 * What this status event did to the ledger when it was first recorded; the same on every attempt of the event.
 * - `advanced`: the status became current.
 * - `merged`: a lower-ranked (or post-`failed`) status arrived late; its time is recorded, current unchanged.
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
   * what every attempt reports: a retry must not read its own earlier write as somebody else's.
   */
  async record(observation: StatusObservation): Promise<StatusLedgerUpdate> {
    const rank = rankOfStatus(observation.status);
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
          ConditionExpression: 'attribute_not_exists(currentRank) OR currentRank < :rank',
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
  return {
    wamid: String(item.wamid),
    recipientParticipantId:
      item.recipientParticipantId === undefined ? undefined : String(item.recipientParticipantId),
    current: String(item.currentStatus),
    currentRank: Number(item.currentRank),
    times,
  };
}
