import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../cli/local/seeded-random.ts';
import { type QueueSettings, StandardQueue } from '../../protocol-checker/standard-queue.ts';

const SETTINGS: QueueSettings = {
  visibilityTimeoutMs: 30_000,
  maxReceiveCount: 3,
  duplicateDeliveryRate: 0,
  staleHandleEffectRate: 0,
};

function queueWith(settings: Partial<QueueSettings> = {}): StandardQueue {
  return new StandardQueue({ ...SETTINGS, ...settings }, new SeededRandom(7));
}

describe('the simulated SQS standard queue', () => {
  it('hides a received message for the visibility timeout, then hands it out again with a new handle', () => {
    const queue = queueWith();
    queue.send('body', 'b1', 0);
    const first = queue.receive(0, 10).deliveries;
    expect(first.map((delivery) => delivery.receiveCount)).toEqual([1]);
    expect(queue.receive(29_999, 10).deliveries).toEqual([]);
    const second = queue.receive(30_000, 10).deliveries;
    expect(second.map((delivery) => delivery.receiveCount)).toEqual([2]);
    expect(second[0]?.receiptHandle).not.toBe(first[0]?.receiptHandle);
    expect(queue.nextVisibleAt()).toBe(60_000);
  });

  it('deletes with the latest handle; a superseded one takes effect only as often as configured', () => {
    for (const [rate, outcome, state] of [
      [0, 'stale-ignored', 'queued'],
      [1, 'stale-applied', 'deleted'],
    ] as const) {
      const queue = queueWith({ staleHandleEffectRate: rate });
      queue.send('body', 'b1', 0);
      const stale = queue.receive(0, 1).deliveries[0]?.receiptHandle as string;
      const latest = queue.receive(30_000, 1).deliveries[0]?.receiptHandle as string;
      expect(queue.delete(stale)).toBe(outcome);
      expect(queue.messages()[0]?.state).toBe(state);
      expect(queue.delete(latest)).toBe('applied');
      expect(queue.drained()).toBe(true);
    }
  });

  it('moves a message to the dead-letter queue on the receive after maxReceiveCount', () => {
    const queue = queueWith();
    queue.send('body', 'b1', 0);
    for (let receive = 0; receive < 3; receive++) {
      expect(queue.receive(receive * 30_000, 10).deliveries).toHaveLength(1);
    }
    const last = queue.receive(90_000, 10);
    expect(last.deliveries).toEqual([]);
    expect(last.deadLettered.map((message) => message.messageId)).toEqual(['msg-001']);
    expect(queue.drained()).toBe(true);
  });

  it('may hand out a message that is still in flight: a duplicate delivery', () => {
    const queue = queueWith({ duplicateDeliveryRate: 1 });
    queue.send('body', 'b1', 0);
    queue.receive(0, 10);
    const again = queue.receive(10, 10).deliveries;
    expect(again.map((delivery) => [delivery.duplicate, delivery.receiveCount])).toEqual([[true, 2]]);
  });

  it('brings a message back early when its visibility is changed with the latest handle', () => {
    const queue = queueWith();
    queue.send('body', 'b1', 0);
    const handle = queue.receive(0, 1).deliveries[0]?.receiptHandle as string;
    expect(queue.changeVisibility(handle, 1000, 2)).toBe('applied');
    expect(queue.receive(2999, 1).deliveries).toEqual([]);
    expect(queue.receive(3000, 1).deliveries).toHaveLength(1);
    expect(queue.changeVisibility('rh-unknown', 3000, 0)).toBe('unknown-handle');
  });
});
