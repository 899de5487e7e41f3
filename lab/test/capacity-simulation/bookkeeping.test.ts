/**
 * What lets a full run fit Node's default heap (docs/decisions.md, "A run keeps the events in flight, not the
 * events sent"): a deleted message's visibility timer lets go of it, and the exactly-once bookkeeping keeps a
 * key only while a copy of it can still reach a handler, then folds it into counters and deletes its
 * claim-table items.
 */
import { describe, expect, it } from 'vitest';
import { EventBook } from '../../capacity-simulation/event-book.ts';
import { StandardLaneQueue } from '../../capacity-simulation/lane-queues.ts';
import { runScenario } from '../../capacity-simulation/simulation.ts';
import type { TrafficEvent } from '../../capacity-simulation/traffic.ts';
import { Engine } from '../../virtual-time/engine.ts';

const START = Date.UTC(2026, 0, 1);
const LONG = 180_000;

const event = (key: string, lane: TrafficEvent['lane'], wamid: string): TrafficEvent => ({
  key,
  lane,
  number: 0,
  wamid,
  at: START,
  body: '{}',
});

describe('engine: cancel', () => {
  it('a cancelled timer does nothing, and every other timer fires at the same instants as without it', async () => {
    const run = async (cancel: boolean) => {
      const engine = new Engine(START, { wholeMilliseconds: true });
      const seen: string[] = [];
      engine.after(10, () => seen.push('a'));
      const b = engine.after(20, () => seen.push('b'));
      engine.after(30, () => seen.push('c'));
      if (cancel) engine.cancel(b);
      return { seen, outcome: await engine.run() };
    };
    const kept = await run(false);
    const cancelled = await run(true);
    expect(kept.seen).toEqual(['a', 'b', 'c']);
    expect(cancelled.seen).toEqual(['a', 'c']);
    expect(cancelled.outcome).toEqual(kept.outcome);
  });
});

describe('lane queues: what leaves', () => {
  it('reports each message sent and each that left (deleted, or to the DLQ), and a deleted one never comes back', async () => {
    const engine = new Engine(START, { wholeMilliseconds: true });
    const queue = new StandardLaneQueue('s', { visibilityTimeoutMs: 1_000, maxReceiveCount: 1 }, engine);
    const sent: string[] = [];
    const left: string[] = [];
    queue.onSent((message) => {
      message.tag = message.body;
      sent.push(message.body);
    });
    queue.onLeft((message) => left.push(message.tag as string));
    queue.send('deleted', {});
    queue.send('dead-lettered', {});
    const [first, second] = queue.receive(2);
    queue.delete(first?.receiptHandle as string);
    expect(left).toEqual(['deleted']);
    await engine.run({ untilMs: START + 1_000 });
    // The second came back after its visibility timeout; past maxReceiveCount, the next receive moves it.
    expect(second?.message.handle).toBeUndefined();
    expect(queue.receive(10)).toEqual([]);
    expect(sent).toEqual(['deleted', 'dead-lettered']);
    expect(left).toEqual(['deleted', 'dead-lettered']);
    expect(queue.backlog).toBe(0);
  });
});

describe('exactly-once bookkeeping', () => {
  const book = (graceMs = 1_000) => {
    const engine = new Engine(START, { wholeMilliseconds: true });
    const retired: [string, string | undefined][] = [];
    const events = new EventBook({
      engine,
      graceMs,
      onRetired: (key, lastOfWamid) => retired.push([key, lastOfWamid]),
    });
    return { engine, events, retired };
  };

  it('folds a key once Meta is done and its messages have left, a grace later, and its ledger with its last status', async () => {
    const { engine, events, retired } = book();
    events.register(event('st:w1:sent', 'status', 'w1'));
    events.register(event('st:w1:read', 'status', 'w1'));
    for (const key of ['st:w1:sent', 'st:w1:read']) {
      events.accepted(key);
      events.enqueued(key);
      events.metaDone(key);
    }
    events.effectEnds('st:w1:sent');
    events.left('st:w1:sent');
    events.sweep();
    expect(retired).toEqual([]);
    engine.after(1_000, () => undefined);
    await engine.run();
    events.sweep();
    expect(retired).toEqual([['st:w1:sent', undefined]]);
    expect(events.live).toBe(1);
    events.effectEnds('st:w1:read');
    events.left('st:w1:read');
    events.retireAll();
    expect(retired).toEqual([
      ['st:w1:sent', undefined],
      ['st:w1:read', 'w1'],
    ]);
    expect(events.totals()).toEqual({
      keys: 2,
      effected: 2,
      missing: 0,
      repeated: 0,
      violations: 0,
      duplicateAcceptances: 0,
      lateEffects: 0,
    });
  });

  it('keeps a key while a re-send is due, though its first message has left', async () => {
    const { engine, events, retired } = book();
    events.register(event('msg:w2', 'message', 'w2'));
    events.accepted('msg:w2');
    events.enqueued('msg:w2');
    events.effectEnds('msg:w2');
    events.left('msg:w2');
    engine.after(60_000, () => undefined);
    await engine.run();
    events.sweep();
    expect(retired).toEqual([]);
    // The re-send is accepted again (its FIFO copy dropped as a duplicate): Meta is done now.
    events.accepted('msg:w2');
    events.metaDone('msg:w2');
    expect(events.totals()).toMatchObject({ keys: 1, duplicateAcceptances: 1, violations: 0 });
  });

  it('counts an effect of a key already folded as a violation, so that folding too early fails the verdict', () => {
    const { events } = book(0);
    events.register(event('msg:w3', 'message', 'w3'));
    events.accepted('msg:w3');
    events.enqueued('msg:w3');
    events.effectEnds('msg:w3');
    events.left('msg:w3');
    events.metaDone('msg:w3');
    events.sweep();
    expect(events.effectStarts('msg:w3')).toBeUndefined();
    events.effectEnds('msg:w3');
    expect(events.totals()).toMatchObject({ keys: 1, lateEffects: 1, repeated: 1, violations: 1 });
  });
});

describe('a run keeps what is in flight, not what was sent', () => {
  it(
    'folds most keys during the run, no effect after a fold, no claim-table item of no followed event',
    async () => {
      const m = await runScenario(
        {
          name: 'bookkeeping',
          trafficMs: 120_000,
          numbers: [{ index: 0, outboundPerSecond: 20, inboundPerSecond: 20, conversations: 200 }],
          drainLimitMs: 600_000,
          resendRate: 0.05,
        },
        3,
      );
      expect(m.effects.violations).toBe(0);
      expect(m.effects.effected).toBe(m.effects.keys);
      expect(m.duplicateAcceptances).toBeGreaterThan(0);
      expect(m.bookkeeping.lateEffects).toBe(0);
      expect(m.bookkeeping.unaccountedItems).toBe(0);
      // 2 minutes of 80 events/s; a key lives for its statuses' lag, its processing and the grace after.
      expect(m.bookkeeping.peakLiveEvents).toBeLessThan(m.effects.keys / 2);
    },
    LONG,
  );
});
