/**
 * The simulation's exactly-once bookkeeping, kept only while it can still change (docs/decisions.md, "A run keeps
 * the events in flight, not the events sent"). An event key has a record while a copy of it can still reach a
 * handler: Meta may still POST it (its first send, a retry or a re-send is scheduled or under way), or one of its
 * messages is still in a lane's queue (visible or in flight). When neither holds, nothing in the model can present
 * the key again; at the first `sweep()` `graceMs` later (the consumer's timeout: an invocation that received its
 * last message has ended by then) the record is folded into the run's counters and `onRetired` lets the simulation
 * delete what the claim table holds for it. Memory then follows the events in flight, not the events sent. The
 * simulation sweeps from its once-a-second sample, so that the bookkeeping sets no timer of its own and the run's
 * instants are the same with it as without it.
 *
 * An effect of a key already folded (a copy the bookkeeping did not see) cannot be checked against its earlier
 * effects: it is counted as a violation, so that a wrong retirement fails the exactly-once verdict instead of
 * passing unseen.
 */
import type { Engine } from '../virtual-time/engine.ts';
import type { TrafficEvent } from './traffic.ts';

export interface EventTotals {
  /** Keys accepted (200) at least once. */
  keys: number;
  /** Keys effected at least once. */
  effected: number;
  /** Accepted keys never effected. */
  missing: number;
  /** Accepted keys effected more than once (late effects included). */
  repeated: number;
  /** Accepted keys not effected exactly once (late effects included). */
  violations: number;
  /** Acceptances beyond each key's first. */
  duplicateAcceptances: number;
  /** Effects of keys already folded into these counters. */
  lateEffects: number;
}

interface LiveEvent {
  readonly number: number;
  /** A status's outbound message, whose status ledger item its statuses share; undefined for a message. */
  readonly ledgerWamid: string | undefined;
  acceptedAt: number | undefined;
  acceptances: number;
  effects: number;
  metaDone: boolean;
  /** Its messages in the lanes' queues. */
  queued: number;
  retiring: boolean;
}

export interface EventBookOptions {
  readonly engine: Engine;
  /** How long after its last copy left a key is folded. */
  readonly graceMs: number;
  /**
   * The key is folded: its claim can be deleted, and `lastOfWamid`, when set, is the outbound message whose
   * statuses are now all folded (its status ledger item can go too).
   */
  readonly onRetired: (key: string, lastOfWamid: string | undefined) => void;
}

