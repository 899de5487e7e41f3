import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../cli/local/seeded-random.ts';
import {
  DEDUPLICATION_INTERVAL_MS,
  type FifoMessage,
  FifoQueue,
  type FifoQueueSettings,
} from '../../protocol-checker/fifo-queue.ts';

const SETTINGS: FifoQueueSettings = {
  visibilityTimeoutMs: 30_000,
  maxReceiveCount: 3,
  staleHandleEffectRate: 0,
};

function queueWith(settings: Partial<FifoQueueSettings> = {}, seed = 7): FifoQueue {
  return new FifoQueue({ ...SETTINGS, ...settings }, new SeededRandom(seed));
}

let dedup = 0;
function send(queue: FifoQueue, group: string, at = 0, deduplicationId = `d${++dedup}`) {
  return queue.send(`body of ${deduplicationId}`, deduplicationId, at, { groupId: group, deduplicationId });
}

const ids = (deliveries: readonly { message: { messageId: string } }[]) =>
  deliveries.map((delivery) => delivery.message.messageId);

describe('the simulated SQS FIFO queue', () => {
  it('hands out as many of a group as it can, in order, and nothing of it while one is in flight', () => {
    const queue = queueWith();
    const [a1, a2, a3] = [send(queue, 'a'), send(queue, 'a'), send(queue, 'a')].map((sent) => sent.message);
    const first = queue.receive(0, 2).deliveries;
    expect(ids(first)).toEqual([a1?.messageId, a2?.messageId]);
    // a3 is visible, but its group is locked by a1 and a2.
    expect(queue.receive(1, 10).deliveries).toEqual([]);
    expect(queue.delete(first[0]?.receiptHandle as string)).toBe('applied');
    expect(queue.receive(2, 10).deliveries).toEqual([]);
    expect(queue.delete(first[1]?.receiptHandle as string)).toBe('applied');
    expect(ids(queue.receive(3, 10).deliveries)).toEqual([a3?.messageId]);
  });

  it('never hands out a duplicate of an in-flight message; it comes back after its visibility timeout', () => {
    const queue = queueWith();
    send(queue, 'a');
    const first = queue.receive(0, 10).deliveries;
    for (let at = 1; at < 30_000; at += 997) expect(queue.receive(at, 10).deliveries).toEqual([]);
    expect(queue.nextVisibleAt()).toBe(30_000);
    const second = queue.receive(30_000, 10).deliveries;
    expect(second.map((delivery) => [delivery.receiveCount, delivery.duplicate])).toEqual([[2, false]]);
    expect(second[0]?.receiptHandle).not.toBe(first[0]?.receiptHandle);
  });

  it('keeps a group locked until its last in-flight message is visible again (ChangeMessageVisibility)', () => {
    const queue = queueWith();
    send(queue, 'a');
    send(queue, 'a');
    const [head, next] = queue.receive(0, 10).deliveries;
    queue.changeVisibility(head?.receiptHandle as string, 0, 5);
    queue.changeVisibility(next?.receiptHandle as string, 0, 8);
    expect(queue.nextVisibleAt()).toBe(8000);
    expect(queue.receive(5000, 10).deliveries).toEqual([]);
    const again = queue.receive(8000, 10).deliveries;
    expect(again.map((delivery) => [delivery.message.messageId, delivery.receiveCount])).toEqual([
      [head?.message.messageId, 2],
      [next?.message.messageId, 2],
    ]);
  });

  it('serves other groups while one is locked, and fills a batch across groups', () => {
    const queue = queueWith();
    send(queue, 'a');
    send(queue, 'a');
    send(queue, 'b');
    const first = queue.receive(0, 1).deliveries;
    expect(first).toHaveLength(1);
    const lockedGroup = first[0]?.message.bodyId;
    const rest = queue.receive(1, 10).deliveries;
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((delivery) => delivery.message.bodyId !== lockedGroup)).toBe(true);
    const all = queueWith();
    for (const group of ['a', 'b', 'a', 'c', 'b']) send(all, group);
    const batch = all.receive(0, 10).deliveries;
    expect(batch).toHaveLength(5);
    for (const group of ['a', 'b', 'c']) {
      const sequence = batch
        .map((delivery) => delivery.message as FifoMessage)
        .filter((message) => message.groupId === group)
        .map((message) => Number(message.sequenceNumber));
      expect(sequence).toEqual([...sequence].sort((x, y) => x - y));
    }
  });

  it('redrives the head after maxReceiveCount receives, which unblocks its group', () => {
    const queue = queueWith({ maxReceiveCount: 2 });
    const head = send(queue, 'a').message;
    const next = send(queue, 'a').message;
    for (const at of [0, 30_000]) {
      const [delivery] = queue.receive(at, 1).deliveries;
      expect(delivery?.message).toBe(head);
    }
    const third = queue.receive(60_000, 10);
    expect(third.deadLettered).toEqual([head]);
    expect(head.state).toBe('dead-letter');
    expect(head.deadLetteredAt).toBe(60_000);
    expect(head.receiveCount).toBe(2);
    expect(ids(third.deliveries)).toEqual([next.messageId]);
    expect(third.deliveries[0]?.receiveCount).toBe(1);
  });

  it('absorbs a deduplication id its group saw within 5 minutes, and only in that group', () => {
    const queue = queueWith();
    const original = send(queue, 'a', 0, 'keys-1');
    expect(original.deduplicated).toBe(false);
    const repeat = send(queue, 'a', DEDUPLICATION_INTERVAL_MS - 1, 'keys-1');
    expect(repeat).toEqual({ message: original.message, deduplicated: true });
    expect(send(queue, 'b', 1, 'keys-1').deduplicated).toBe(false);
    // Deleted or not, the id is remembered; after the interval the same id is a new message.
    queue.delete(queue.receive(2, 10).deliveries[0]?.receiptHandle as string);
    const later = send(queue, 'a', DEDUPLICATION_INTERVAL_MS, 'keys-1');
    expect(later.deduplicated).toBe(false);
    expect(later.message).not.toBe(original.message);
    expect(queue.messages()).toHaveLength(3);
  });

  it('deletes with the latest handle; a superseded one takes effect only as often as configured', () => {
    for (const [rate, outcome, state] of [
      [0, 'stale-ignored', 'queued'],
      [1, 'stale-applied', 'deleted'],
    ] as const) {
      const queue = queueWith({ staleHandleEffectRate: rate });
      send(queue, 'a');
      const stale = queue.receive(0, 1).deliveries[0]?.receiptHandle as string;
      const latest = queue.receive(30_000, 1).deliveries[0]?.receiptHandle as string;
      expect(queue.delete(stale)).toBe(outcome);
      expect(queue.messages()[0]?.state).toBe(state);
      expect(queue.delete(latest)).toBe('applied');
      expect(queue.messages()[0]?.state).toBe('deleted');
      expect(queue.drained()).toBe(true);
    }
    expect(queueWith().delete('frh-unknown')).toBe('unknown-handle');
  });
});
