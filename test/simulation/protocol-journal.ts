/**
 * What the invariants need to know about one schedule, written down as it happens: side effects, what each
 * status handler call saw, which writes DynamoDB applied and what answer each request got, how every
 * invocation ended, and every move of a ledger item's current rank.
 */
import type { ClaimTableOperation } from './claim-table-requests.ts';

export interface EffectRecord {
  readonly key: string;
  readonly worker: string;
  readonly at: number;
  /** The effect happened in a handler that was in flight when its invocation died. */
  readonly atCrash: boolean;
}

export interface StatusCall {
  readonly key: string;
  readonly worker: string;
  readonly change: string;
  readonly current: string;
}

/** A write DynamoDB executed (an SDK retry of a lost answer executes again: one record per execution). */
export interface AppliedWrite {
  readonly worker: string;
  readonly operation: ClaimTableOperation;
  readonly pk: string;
  /** Its condition held and the item changed. */
  readonly succeeded: boolean;
}

/** What a request finally returned to the consumer: `ok` or the error's name. */
export interface RequestAnswer {
  readonly worker: string;
  readonly operation: ClaimTableOperation;
  readonly pk: string;
  readonly answer: string;
}

export type InvocationFate = 'returned' | 'threw' | 'crash' | 'timeout';

export interface RankMove {
  readonly pk: string;
  readonly from: number;
  readonly to: number;
  readonly at: number;
}

export class ProtocolJournal {
  readonly effects: EffectRecord[] = [];
  readonly statusCalls: StatusCall[] = [];
  readonly writes: AppliedWrite[] = [];
  readonly answers: RequestAnswer[] = [];
  readonly fates = new Map<string, InvocationFate>();
  /** Highest current rank ever seen per ledger item. */
  readonly highestRank = new Map<string, number>();
  readonly backwardMoves: RankMove[] = [];

  /** Records a ledger item's current rank after a write; a rank below one seen before is a backward move. */
  observeRank(pk: string, rank: number, at: number): void {
    const highest = this.highestRank.get(pk);
    if (highest !== undefined && rank < highest) this.backwardMoves.push({ pk, from: highest, to: rank, at });
    if (highest === undefined || rank > highest) this.highestRank.set(pk, rank);
  }
}
