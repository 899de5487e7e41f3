/**
 * The claim item as stored in the claim table (docs/design.md §2), and how to read one back from either shape
 * DynamoDB returns it in: native values (DocumentClient `Attributes`) or raw attribute values
 * (`ConditionalCheckFailedException.Item`, which the DocumentClient does not unmarshall).
 */
import { CLAIM_TABLE_SCHEMA } from '../../contract/claim-table-schema.ts';

export type ClaimState = 'processing' | 'done';

/** Attribute names of the claim item; the partition key and TTL attribute come from the shared schema. */
export const CLAIM_ATTRIBUTES = {
  pk: CLAIM_TABLE_SCHEMA.partitionKey,
  expiresAt: CLAIM_TABLE_SCHEMA.timeToLiveAttribute,
  state: 'state',
  owner: 'owner',
  leaseUntil: 'leaseUntil',
  field: 'field',
  claimedAt: 'claimedAt',
  doneAt: 'doneAt',
  attempt: 'attempt',
  messageId: 'messageId',
} as const;

/** A stored claim as written by {@link ClaimStore}. Times: `leaseUntil`, `claimedAt`, `doneAt` in epoch ms;
 * `expiresAt` in epoch seconds (DynamoDB TTL). */
export interface ClaimItem {
  readonly pk: string;
  readonly state: ClaimState;
  readonly owner: string;
  /** Absent on a claim recorded directly as done (no side effect, so nothing to lease). */
  readonly leaseUntil?: number;
  readonly expiresAt: number;
  readonly field: string;
  readonly claimedAt: number;
  readonly attempt: number;
  readonly doneAt?: number;
  /** The queue message whose delivery took the claim (docs/design.md §2 "In flight"). */
  readonly messageId?: string;
}

/** A claim item read back from DynamoDB: every attribute may be missing or foreign, so nothing is assumed. */
export interface ClaimSnapshot {
  readonly state: string | undefined;
  readonly owner: string | undefined;
  readonly leaseUntil: number | undefined;
  readonly expiresAt: number | undefined;
  readonly field: string | undefined;
  readonly claimedAt: number | undefined;
  readonly doneAt: number | undefined;
  readonly attempt: number | undefined;
  readonly messageId: string | undefined;
}

/** Reads a claim from DocumentClient (native) values. */
export function snapshotFromItem(item: Record<string, unknown>): ClaimSnapshot {
  return {
    state: asString(item[CLAIM_ATTRIBUTES.state]),
    owner: asString(item[CLAIM_ATTRIBUTES.owner]),
    leaseUntil: asNumber(item[CLAIM_ATTRIBUTES.leaseUntil]),
    expiresAt: asNumber(item[CLAIM_ATTRIBUTES.expiresAt]),
    field: asString(item[CLAIM_ATTRIBUTES.field]),
    claimedAt: asNumber(item[CLAIM_ATTRIBUTES.claimedAt]),
    doneAt: asNumber(item[CLAIM_ATTRIBUTES.doneAt]),
    attempt: asNumber(item[CLAIM_ATTRIBUTES.attempt]),
    messageId: asString(item[CLAIM_ATTRIBUTES.messageId]),
  };
}

/** A raw DynamoDB attribute value, reduced to the scalar types a claim item uses. */
type RawAttributeValue = { S?: string; N?: string } | undefined;

/** Reads a claim from raw attribute values (`{ S: … }`, `{ N: … }`). */
export function snapshotFromAttributeValues(item: Record<string, RawAttributeValue>): ClaimSnapshot {
  const native: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) {
    if (value?.S !== undefined) native[name] = value.S;
    else if (value?.N !== undefined) native[name] = Number(value.N);
  }
  return snapshotFromItem(native);
}

function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
