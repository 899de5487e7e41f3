/**
 * What the invariants need to know about one schedule, written down as it happens: side effects, what each
 * status handler call saw, which writes DynamoDB applied (and the claim or ledger item each left behind),
 * what answer each request got, which messages each invocation received, how it ended and which records it
 * reported failed, what TTL deleted, every move of a ledger item's current rank, when each inbound-message
 * handler call started and finished, which handler calls gave up (`DeadLetter`), and every record a consumer
 * sent to its lane's DLQ itself. Every record carries `seq`, its place in the one order in which the
 * single-threaded checker did things (virtual times tie).
 */

import type { ClaimTableOperation } from './claim-table-requests.ts';
import { isLedgerKey } from './claim-table-requests.ts';

export interface EffectRecord {
  readonly key: string;
  readonly worker: string;
  readonly at: number;
  /** The effect happened in a handler that was in flight when its invocation died. */
  readonly atCrash: boolean;
  readonly seq: number;
}

export interface StatusCall {
  readonly key: string;
  readonly worker: string;
  readonly change: string;
  readonly current: string;
  readonly seq: number;
}

/** A claim item as a write left it: who held it, in which state, until when. */
export interface ClaimSnapshot {
  readonly state: string;
  readonly owner: string;
  /** Epoch ms; absent on a done claim. */
  readonly leaseUntil: number | undefined;
  /** The queue message whose record holds it. */
  readonly messageId: string | undefined;
}

/** A write DynamoDB executed (an SDK retry of a lost answer executes again: one record per execution). */
export interface AppliedWrite {
  readonly worker: string;
  readonly operation: ClaimTableOperation;
  readonly pk: string;
  /** Its condition held and the item changed. */
  readonly succeeded: boolean;
  readonly at: number;
  readonly seq: number;
  /** For a claim key: the item after the write (undefined when there is none). */
  readonly claim: ClaimSnapshot | undefined;
}

/** What a request finally returned to the consumer: `ok` or the error's name. */
export interface RequestAnswer {
  readonly worker: string;
  readonly operation: ClaimTableOperation;
  readonly pk: string;
  readonly answer: string;
  readonly at: number;
  readonly seq: number;
}

/** A status that appeared in a ledger item's `statuses` set for the first time since the item was created. */
export interface LedgerRecording {
  readonly pk: string;
  readonly status: string;
  /** Counts the item's lives: TTL deleting it starts a new one. */
  readonly life: number;
  readonly seq: number;
}

/** An invocation handed a message by the event source (one per receive the queue counted). */
export interface Receipt {
  readonly invocation: string;
  readonly messageId: string;
  readonly receiveCount: number;
  readonly seq: number;
}

/** One call of `onMessage` (one key) or `onConversationTurn` (its messages' keys, in order). */
export interface HandlerCall {
  readonly call: number;
  readonly keys: readonly string[];
  readonly worker: string;
  readonly startedAt: number;
  readonly startSeq: number;
  /** Set when the handler returned (it did not throw, and its invocation did not die during it). */
  finishSeq?: number;
}

/** A handler call threw `DeadLetter` before its effect: it gave up on `keys` (one, or a turn's). */
export interface DeadLetterThrow {
  readonly keys: readonly string[];
  readonly worker: string;
  readonly reason: string;
  /** The receive from which the consumer may move the record to the DLQ. */
  readonly afterReceives: number;
  readonly at: number;
  readonly seq: number;
}

/** One entry of a consumer's `SendMessageBatch` to its lane's DLQ. */
export interface LaneDeadLetterEntry {
  /** The queue message it copies (its `deliveryId` attribute, kept from the record); undefined: none found. */
  readonly messageId: string | undefined;
  /** Its `deadLetterReason` attribute: a handler gave up on the record. */
  readonly reason: string | undefined;
  readonly groupId: string | undefined;
  readonly deduplicationId: string | undefined;
  /** The DLQ stored it. */
  landed: boolean;
}

/** A consumer's `SendMessageBatch` to its lane's DLQ (records it gives up on), and what became of it. */
export interface LaneDeadLetterSend {
  readonly worker: string;
  readonly lane: 'status' | 'message';
  readonly entries: readonly LaneDeadLetterEntry[];
  readonly at: number;
  readonly seq: number;
  /**
   * What the consumer was answered: `ok` (every entry stored), `failed` (an error, or entries refused);
   * undefined while no answer reached it (its invocation died first, or the call was not awaited).
   */
  answer?: 'ok' | 'failed';
  /** When the DLQ stored its entries. */
  landedAt?: number;
}

export interface TtlDeletion {
  readonly pk: string;
  readonly at: number;
  readonly seq: number;
}

export type InvocationFate = 'returned' | 'threw' | 'crash' | 'timeout';

export interface RankMove {
  readonly pk: string;
  readonly from: number;
  readonly to: number;
  readonly at: number;
}

/** The DynamoDB model's raw attribute values, as far as the journal reads them. */
type RawItem = Readonly<Record<string, { readonly S?: string; readonly N?: string; readonly SS?: string[] }>>;

type Unsequenced<T> = Omit<T, 'seq'>;

