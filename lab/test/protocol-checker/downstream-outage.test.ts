/**
 * A 2-hour outage in virtual time (docs/decisions.md, "A 2-hour outage runs in the protocol checker, in
 * virtual time"): the backend of a handler is down from the start of a schedule, under the production defaults
 * (timeouts, visibility timeout, retry budget) and no other fault. The real consumer backs failed records off;
 * when the outage ends, every event is effected once and nothing is in the DLQ. An outage longer than the
 * budget shows the other side: records reach the DLQ, never before the budget's floor.
 */
import { describe, expect, it } from 'vitest';
import { outageRiddenOutSeconds } from '../../../contract/retry-budget.ts';
import { DEFAULT_SETTINGS } from '../../../contract/settings.ts';
import {
  type DownstreamOutage,
  runSchedule,
  SCHEDULE_START_MS,
  type ScheduleResult,
} from '../../protocol-checker/run-schedule.ts';

const HOUR_MS = 3_600_000;
/** A deferred record's next receive: the Retry-After, then the poll that finds it visible. */
const RECEIVE_SLACK_MS = 600_000 + 5_000;
const SEEDS = Array.from({ length: 20 }, (_, index) => index + 1);

function outageSchedule(seed: number, outage: DownstreamOutage): Promise<ScheduleResult> {
  return runSchedule({ seed, outage, maxSteps: 100_000 });
}

/** Key → the virtual times it was effected at. */
function effectsByKey(result: ScheduleResult): Map<string, number[]> {
  const byKey = new Map<string, number[]>();
  for (const effect of result.effectRecords) {
    byKey.set(effect.key, [...(byKey.get(effect.key) ?? []), effect.at]);
  }
  return byKey;
}

/** Message id → the virtual times the event source received it at, in order (from the trace's receive lines). */
function receivesByMessage(result: ScheduleResult): Map<string, number[]> {
  const byMessage = new Map<string, number[]>();
  for (const line of result.trace.lines) {
    if (line.operation !== 'ReceiveMessage') continue;
    for (const [, messageId] of line.outcome.matchAll(/(msg-\d+)\(/g)) {
      byMessage.set(messageId as string, [...(byMessage.get(messageId as string) ?? []), line.at]);
    }
  }
  return byMessage;
}

/** What must hold once a downstream outage of `durationMs` ended within the budget. */
function expectRiddenOut(result: ScheduleResult, durationMs: number, returnWithinMs: number): void {
  const downUntil = SCHEDULE_START_MS + durationMs;
  expect(result.violations).toEqual([]);
  expect(result.deadLetteredMessages).toBe(0);
  expect(result.faults.counts.get('backend-down') ?? 0).toBeGreaterThan(0);
  const effects = effectsByKey(result);
  for (const [key, times] of effects) {
    expect(times, key).toHaveLength(1);
    expect(times[0], key).toBeGreaterThanOrEqual(downUntil);
    expect(times[0], key).toBeLessThanOrEqual(downUntil + returnWithinMs);
  }
  const messageKeys = [...result.workload.events.values()].filter((event) => event.kind === 'message');
  for (const event of messageKeys) expect(effects.has(event.key), event.key).toBe(true);
}

describe('a 2-hour outage of a handler backend, with the default retry budget', () => {
  it.each(SEEDS)('seed %i: nothing in the DLQ, every event effected once after it ends', async (seed) => {
    const result = await outageSchedule(seed, { durationMs: 2 * HOUR_MS });
    // A record back within the cap after its last refusal, plus an invocation.
    expectRiddenOut(result, 2 * HOUR_MS, (DEFAULT_SETTINGS.retryMaxDelaySeconds + 60) * 1000);
    // Backed off: far fewer receives than a fixed visibility timeout would have spent in two hours.
    const receives = Math.max(...result.queueMessages.map((message) => message.receiveCount));
    expect(receives).toBeGreaterThanOrEqual(5);
    expect(receives).toBeLessThan((2 * HOUR_MS) / (DEFAULT_SETTINGS.visibilityTimeoutSeconds * 1000) / 2);
  });
});

describe('a 2-hour outage answered with Retry-After: 600 (the handler throws RetryLater)', () => {
  it.each(SEEDS.slice(0, 10))(
    'seed %i: each record comes back every 10 minutes, and is effected once after',
    async (seed) => {
      const result = await outageSchedule(seed, { durationMs: 2 * HOUR_MS, retryAfterSeconds: 600 });
      expectRiddenOut(result, 2 * HOUR_MS, (600 + 60) * 1000);
      // The first body arrives at the start: refused every 10 minutes for 2 hours, then effected.
      const receives = Math.max(...result.queueMessages.map((message) => message.receiveCount));
      expect(receives).toBeGreaterThanOrEqual(12);
      expect(receives).toBeLessThanOrEqual(14);
      // Every message, each time: back no sooner than the Retry-After and within a poll of it, or, when its
      // event was in flight under another delivery (a Meta retry's copy), at the holder's lease end.
      const leaseWaitMs =
        (DEFAULT_SETTINGS.consumerTimeoutSeconds + 60) * 1000 + DEFAULT_SETTINGS.leaseMarginMs;
      const receiveTimes = receivesByMessage(result);
      expect([...receiveTimes.keys()].sort()).toEqual(
        result.queueMessages.map((message) => message.messageId).sort(),
      );
      for (const message of result.queueMessages) {
        const times = receiveTimes.get(message.messageId) ?? [];
        expect(times, message.messageId).toHaveLength(message.receiveCount);
        for (const [index, at] of times.entries()) {
          if (index === 0) continue;
          const gapMs = at - (times[index - 1] as number);
          if (gapMs <= leaseWaitMs) continue;
          expect(gapMs, `${message.messageId} receive ${index + 1}`).toBeGreaterThanOrEqual(600_000);
          expect(gapMs, `${message.messageId} receive ${index + 1}`).toBeLessThanOrEqual(RECEIVE_SLACK_MS);
        }
      }
    },
  );
});

describe('an outage longer than the budget (3 days)', () => {
  it.each([1, 2, 3])(
    'seed %i: records reach the DLQ, none before the budget rides out a day',
    async (seed) => {
      const result = await outageSchedule(seed, { durationMs: 72 * HOUR_MS });
      // At least once still holds: an event not effected is in a dead-lettered message.
      expect(result.violations).toEqual([]);
      const dead = result.queueMessages.filter((message) => message.state === 'dead-letter');
      expect(dead.length).toBeGreaterThan(0);
      for (const message of dead) {
        expect(message.receiveCount).toBe(DEFAULT_SETTINGS.maxReceiveCount);
        const inQueueMs = (message.deadLetteredAt as number) - message.sentAt;
        expect(inQueueMs).toBeGreaterThanOrEqual(outageRiddenOutSeconds(DEFAULT_SETTINGS) * 1000);
      }
    },
  );
});
