/** How an ordered lane's batch is cut into conversations and turns (functions/consumer/conversation-turns.ts). */
import { describe, expect, it } from 'vitest';
import {
  type ConversationGroup,
  planTurns,
  runInConversationOrder,
} from '../../../functions/consumer/conversation-turns.ts';
import type { QueueRecord } from '../../../functions/queue/consumer-queue-port.ts';

const T0 = 1_780_000_000_000;

function record(messageId: string, group: string, sentAt: number): QueueRecord {
  return {
    messageId,
    body: '{}',
    attributes: { MessageGroupId: group, SentTimestamp: String(sentAt), ApproximateReceiveCount: '1' },
  };
}

const ids = (groups: readonly ConversationGroup[]) =>
  groups.map(({ turns }) => turns.map((turn) => turn.map(({ messageId }) => messageId)));

describe('planTurns', () => {
  const batch = [
    record('a1', 'A', T0),
    record('b1', 'B', T0 + 10),
    record('a2', 'A', T0 + 300),
    record('a3', 'A', T0 + 2_500),
    record('b2', 'B', T0 + 20),
  ];

  it('without a turn handler, every record is a turn, grouped by conversation in batch order', () => {
    const plan = planTurns(batch, { burstWindowMs: 0, handlesTurns: false, now: T0 });
    expect(ids(plan.groups)).toEqual([
      [['a1'], ['a2'], ['a3']],
      [['b1'], ['b2']],
    ]);
    expect(plan.ready.map(({ messageId }) => messageId)).toEqual(['a1', 'b1', 'a2', 'a3', 'b2']);
    expect(plan.held).toEqual([]);
  });

  it('with a turn handler and no window, a conversation’s records in the batch make one turn', () => {
    const plan = planTurns(batch, { burstWindowMs: 0, handlesTurns: true, now: T0 });
    expect(ids(plan.groups)).toEqual([[['a1', 'a2', 'a3']], [['b1', 'b2']]]);
  });

  it('cuts turns at the window of their first record and holds back a turn whose window is open', () => {
    const plan = planTurns(batch, { burstWindowMs: 2_000, handlesTurns: true, now: T0 + 2_600 });
    // a1 and a2 came within 2 s of a1; a3 starts a turn whose window closes at T0 + 4500.
    expect(ids(plan.groups)).toEqual([[['a1', 'a2']], [['b1', 'b2']]]);
    expect(plan.held).toEqual([{ record: batch[3], delaySeconds: 2 }]);
    expect(plan.ready.map(({ messageId }) => messageId)).toEqual(['a1', 'b1', 'a2', 'b2']);
  });

  it('holds back a whole conversation whose first window is still open, rounding the wait up', () => {
    const plan = planTurns(batch, { burstWindowMs: 2_000, handlesTurns: true, now: T0 + 500 });
    expect(plan.groups).toEqual([]);
    expect(plan.held.map(({ record: { messageId }, delaySeconds }) => [messageId, delaySeconds])).toEqual([
      ['a1', 2],
      ['a2', 2],
      ['a3', 2],
      ['b1', 2],
      ['b2', 2],
    ]);
  });

  it('treats a record without a group as a conversation of its own', () => {
    const lone: QueueRecord = { messageId: 'x', body: '{}' };
    const plan = planTurns([lone, lone], { burstWindowMs: 0, handlesTurns: true, now: T0 });
    expect(plan.groups).toHaveLength(1);
  });
});

describe('runInConversationOrder', () => {
  it('runs a group’s turns one after the other, groups side by side, and holds a group behind its failure', async () => {
    const log: string[] = [];
    const held: [string, string][] = [];
    const failing = new Set(['a2']);
    const plan = planTurns(
      [record('a1', 'A', T0), record('a2', 'A', T0), record('a3', 'A', T0), record('b1', 'B', T0)],
      { burstWindowMs: 0, handlesTurns: false, now: T0 },
    );
    const failed = await runInConversationOrder(plan.groups, {
      async runTurn(records) {
        const [only] = records as [QueueRecord];
        log.push(`start ${only.messageId}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push(`end ${only.messageId}`);
        return failing.has(only.messageId) ? { done: 0, failed: 1 } : { done: 1, failed: 0 };
      },
      moveAside: async (records) => records,
      async holdBehind(record, blocker) {
        held.push([record.messageId, blocker.messageId]);
      },
    });
    expect(failed.sort()).toEqual(['a2', 'a3']);
    expect(held).toEqual([['a3', 'a2']]);
    expect(log.filter((line) => line.endsWith('a1') || line.endsWith('a2'))).toEqual([
      'start a1',
      'end a1',
      'start a2',
      'end a2',
    ]);
    expect(log).not.toContain('start a3');
    // B ran beside A, not after it.
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'));
  });

  it('goes on with the group once a failure on its last receive was moved aside', async () => {
    const ran: string[] = [];
    const moved: string[] = [];
    const plan = planTurns([record('a1', 'A', T0), record('a2', 'A', T0), record('a3', 'A', T0)], {
      burstWindowMs: 0,
      handlesTurns: true,
      now: T0,
    });
    const failed = await runInConversationOrder(plan.groups, {
      async runTurn(records) {
        ran.push(records.map(({ messageId }) => messageId).join('+'));
        // The turn fails at its second record the first time; the rest then runs as its own turn.
        return records.length === 3 ? { done: 1, failed: 1 } : { done: records.length, failed: 0 };
      },
      async moveAside(records) {
        moved.push(...records.map(({ messageId }) => messageId));
        return [];
      },
      holdBehind: async () => {
        throw new Error('nothing is held behind a record moved aside');
      },
    });
    expect(failed).toEqual([]);
    expect(moved).toEqual(['a2']);
    expect(ran).toEqual(['a1+a2+a3', 'a3']);
  });

  it('holds the group behind a record of the failed turn that still had receives left', async () => {
    const held: [string, string][] = [];
    const plan = planTurns([record('a1', 'A', T0), record('a2', 'A', T0), record('a3', 'A', T0)], {
      burstWindowMs: 0,
      handlesTurns: true,
      now: T0,
    });
    const failed = await runInConversationOrder(plan.groups, {
      // The turn handler threw: a1 and a2 failed together; a3 came after the record that failed on its own.
      runTurn: async () => ({ done: 0, failed: 2 }),
      // a1 was on its last receive, a2 was not.
      moveAside: async (records) => records.filter(({ messageId }) => messageId !== 'a1'),
      async holdBehind(record, blocker) {
        held.push([record.messageId, blocker.messageId]);
      },
    });
    expect(failed.sort()).toEqual(['a2', 'a3']);
    expect(held).toEqual([['a3', 'a2']]);
  });
});