export class EventBook {
  readonly #options: EventBookOptions;
  readonly #live = new Map<string, LiveEvent>();
  /** Outbound messages: how many of their statuses are still live. */
  readonly #statusesLive = new Map<string, number>();
  /** Keys free of copies, in the order they became free (so by due time): [key, due at] pairs. */
  #retiring: (string | number)[] = [];
  #retiringHead = 0;
  readonly #totals: EventTotals = {
    keys: 0,
    effected: 0,
    missing: 0,
    repeated: 0,
    violations: 0,
    duplicateAcceptances: 0,
    lateEffects: 0,
  };
  peakLive = 0;

  constructor(options: EventBookOptions) {
    this.#options = options;
  }

  /** Keys with a record now. */
  get live(): number {
    return this.#live.size;
  }

  /** Meta will POST this event (called once, when its first POST is scheduled). */
  register(event: TrafficEvent): void {
    const ledgerWamid = event.lane === 'status' ? event.wamid : undefined;
    this.#live.set(event.key, {
      number: event.number,
      ledgerWamid,
      acceptedAt: undefined,
      acceptances: 0,
      effects: 0,
      metaDone: false,
      queued: 0,
      retiring: false,
    });
    if (this.#live.size > this.peakLive) this.peakLive = this.#live.size;
    if (ledgerWamid !== undefined)
      this.#statusesLive.set(ledgerWamid, (this.#statusesLive.get(ledgerWamid) ?? 0) + 1);
  }

  /** Accepted (200); true the first time. */
  accepted(key: string): boolean {
    const event = this.#event(key);
    event.acceptances++;
    if (event.acceptedAt !== undefined) return false;
    event.acceptedAt = this.#options.engine.now;
    return true;
  }

  /** The business number of a key with a record. */
  numberOf(key: string): number {
    return this.#event(key).number;
  }

  /** Meta will not POST it again. */
  metaDone(key: string): void {
    const event = this.#event(key);
    event.metaDone = true;
    this.#retireWhenFree(key, event);
  }

  /** A message carrying it was sent to a lane's queue. */
  enqueued(key: string): void {
    this.#event(key).queued++;
  }

  /** A message carrying it left its queue (deleted, or moved to the DLQ). */
  left(key: string): void {
    const event = this.#event(key);
    event.queued--;
    this.#retireWhenFree(key, event);
  }

  /** A handler starts on the key: when it was first accepted and its number (undefined: already folded). */
  effectStarts(key: string): { acceptedAt: number | undefined; number: number } | undefined {
    const event = this.#live.get(key);
    return event === undefined ? undefined : { acceptedAt: event.acceptedAt, number: event.number };
  }

  /** A handler finished on the key. */
  effectEnds(key: string): void {
    const event = this.#live.get(key);
    if (event === undefined) this.#totals.lateEffects++;
    else event.effects++;
  }

  /** The run's counters: the folded keys' and, as they stand, the live ones'. */
  totals(): EventTotals {
    const totals = { ...this.#totals };
    for (const event of this.#live.values()) fold(totals, event);
    totals.repeated += totals.lateEffects;
    totals.violations += totals.lateEffects;
    return totals;
  }

  /** Folds every live key now (the run is over): `onRetired` for each, so that nothing is left behind. */
  retireAll(): void {
    for (const [key, event] of [...this.#live]) this.#retire(key, event);
  }

  #event(key: string): LiveEvent {
    const event = this.#live.get(key);
    if (event === undefined) throw new Error(`The simulation's bookkeeping has no live event ${key}.`);
    return event;
  }

  #retireWhenFree(key: string, event: LiveEvent): void {
    if (!event.metaDone || event.queued > 0 || event.retiring) return;
    event.retiring = true;
    this.#retiring.push(key, this.#options.engine.now + this.#options.graceMs);
  }

  /** Folds the keys free of copies for `graceMs` by now. */
  sweep(): void {
    const now = this.#options.engine.now;
    const queue = this.#retiring;
    let head = this.#retiringHead;
    while (head < queue.length && (queue[head + 1] as number) <= now) {
      const key = queue[head] as string;
      head += 2;
      const event = this.#live.get(key);
      // Nothing can have brought a copy back: Meta is done, and the receiver enqueues only what Meta POSTs.
      if (event !== undefined) this.#retire(key, event);
    }
    if (head > 8192 && head * 2 > queue.length) {
      this.#retiring = queue.slice(head);
      head = 0;
    }
    this.#retiringHead = head;
  }

  #retire(key: string, event: LiveEvent): void {
    this.#live.delete(key);
    fold(this.#totals, event);
    let lastOfWamid: string | undefined;
    if (event.ledgerWamid !== undefined) {
      const left = (this.#statusesLive.get(event.ledgerWamid) ?? 1) - 1;
      if (left > 0) this.#statusesLive.set(event.ledgerWamid, left);
      else {
        this.#statusesLive.delete(event.ledgerWamid);
        lastOfWamid = event.ledgerWamid;
      }
    }
    this.#options.onRetired(key, lastOfWamid);
  }
}

function fold(totals: EventTotals, event: LiveEvent): void {
  if (event.effects > 0) totals.effected++;
  if (event.acceptances === 0) return;
  totals.keys++;
  totals.duplicateAcceptances += event.acceptances - 1;
  if (event.effects === 0) totals.missing++;
  if (event.effects > 1) totals.repeated++;
  if (event.effects !== 1) totals.violations++;
}
