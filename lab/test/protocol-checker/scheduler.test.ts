import { setTimeout as realSleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../cli/local/seeded-random.ts';
import { Scheduler, SimulationStuckError } from '../../protocol-checker/scheduler.ts';

async function runAll(scheduler: Scheduler): Promise<void> {
  while (await scheduler.step()) {}
}

describe('the virtual-time scheduler', () => {
  it('completes operations in virtual time order and moves the clock to each', async () => {
    const scheduler = new Scheduler(1000, new SeededRandom(1));
    const seen: string[] = [];
    const record = (label: string) => () => seen.push(`${label}@${scheduler.now}`);
    scheduler.schedule({ worker: 'a', label: 'slow', delayMs: 50, complete: record('slow') });
    scheduler.schedule({ worker: 'b', label: 'fast', delayMs: 5, complete: record('fast') });
    await runAll(scheduler);
    expect(seen).toEqual(['fast@1005', 'slow@1050']);
  });

  it('runs a worker on to its next operation within the step, under its own name', async () => {
    const scheduler = new Scheduler(0, new SeededRandom(1));
    const workers: string[] = [];
    const worker = async () => {
      await scheduler.sleep('w', 10);
      workers.push(scheduler.currentWorker);
      await scheduler.sleep('w', 10);
      workers.push(scheduler.currentWorker);
    };
    const done = worker();
    await runAll(scheduler);
    await done;
    expect(workers).toEqual(['w', 'w']);
    expect(scheduler.now).toBe(20);
  });

  it('breaks ties at one instant by seed, the same way for the same seed', async () => {
    const order = async (seed: number) => {
      const scheduler = new Scheduler(0, new SeededRandom(seed));
      const seen: string[] = [];
      for (const label of ['a', 'b', 'c', 'd', 'e']) {
        scheduler.schedule({ worker: label, label, delayMs: 1, complete: () => seen.push(label) });
      }
      await runAll(scheduler);
      return seen.join('');
    };
    expect(await order(3)).toBe(await order(3));
    const orders = new Set<string>();
    for (let seed = 1; seed <= 20; seed++) orders.add(await order(seed));
    expect(orders.size).toBeGreaterThan(1);
  });

  it('abandons a dead worker: its operations run their abandon instead and never settle', async () => {
    const scheduler = new Scheduler(0, new SeededRandom(1));
    const events: string[] = [];
    const dead = scheduler.schedule({
      worker: 'dead',
      label: 'write',
      delayMs: 10,
      complete: () => events.push('completed'),
      abandon: () => events.push('abandoned'),
    });
    let settled = false;
    dead.then(() => {
      settled = true;
    });
    scheduler.schedule({
      worker: 'killer',
      label: 'kill',
      delayMs: 5,
      complete: () => scheduler.abandonWorker('dead'),
    });
    await runAll(scheduler);
    expect(events).toEqual(['abandoned']);
    expect(settled).toBe(false);
    expect(scheduler.pendingCount()).toBe(0);
  });

  it('refuses to go on when a worker waits on something outside the simulation', async () => {
    const scheduler = new Scheduler(0, new SeededRandom(1));
    let waitingOnRealTimer = false;
    const realTimer = new AbortController();
    scheduler.setSettledCheck(() => !waitingOnRealTimer);
    scheduler.schedule({
      worker: 'w',
      label: 'start',
      delayMs: 1,
      complete: () => {
        waitingOnRealTimer = true;
        realSleep(60_000, undefined, { signal: realTimer.signal }).catch(() => undefined);
      },
    });
    await expect(scheduler.step()).rejects.toBeInstanceOf(SimulationStuckError);
    realTimer.abort();
  });
});