export class ProtocolJournal {
  readonly effects: EffectRecord[] = [];
  readonly statusCalls: StatusCall[] = [];
  readonly writes: AppliedWrite[] = [];
  readonly answers: RequestAnswer[] = [];
  readonly ledgerRecordings: LedgerRecording[] = [];
  readonly receipts: Receipt[] = [];
  readonly ttlDeletions: TtlDeletion[] = [];
  readonly handlerCalls: HandlerCall[] = [];
  readonly fates = new Map<string, InvocationFate>();
  /** The records each invocation that returned reported failed (`batchItemFailures`), by message id. */
  readonly batchItemFailures = new Map<string, readonly string[]>();
  readonly deadLetterThrows: DeadLetterThrow[] = [];
  readonly laneDeadLetterSends: LaneDeadLetterSend[] = [];
  /** Highest current rank ever seen per ledger item. */
  readonly highestRank = new Map<string, number>();
  readonly backwardMoves: RankMove[] = [];
  #seq = 0;
  readonly #ledgerLives = new Map<string, { life: number; statuses: Set<string> }>();

  recordEffect(effect: Unsequenced<EffectRecord>): void {
    this.effects.push({ ...effect, seq: this.#next() });
  }

  recordStatusCall(call: Unsequenced<StatusCall>): void {
    this.statusCalls.push({ ...call, seq: this.#next() });
  }

  /** A write the table executed, with the item it left (`item` undefined: no item). */
  recordWrite(write: Omit<AppliedWrite, 'seq' | 'claim'>, item: RawItem | undefined): void {
    const ledger = isLedgerKey(write.pk);
    this.writes.push({ ...write, seq: this.#next(), claim: ledger ? undefined : claimSnapshot(item) });
    if (!ledger || item === undefined) return;
    const life = this.#ledgerLife(write.pk);
    for (const status of item.statuses?.SS ?? []) {
      if (life.statuses.has(status)) continue;
      life.statuses.add(status);
      this.ledgerRecordings.push({ pk: write.pk, status, life: life.life, seq: this.#next() });
    }
    const rank = item.currentRank?.N;
    if (rank !== undefined) this.observeRank(write.pk, Number(rank), write.at);
  }

  recordAnswer(answer: Unsequenced<RequestAnswer>): void {
    this.answers.push({ ...answer, seq: this.#next() });
  }

  recordReceipt(receipt: Unsequenced<Receipt>): void {
    this.receipts.push({ ...receipt, seq: this.#next() });
  }

  /** A message handler starts on `keys`; call the returned function when it returns. */
  recordHandlerStart(keys: readonly string[], worker: string, at: number): () => void {
    const call: HandlerCall = {
      call: this.handlerCalls.length + 1,
      keys,
      worker,
      startedAt: at,
      startSeq: this.#next(),
    };
    this.handlerCalls.push(call);
    return () => {
      call.finishSeq = this.#next();
    };
  }

  recordDeadLetterThrow(thrown: Unsequenced<DeadLetterThrow>): void {
    this.deadLetterThrows.push({ ...thrown, seq: this.#next() });
  }

  /** A consumer sent `entries` to its lane's DLQ; the returned record is updated as the send lands and answers. */
  recordLaneDeadLetterSend(
    send: Omit<LaneDeadLetterSend, 'seq' | 'answer' | 'landedAt'>,
  ): LaneDeadLetterSend {
    const recorded: LaneDeadLetterSend = { ...send, seq: this.#next() };
    this.laneDeadLetterSends.push(recorded);
    return recorded;
  }

  recordTtlDeletion(pk: string, at: number): void {
    this.ttlDeletions.push({ pk, at, seq: this.#next() });
    const life = this.#ledgerLives.get(pk);
    if (life !== undefined) this.#ledgerLives.set(pk, { life: life.life + 1, statuses: new Set() });
    // A deleted ledger item starts again from no rank: a lower rank after it is not a backward move.
    this.highestRank.delete(pk);
  }

  /** Records a ledger item's current rank after a write; a rank below one seen before is a backward move. */
  observeRank(pk: string, rank: number, at: number): void {
    const highest = this.highestRank.get(pk);
    if (highest !== undefined && rank < highest) this.backwardMoves.push({ pk, from: highest, to: rank, at });
    if (highest === undefined || rank > highest) this.highestRank.set(pk, rank);
  }

  #next(): number {
    return ++this.#seq;
  }

  #ledgerLife(pk: string): { life: number; statuses: Set<string> } {
    let life = this.#ledgerLives.get(pk);
    if (life === undefined) {
      life = { life: 1, statuses: new Set() };
      this.#ledgerLives.set(pk, life);
    }
    return life;
  }
}

function claimSnapshot(item: RawItem | undefined): ClaimSnapshot | undefined {
  if (item === undefined) return undefined;
  const leaseUntil = item.leaseUntil?.N;
  return {
    state: item.state?.S ?? '?',
    owner: item.owner?.S ?? '?',
    leaseUntil: leaseUntil === undefined ? undefined : Number(leaseUntil),
    messageId: item.messageId?.S,
  };
}
