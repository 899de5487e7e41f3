/**
 * How an ordered lane's batch is run (docs/design.md §8): records grouped by conversation (their
 * `MessageGroupId`), each group's records in the order SQS handed them out, cut into turns. Pure.
 *
 * Without bursts every record is a turn of its own. With a burst window, a turn is the run of records sent
 * within the window of its first one; the last turn of a group whose window is still open is not run at all
 * but handed back unclaimed until the window closes, so that what the person types meanwhile joins it (SQS
 * keeps the group locked while it waits, so nothing of the conversation overtakes it).
 */
import type { QueueRecord } from '../queue/consumer-queue-port.ts';
import type { TurnOutcome } from './consumer-ports.ts';

export interface ConversationGroup {
  /** Turns to run one after the other; never empty. */
  readonly turns: readonly (readonly QueueRecord[])[];
}

export interface HeldForBurst {
  readonly record: QueueRecord;
  /** Whole seconds until the window of its turn closes (SQS visibility has one-second steps). */
  readonly delaySeconds: number;
}

export interface TurnPlan {
  /** Records to claim and run, in batch order. */
  readonly ready: readonly QueueRecord[];
  readonly groups: readonly ConversationGroup[];
  /** Records of turns whose window is still open: handed back unclaimed. */
  readonly held: readonly HeldForBurst[];
}

export interface TurnPlanOptions {
  /** 0: no bursts, every record a turn. With a turn handler and 0, a group's records make one turn. */
  readonly burstWindowMs: number;
  /** Whether messages go to `onConversationTurn` (turns of several records) or one by one. */
  readonly handlesTurns: boolean;
  /** Epoch ms. */
  readonly now: number;
}

/** A record without a group (a standard queue's) is a conversation of its own. */
export function groupOf(record: QueueRecord): string {
  return record.attributes?.MessageGroupId ?? `record:${record.messageId}`;
}

export function planTurns(records: readonly QueueRecord[], options: TurnPlanOptions): TurnPlan {
  const byGroup = new Map<string, QueueRecord[]>();
  for (const record of records) {
    const group = byGroup.get(groupOf(record));
    if (group === undefined) byGroup.set(groupOf(record), [record]);
    else group.push(record);
  }
  const groups: ConversationGroup[] = [];
  const held: HeldForBurst[] = [];
  const readyIds = new Set<string>();
  for (const members of byGroup.values()) {
    const turns = cutIntoTurns(members, options);
    // Only the last turn can still be open, unless the queue's clock runs ahead of ours: then hold every turn
    // from the first open one on, each until the first's window closes (they must not overtake it).
    const firstOpen = turns.findIndex((turn) => (windowEnd(turn, options) ?? 0) > options.now);
    if (firstOpen >= 0) {
      const closesAt = windowEnd(turns[firstOpen] as QueueRecord[], options) as number;
      const delaySeconds = Math.ceil((closesAt - options.now) / 1000);
      for (const turn of turns.splice(firstOpen))
        for (const record of turn) held.push({ record, delaySeconds });
    }
    if (turns.length === 0) continue;
    groups.push({ turns });
    for (const turn of turns) for (const record of turn) readyIds.add(record.messageId);
  }
  return { ready: records.filter((record) => readyIds.has(record.messageId)), groups, held };
}

function cutIntoTurns(members: readonly QueueRecord[], options: TurnPlanOptions): QueueRecord[][] {
  if (!options.handlesTurns) return members.map((record) => [record]);
  if (options.burstWindowMs === 0) return [[...members]];
  const turns: QueueRecord[][] = [];
  let anchor = Number.NEGATIVE_INFINITY;
  for (const record of members) {
    const sentAt = sentAtOf(record) ?? anchor;
    const current = turns.at(-1);
    if (current !== undefined && sentAt <= anchor + options.burstWindowMs) {
      current.push(record);
    } else {
      turns.push([record]);
      anchor = sentAt;
    }
  }
  return turns;
}

/** When the turn's window closes; undefined when there is no window or its start is unknown. */
function windowEnd(turn: readonly QueueRecord[], options: TurnPlanOptions): number | undefined {
  if (!options.handlesTurns || options.burstWindowMs === 0) return undefined;
  const first = turn[0];
  const sentAt = first === undefined ? undefined : sentAtOf(first);
  return sentAt === undefined ? undefined : sentAt + options.burstWindowMs;
}

function sentAtOf(record: QueueRecord): number | undefined {
  const sentAt = Number(record.attributes?.SentTimestamp);
  return Number.isFinite(sentAt) && sentAt > 0 ? sentAt : undefined;
}

/** What running the groups needs of the batch: {@link ConsumerBatch.runTurn}, `moveAside`, `holdBehind`. */
export interface TurnRunner {
  runTurn(records: readonly QueueRecord[]): Promise<TurnOutcome>;
  /** Moves the failed records on their last receive aside; returns those still failed. */
  moveAside(failed: readonly QueueRecord[]): Promise<readonly QueueRecord[]>;
  holdBehind(record: QueueRecord, blocker: QueueRecord): Promise<void>;
}

/**
 * Runs the groups in parallel, each group's turns one after the other. After a record fails, the rest of its
 * group is held behind it (failed unrun) while the other groups go on, as Powertools'
 * `SqsFifoPartialProcessor` does with `skipGroupOnError`; unlike it, groups do not wait for each other. A
 * failure on its last receive is moved aside instead, and the group goes on.
 * Returns the message ids of every record that did not complete, in no particular order.
 */
export async function runInConversationOrder(
  groups: readonly ConversationGroup[],
  runner: TurnRunner,
): Promise<string[]> {
  const failedIds: string[] = [];
  await Promise.all(
    groups.map(async ({ turns }) => {
      const pending = turns.map((turn) => [...turn]);
      while (pending.length > 0) {
        const turn = pending.shift() as QueueRecord[];
        const { done, failed } = await runner.runTurn(turn);
        if (done === turn.length) continue;
        const rest = turn.slice(done + failed);
        const stillFailed = await runner.moveAside(turn.slice(done, done + failed));
        const [blocker] = stillFailed;
        if (blocker === undefined) {
          if (rest.length > 0) pending.unshift(rest);
          continue;
        }
        for (const record of stillFailed) failedIds.push(record.messageId);
        for (const record of [...rest, ...pending.flat()]) {
          await runner.holdBehind(record, blocker);
          failedIds.push(record.messageId);
        }
        return;
      }
    }),
  );
  return failedIds;
}
