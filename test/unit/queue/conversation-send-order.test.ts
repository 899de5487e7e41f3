/** Sends of one conversation to an ordered lane are stored in the order they were started. */
import { describe, expect, it } from 'vitest';
import { ConversationSendOrder } from '../../../functions/queue/conversation-send-order.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ConversationSendOrder', () => {
  it('starts a conversation’s second send only after its first settled, even when the first is slower', async () => {
    const order = new ConversationSendOrder();
    const stored: string[] = [];
    const send = (name: string, ms: number) => async () => {
      await sleep(ms);
      stored.push(name);
      return name;
    };
    const first = order.run('q', ['pnid:1'], send('first', 30));
    const second = order.run('q', ['pnid:1'], send('second', 1));
    const other = order.run('q', ['pnid:2'], send('other', 1));
    await Promise.all([first, second, other]);
    expect(stored).toEqual(['other', 'first', 'second']);
    expect(order.pending).toBe(0);
  });

  it('goes on after a failed send, and keeps queues apart', async () => {
    const order = new ConversationSendOrder();
    const stored: string[] = [];
    const failing = order.run('q', ['c'], async () => {
      await sleep(10);
      throw new Error('SQS down');
    });
    const elsewhere = order.run('other-queue', ['c'], async () => {
      stored.push('other queue');
    });
    const next = order.run('q', ['c'], async () => {
      stored.push('after the failure');
    });
    await expect(failing).rejects.toThrow('SQS down');
    await Promise.all([elsewhere, next]);
    expect(stored).toEqual(['other queue', 'after the failure']);
  });

  it('waits for every conversation a send holds', async () => {
    const order = new ConversationSendOrder();
    const stored: string[] = [];
    const a = order.run('q', ['a'], async () => {
      await sleep(20);
      stored.push('a');
    });
    const both = order.run('q', ['a', 'b'], async () => {
      stored.push('a+b');
    });
    await Promise.all([a, both]);
    expect(stored).toEqual(['a', 'a+b']);
  });
});
