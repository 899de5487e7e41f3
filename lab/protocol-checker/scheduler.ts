/**
 * A single-threaded scheduler over virtual time. Everything that takes time in a schedule (a DynamoDB request
 * reaching the table, its answer coming back, an SQS call, a handler's side effect, a sleep, a Lambda
 * deadline, Meta sending a body) is a pending operation due at a virtual instant. A step completes the
 * earliest one (ties broken by a seeded draw), moves the clock there, then lets the promise continuations run
 * until every worker waits on its next operation. The order of completions is thus a function of the
 * seeded latencies alone: same seed, same interleaving.
 *
 * Only one operation completes per step, and only the continuations of its promise run in that step, so the
 * code that runs during a step belongs to that operation's worker (`currentWorker`): the DynamoDB and SQS
 * interceptors use it to tell which invocation sent a request.
 *
 * The timers are the lab's one engine's (../virtual-time/engine.ts), each with a seeded tie; this module adds
 * the workers: whose operation completes, which are busy, and what dies with a worker.
 */
import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import { Engine, type Timer } from '../virtual-time/engine.ts';

export interface OperationSpec<T> {
  readonly worker: string;
  readonly label: string;
  readonly delayMs: number;
  /** Runs when the operation completes; its value, or what it throws, settles the operation's promise. */
  readonly complete: () => T | PromiseLike<T>;
  /** Runs instead of `complete` when the worker dies with this operation in flight. */
  readonly abandon?: () => void;
  /** A timer that does not make its worker busy (a deadline, a TTL sweep). @default false */
  readonly background?: boolean;
}

export interface PendingOperation {
  readonly id: number;
  readonly worker: string;
  readonly label: string;
  /** Virtual epoch ms at which it completes. */
  readonly at: number;
  readonly background: boolean;
}

interface QueuedOperation extends PendingOperation {
  readonly timer: Timer;
  complete(): void;
  abandon(): void;
}

/** Decides, just before `operation` completes, whether it does: false means the guard disposed of it. */
export type FireGuard = (operation: PendingOperation) => boolean;

export class SimulationStuckError extends Error {
  constructor(detail: string) {
    super(`The simulation is stuck: ${detail}`);
    this.name = 'SimulationStuckError';
  }
}

/** Rounds of the event loop a step waits, beyond the first, for every worker to reach its next operation. */
const EXTRA_SETTLE_ROUNDS = 20;

export class Scheduler {
  readonly #engine: Engine;
  #current = 'scheduler';
  #sequence = 0;
  #pendingCount = 0;
  /** Each worker's operations in flight, in the order they were scheduled. */
  readonly #byWorker = new Map<string, Set<QueuedOperation>>();
  readonly #random: SeededRandom;
  #guard: FireGuard | undefined;
  #settled: (() => boolean) | undefined;
  #last: QueuedOperation | undefined;

  constructor(startMs: number, random: SeededRandom) {
    this.#engine = new Engine(startMs);
    this.#random = random;
  }

  /** Virtual epoch ms. */
  get now(): number {
    return this.#engine.now;
  }

  /** The worker whose operation completed in the current step. */
  get currentWorker(): string {
    return this.#current;
  }

  setFireGuard(guard: FireGuard): void {
    this.#guard = guard;
  }

  /** True once every worker waits on an operation; checked after each step (see `SimulationStuckError`). */
  setSettledCheck(settled: () => boolean): void {
    this.#settled = settled;
  }

  schedule<T>(spec: OperationSpec<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const delayMs = Math.max(0, spec.delayMs);
      const timer = this.#engine.after(delayMs, () => this.#fire(operation), this.#random.next());
      const operation: QueuedOperation = {
        id: ++this.#sequence,
        worker: spec.worker,
        label: spec.label,
        at: timer.at,
        background: spec.background ?? false,
        timer,
        complete: () => {
          try {
            resolve(spec.complete());
          } catch (error) {
            reject(error);
          }
        },
        abandon: () => spec.abandon?.(),
      };
      const operations = this.#byWorker.get(spec.worker) ?? new Set();
      operations.add(operation);
      this.#byWorker.set(spec.worker, operations);
      this.#pendingCount++;
    });
  }

  /** A virtual sleep of `worker`. */
  sleep(worker: string, ms: number, label = `sleep ${ms}ms`): Promise<void> {
    return this.schedule({ worker, label, delayMs: ms, complete: () => undefined });
  }

  /** The worker died: its operations in flight are abandoned (their `abandon` runs) and never settle. */
  abandonWorker(worker: string): void {
    for (const operation of this.#take(worker)) operation.abandon();
  }

  /** Removes the worker's operations without running anything (a deadline after the invocation returned). */
  cancelWorker(worker: string): void {
    this.#take(worker);
  }

  /** Whether `worker` waits on an operation that is not a background timer. */
  isBusy(worker: string): boolean {
    for (const operation of this.#byWorker.get(worker) ?? []) if (!operation.background) return true;
    return false;
  }

  pendingCount(): number {
    return this.#pendingCount;
  }

  /** Completes the earliest pending operation and lets the workers run on. False when nothing is pending. */
  async step(): Promise<boolean> {
    const timer = this.#engine.takeNext();
    if (timer === undefined) return false;
    timer.fire();
    await this.#settle(this.#last as QueuedOperation);
    this.#current = 'scheduler';
    return true;
  }

  #fire(operation: QueuedOperation): void {
    this.#last = operation;
    this.#current = operation.worker;
    if (this.#guard !== undefined && !this.#guard(operation)) return;
    // The guard may have ended the worker, and this operation with it.
    if (!this.#byWorker.get(operation.worker)?.has(operation)) return;
    this.#remove(operation);
    operation.complete();
  }

  async #settle(operation: PendingOperation): Promise<void> {
    await nextTurn();
    if (this.#settled === undefined) return;
    for (let round = 0; !this.#settled(); round++) {
      if (round >= EXTRA_SETTLE_ROUNDS) {
        throw new SimulationStuckError(
          `after ${operation.worker} ${operation.label}, a worker awaits something outside the simulation`,
        );
      }
      await nextTurn();
    }
  }

  #remove(operation: QueuedOperation): void {
    const operations = this.#byWorker.get(operation.worker);
    if (operations?.delete(operation)) this.#pendingCount--;
    if (operations?.size === 0) this.#byWorker.delete(operation.worker);
  }

  #take(worker: string): QueuedOperation[] {
    const taken = [...(this.#byWorker.get(worker) ?? [])];
    for (const operation of taken) {
      this.#remove(operation);
      this.#engine.cancel(operation.timer);
    }
    return taken;
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
