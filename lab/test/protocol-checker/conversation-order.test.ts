/**
 * The per-conversation order invariant on made-up journals (each case and its control), then on the default
 * schedules: it checks pairs and turns there, not nothing.
 */
import { describe, expect, it } from 'vitest';
import { checkConversationOrder } from '../../protocol-checker/conversation-order.ts';
import type { FifoMessage } from '../../protocol-checker/fifo-queue.ts';
import { ProtocolJournal } from '../../protocol-checker/protocol-journal.ts';
import { runMany } from '../../protocol-checker/run-many.ts';

const GROUP = '106540352242922:16505551001';

function message(
  bodyId: string,
  position: number,
  state: FifoMessage['state'] = 'deleted',
  deadLetteredAt?: number,
  groupId = GROUP,
): FifoMessage {
  return {
    messageId: `fifo-${position}`,
    body: '',
    bodyId,
    sentAt: 0,
    receiveCount: 1,
    visibleAt: 0,
    latestHandle: undefined,
    state,
    deadLetteredAt,
    groupId,
    deduplicationId: bodyId,
    sequenceNumber: String(position),
  };
}

const keysOf = new Map<string, readonly string[]>([
  ['b1', ['msg:a']],
  ['b2', ['msg:b']],
  ['b3', ['msg:a', 'msg:b']],
]);

/** msg:a and msg:b: one customer's conversation, by the product's rule. */
const conversations = new Map([
  ['msg:a', GROUP],
  ['msg:b', GROUP],
]);

function check(
  journal: ProtocolJournal,
  messages: readonly FifoMessage[],
  byKey: ReadonlyMap<string, string> = conversations,
) {
  return checkConversationOrder({ journal, messages, keysOf, conversations: byKey });
}

const invariants = (report: ReturnType<typeof check>) =>
  report.violations.map((violation) => violation.invariant);

describe('per-conversation order', () => {
  it('holds when the later message starts after the earlier one returned', () => {
    const journal = new ProtocolJournal();
    journal.recordHandlerStart(['msg:a'], 'inv1', 10)();
    journal.recordHandlerStart(['msg:b'], 'inv1', 20)();
    const report = check(journal, [message('b1', 1), message('b2', 2)]);
    expect(report.violations).toEqual([]);
    expect(report.pairsChecked).toBe(1);
  });

  it('is broken when the later message starts while the earlier one runs, or after it threw', () => {
    const overlapping = new ProtocolJournal();
    const finishA = overlapping.recordHandlerStart(['msg:a'], 'inv1', 10);
    overlapping.recordHandlerStart(['msg:b'], 'inv1', 11)();
    finishA();
    expect(invariants(check(overlapping, [message('b1', 1), message('b2', 2)]))).toEqual([
      'conversation-order',
    ]);
    const afterThrow = new ProtocolJournal();
    afterThrow.recordHandlerStart(['msg:a'], 'inv1', 10);
    afterThrow.recordHandlerStart(['msg:b'], 'inv2', 30)();
    afterThrow.recordHandlerStart(['msg:a'], 'inv3', 40)();
    expect(invariants(check(afterThrow, [message('b1', 1), message('b2', 2)]))).toEqual([
      'conversation-order',
    ]);
  });

  it('lets the conversation move on once the earlier message went to the DLQ, not before', () => {
    const journal = new ProtocolJournal();
    journal.recordHandlerStart(['msg:a'], 'inv1', 10);
    journal.recordHandlerStart(['msg:b'], 'inv2', 50)();
    expect(check(journal, [message('b1', 1, 'dead-letter', 50), message('b2', 2)]).violations).toEqual([]);
    expect(invariants(check(journal, [message('b1', 1, 'dead-letter', 51), message('b2', 2)]))).toEqual([
      'conversation-order',
    ]);
  });

  it('wants a turn to hand its messages in accepted order, its claims all completed when it returned', () => {
    const complete = (journal: ProtocolJournal, keys: readonly string[]) => {
      for (const pk of keys)
        journal.recordAnswer({ worker: 'inv1', operation: 'complete', pk, answer: 'ok', at: 20 });
    };
    const inOrder = new ProtocolJournal();
    inOrder.fates.set('inv1', 'returned');
    inOrder.recordHandlerStart(['msg:a', 'msg:b'], 'inv1', 10)();
    complete(inOrder, ['msg:a', 'msg:b']);
    const report = check(inOrder, [message('b1', 1), message('b2', 2)]);
    expect(report.violations).toEqual([]);
    expect(report.turnsChecked).toBe(1);

    const reversed = new ProtocolJournal();
    reversed.fates.set('inv1', 'returned');
    reversed.recordHandlerStart(['msg:b', 'msg:a'], 'inv1', 10)();
    complete(reversed, ['msg:a', 'msg:b']);
    expect(invariants(check(reversed, [message('b1', 1), message('b2', 2)]))).toEqual(['conversation-order']);

    const half = new ProtocolJournal();
    half.fates.set('inv1', 'returned');
    half.recordHandlerStart(['msg:a', 'msg:b'], 'inv1', 10)();
    complete(half, ['msg:a']);
    expect(invariants(check(half, [message('b3', 1)]))).toEqual(['conversation-order']);

    const threwYetCompleted = new ProtocolJournal();
    threwYetCompleted.fates.set('inv1', 'returned');
    threwYetCompleted.recordHandlerStart(['msg:a', 'msg:b'], 'inv1', 10);
    complete(threwYetCompleted, ['msg:b']);
    expect(invariants(check(threwYetCompleted, [message('b3', 1)]))).toEqual(['conversation-order']);
  });

  it("keys conversations by the product's rule, not by the FIFO group the receiver chose", () => {
    // One customer (a BSUID), whose phone number came with msg:a and not with msg:b: a receiver reading `from`
    // alone put them in two groups, which ran in parallel.
    const bsuid = '106540352242922:US.13491208655302741918';
    const overlapping = new ProtocolJournal();
    const finishA = overlapping.recordHandlerStart(['msg:a'], 'inv1', 10);
    overlapping.recordHandlerStart(['msg:b'], 'inv2', 11)();
    finishA();
    const apart = [message('b1', 1), message('b2', 2, 'deleted', undefined, '106540352242922:-')];
    const oneCustomer = new Map([
      ['msg:a', bsuid],
      ['msg:b', bsuid],
    ]);
    expect(invariants(check(overlapping, apart, oneCustomer))).toEqual(['conversation-order']);
    // Control: two customers' messages may overlap, whichever groups they are in.
    const twoCustomers = new Map([
      ['msg:a', bsuid],
      ['msg:b', GROUP],
    ]);
    const report = check(overlapping, apart, twoCustomers);
    expect(report.violations).toEqual([]);
    expect(report.pairsChecked).toBe(0);
  });

  it('checks pairs and several-message turns in the default schedules', { timeout: 120_000 }, async () => {
    const summary = await runMany({ firstSeed: 1, schedules: 100 });
    expect(summary.orderPairsChecked).toBeGreaterThan(100);
    expect(summary.turnsChecked).toBeGreaterThan(10);
  });
});
