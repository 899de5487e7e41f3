import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../cli/local/seeded-random.ts';
import { Engine, MinHeap } from '../../virtual-time/engine.ts';

const START = Date.UTC(2026, 0, 1);

describe('the engine run instant by instant (the capacity simulation)', () => {
  it('pops a heap in key order whatever the push order', () => {
    const heap = new MinHeap<number>((a, b) => a < b);
    const random = new SeededRandom(3);
    const values = Array.from({ length: 500 }, () => random.int(0, 1000));
    for (const value of values) heap.push(value);
    const popped: number[] = [];
    while (heap.size > 0) popped.push(heap.pop() as number);
    expect(popped).toEqual([...values].sort((a, b) => a - b));
  });

  it('fires timers by virtual time, ties in the order they were set, and resumes awaiting code at its instant', async () => {
    const engine = new Engine(START, { wholeMilliseconds: true });
    const seen: string[] = [];
    engine.after(20, () => seen.push('b@20'));
    engine.after(10, () => seen.push('a@10'));
    engine.after(20, () => seen.push('c@20'));
    const sleeper = (async () => {
      await engine.sleep(15);
      seen.push(`slept@${engine.now - START}`);
      await engine.sleep(0);
      seen.push(`again@${engine.now - START}`);
    })();
    const outcome = await engine.run();
    await sleeper;
    expect(seen).toEqual(['a@10', 'slept@15', 'again@15', 'b@20', 'c@20']);
    expect(outcome.endedAt - START).toBe(20);
    // 10, 15 (the sleep, then its zero-delay sleep at the same ms), 20.
    expect(outcome.instants).toBe(4);
  });

  it('stops at untilMs and on stop()', async () => {
    const engine = new Engine(START, { wholeMilliseconds: true });
    let fired = 0;
    for (let index = 1; index <= 10; index++) engine.after(index * 100, () => fired++);
    await engine.run({ untilMs: START + 450 });
    expect(fired).toBe(4);
    await engine.run({ stop: () => fired >= 7 });
    expect(fired).toBe(7);
  });
});

describe('the engine taken one timer at a time (the protocol checker)', () => {
  it('hands back the earliest timer, ties by their tie, equal ties in the order set, with the clock at it', () => {
    const engine = new Engine(0);
    const seen: string[] = [];
    engine.after(5, () => seen.push('late'), 0.1);
    engine.after(2.5, () => seen.push('tie 0.9'), 0.9);
    engine.after(2.5, () => seen.push('tie 0.2 first'), 0.2);
    engine.after(2.5, () => seen.push('tie 0.2 second'), 0.2);
    const times: number[] = [];
    for (let timer = engine.takeNext(); timer !== undefined; timer = engine.takeNext()) {
      times.push(engine.now);
      timer.fire();
    }
    expect(seen).toEqual(['tie 0.2 first', 'tie 0.2 second', 'tie 0.9', 'late']);
    expect(times).toEqual([2.5, 2.5, 2.5, 5]);
  });

  it('passes over a cancelled timer, and only whole milliseconds are rounded', () => {
    const rounded = new Engine(0, { wholeMilliseconds: true });
    expect(rounded.after(2.4, () => undefined).at).toBe(2);
    const engine = new Engine(0);
    const fired: string[] = [];
    const cancelled = engine.after(1, () => fired.push('cancelled'));
    engine.after(3, () => fired.push('kept'));
    engine.cancel(cancelled);
    engine.takeNext()?.fire();
    expect(fired).toEqual(['kept']);
    expect(engine.now).toBe(3);
    expect(engine.takeNext()).toBeUndefined();
  });
});
