/**
 * `resolveSettings`: the defaults that keep events from being lost, and the refusals of combinations that
 * would lose or hide them, each with a message that says what to change.
 */
import { describe, expect, it } from 'vitest';
import {
  ASSUMED_HANDLERS,
  DEFAULT_EXPECTED_PEAK,
  type ExpectedPeak,
  META_DEFAULT_MESSAGES_PER_SECOND,
  planCapacity,
} from '../../../contract/capacity.ts';
import {
  ORDERED_LANE_REDRIVE_MARGIN,
  type ResolvedMessageLane,
  redriveMaxReceiveCount,
  resolveMessageLane,
} from '../../../contract/lanes.ts';
import type { QueueStay } from '../../../contract/retry-budget.ts';
import {
  DEFAULT_SETTINGS,
  latestLeaseEndSeconds,
  MAX_QUEUE_RETENTION_DAYS,
  MIN_QUEUE_RETENTION_DAYS,
  minimumRetentionDays,
  minimumRetentionSeconds,
  type PipelineSettingsInput,
  resolveSettings,
  retentionDaysProblem,
  UnsafeSettingsError,
} from '../../../contract/settings.ts';

const refusal = (input: PipelineSettingsInput): UnsafeSettingsError => {
  try {
    resolveSettings(input);
  } catch (error) {
    expect(error).toBeInstanceOf(UnsafeSettingsError);
    return error as UnsafeSettingsError;
  }
  throw new Error(`resolveSettings accepted ${JSON.stringify(input)}`);
};

describe('delivery queue retention', () => {
  it('defaults to 14 days, the SQS maximum, with the DLQ keeping 14 days too', () => {
    const settings = resolveSettings();
    expect(settings.queueRetentionDays).toBe(14);
    expect(MAX_QUEUE_RETENTION_DAYS).toBe(14);
    expect(settings.deadLetterRetentionDays).toBe(14);
  });

  it.each([7, 10, 14])('accepts %i days', (days) => {
    expect(resolveSettings({ queueRetentionDays: days }).queueRetentionDays).toBe(days);
  });

  it.each([0, 4, 6, 6.9])('refuses %s days: the queue is the only copy once Meta has its 200', (days) => {
    expect(refusal({ queueRetentionDays: days }).message).toMatch(
      new RegExp(`^queueRetentionDays is ${days}: .*only copy.* ${MIN_QUEUE_RETENTION_DAYS} to 14 days`),
    );
  });

  it('refuses more than SQS can keep', () => {
    expect(refusal({ queueRetentionDays: 15 }).message).toMatch(/queueRetentionDays is 15/);
  });
});

describe('lease margin against the visibility timeout', () => {
  // Defaults: consumer timeout 30 s, batching window 1 s, visibility 6 × 30 + 1 = 181 s: room for 150 s.
  it('accepts the default margin, whose lease ends long before a redelivery', () => {
    const settings = resolveSettings();
    expect(latestLeaseEndSeconds(settings)).toBe(30 + 1 + 10);
    expect(latestLeaseEndSeconds(settings)).toBeLessThan(settings.visibilityTimeoutSeconds);
  });

  it('accepts the largest margin whose lease still ends before the visibility timeout', () => {
    expect(resolveSettings({ leaseMarginMs: 149_999 }).leaseMarginMs).toBe(149_999);
  });

  it.each([150_000, 150_001, 10_000_000])(
    'refuses %i ms: a redelivery could meet its own live lease',
    (leaseMarginMs) => {
      const { message } = refusal({ leaseMarginMs });
      expect(message).toContain(
        `leaseMarginMs is ${leaseMarginMs}: consumerTimeoutSeconds (30) + maxBatchingWindowSeconds (1) + leaseMarginMs reaches visibilityTimeoutSeconds (181)`,
      );
      expect(message).toContain(
        `Use a leaseMarginMs below 150000, or a visibilityTimeoutSeconds above ${31 + leaseMarginMs / 1000}.`,
      );
    },
  );

  it('counts the batching window, which runs on the visibility clock before the invocation starts', () => {
    const input = { consumerTimeoutSeconds: 20, visibilityTimeoutSeconds: 130, leaseMarginMs: 100_000 };
    expect(resolveSettings({ ...input, maxBatchingWindowSeconds: 0 }).leaseMarginMs).toBe(100_000);
    expect(refusal({ ...input, maxBatchingWindowSeconds: 10 }).message).toMatch(
      /maxBatchingWindowSeconds \(10\) \+ leaseMarginMs reaches visibilityTimeoutSeconds \(130\)/,
    );
  });

  it('follows the fix the message proposes: a longer visibility timeout makes the same margin safe', () => {
    expect(() => resolveSettings({ leaseMarginMs: 200_000 })).toThrow(UnsafeSettingsError);
    expect(resolveSettings({ leaseMarginMs: 200_000, visibilityTimeoutSeconds: 232 }).leaseMarginMs).toBe(
      200_000,
    );
  });
});

describe('non-finite values', () => {
  it.each<[keyof PipelineSettingsInput, number]>([
    ['leaseMarginMs', Number.NaN],
    ['leaseMarginMs', Number.POSITIVE_INFINITY],
    ['leaseMarginMs', Number.NEGATIVE_INFINITY],
    ['retentionDays', Number.NaN],
    ['visibilityTimeoutSeconds', Number.POSITIVE_INFINITY],
    ['consumerTimeoutSeconds', Number.NaN],
    ['queueRetentionDays', Number.NaN],
    ['maxReceiveCount', Number.POSITIVE_INFINITY],
  ])('refuses %s = %s, which would slip past every comparison', (name, value) => {
    expect(refusal({ [name]: value }).message).toBe(
      `${name} is ${String(value)}: every setting must be a finite number.`,
    );
  });
});

describe('the default maxConcurrency', () => {
  // A floor: the construct sizes each lane of a subscriber for its expected peak (lib/capacity-sizing.ts), by
  // default one number at Meta's top tier; the floor is what the local stack and a small declared peak run with.
  const subscriber = {
    name: 'default',
    fields: undefined,
    settings: resolveSettings(),
    messageLane: resolveMessageLane({}, undefined, undefined),
    handles: ASSUMED_HANDLERS,
  };
  const planFor = (peak: ExpectedPeak) =>
    planCapacity(peak, {
      throttlingRateLimit: Number.POSITIVE_INFINITY,
      throttlingBurstLimit: Number.POSITIVE_INFINITY,
      subscribers: [subscriber],
    });
  const needed = (plan: ReturnType<typeof planFor>, lane: string) =>
    plan.sizing.maxConcurrency.find((entry) => entry.lane === lane)?.value as number;

  it("carries a number at Meta's default tier on both lanes", () => {
    const plan = planFor({ messagesPerSecond: META_DEFAULT_MESSAGES_PER_SECOND });
    expect(DEFAULT_SETTINGS.maxConcurrency).toBeGreaterThanOrEqual(needed(plan, 'status'));
    expect(DEFAULT_SETTINGS.maxConcurrency).toBeGreaterThanOrEqual(needed(plan, 'message'));
    expect(plan.problems.filter((problem) => /maxConcurrency|drain/.test(problem))).toEqual([]);
  });

  it('is below what the top tier needs, which the construct sizes instead', () => {
    const plan = planFor(DEFAULT_EXPECTED_PEAK);
    expect(DEFAULT_SETTINGS.maxConcurrency).toBeLessThan(needed(plan, 'status'));
    expect(DEFAULT_SETTINGS.maxConcurrency).toBeLessThan(needed(plan, 'message'));
  });
});

describe("the claims retention floor: Meta's 7 days plus the longest retry budget of the lanes", () => {
  const DAY = 86_400;
  const WEEK = 7 * DAY;
  const status = resolveSettings();
  const lane = (definition: Parameters<typeof resolveMessageLane>[1], input: PipelineSettingsInput = {}) =>
    resolveMessageLane(input, definition, undefined) as ResolvedMessageLane;
  /** A lane as the construct counts it: with the receives its queue allows before it redrives. */
  const stay = (resolved: ResolvedMessageLane): QueueStay => ({
    ...resolved.settings,
    maxReceiveCount: redriveMaxReceiveCount(resolved),
  });
  const defaultLanes = { 'status lane': status, 'message lane': stay(lane({})) };
  // Default status lane: 60 receives, each up to the 1 s window + the 30 s timeout + the 3600 s delay cap.
  const DEFAULT_STATUS_STAY = 60 * (1 + 30 + 3600);

  it("is set by the status lane with the defaults, the ordered message lane's budget being far shorter", () => {
    expect(minimumRetentionSeconds(defaultLanes)).toBe(WEEK + DEFAULT_STATUS_STAY);
    expect(minimumRetentionSeconds({ 'message lane': stay(lane({})) })).toBeLessThan(WEEK + 2 * 3600);
  });

  it('accepts the smallest retention it names', () => {
    const smallest = minimumRetentionDays(defaultLanes);
    expect(smallest).toBe((WEEK + DEFAULT_STATUS_STAY) / DAY);
    expect(retentionDaysProblem(smallest, defaultLanes)).toBeUndefined();
    expect(retentionDaysProblem(Math.ceil(smallest), defaultLanes)).toBeUndefined();
  });

  it.each([
    ['one second', 1],
    ['one day', DAY],
  ])('refuses a retention %s short, naming both terms and the smallest accepted value', (_label, short) => {
    const retentionDays = (WEEK + DEFAULT_STATUS_STAY - short) / DAY;
    expect(retentionDaysProblem(retentionDays, defaultLanes)).toBe(
      `retentionDays is ${retentionDays}, but Meta retries a webhook for up to 7 days, and its last retry may then wait in the status lane's queue for that lane's retry budget, 60 receives × up to 3631 s = ${DEFAULT_STATUS_STAY} s (2.5 days), before its claim is checked: a done claim must outlast both. Use a retentionDays of at least 9.521528 (7 days + ${DEFAULT_STATUS_STAY} s; 10 in whole days), or a shorter retry budget.`,
    );
  });

  it('shows a smallest value that is itself accepted, rounded up to the millionth of a day', () => {
    // 7 days + 43,200 s is 7.5 days exactly: no float tail may turn it into 7.500001.
    const halfDay = {
      'status lane': {
        ...status,
        maxReceiveCount: 12,
        maxBatchingWindowSeconds: 0,
        retryMaxDelaySeconds: 3570,
      },
    };
    expect(minimumRetentionSeconds(halfDay)).toBe(WEEK + DAY / 2);
    const shown = Number(/at least ([\d.]+) /.exec(retentionDaysProblem(7, halfDay) as string)?.[1]);
    expect(shown).toBe(7.5);
    expect(retentionDaysProblem(shown, halfDay)).toBeUndefined();
    expect(retentionDaysProblem(shown - 1 / DAY, halfDay)).toBeDefined();
  });

  it('follows the lane with the longest budget: an unordered message lane with a budget of its own', () => {
    const long = lane({ ordered: false, settings: { maxReceiveCount: 100 } });
    const lanes = { 'status lane': status, 'message lane': stay(long) };
    // Unordered, no window: 100 receives of up to 30 s + 3600 s.
    const messageStay = 100 * (30 + 3600);
    expect(minimumRetentionSeconds(lanes)).toBe(WEEK + messageStay);
    expect(retentionDaysProblem(DEFAULT_SETTINGS.retentionDays, lanes)).toMatch(
      new RegExp(
        `^retentionDays is 10, but .* in the message lane's queue .* 100 receives × up to 3630 s = ${messageStay} s .* at least 11.201389 .*12 in whole days`,
      ),
    );
    expect(retentionDaysProblem(12, lanes)).toBeUndefined();
  });

  it("counts an ordered lane with the receives its queue allows, past its consumer's own budget", () => {
    // A short status budget (a test's compressed one), so that the ordered lane's is the longest.
    const short = resolveSettings(
      { maxReceiveCount: 5, retryBaseDelaySeconds: 1, retryMaxDelaySeconds: 4 },
      { outageToRideOutSeconds: 1 },
    );
    const ordered = lane({});
    const receives = ordered.settings.maxReceiveCount + ORDERED_LANE_REDRIVE_MARGIN;
    // Ordered: no window; each receive up to the visibility timeout (6 × 30 s), above 30 s + the 60 s cap.
    const orderedStay = receives * 180;
    const lanes = { 'status lane': short, 'message lane': stay(ordered) };
    expect(minimumRetentionSeconds(lanes)).toBe(WEEK + orderedStay);
    expect(retentionDaysProblem((WEEK + orderedStay - 1) / DAY, lanes)).toMatch(
      new RegExp(`message lane's queue for that lane's retry budget, ${receives} receives × up to 180 s`),
    );
  });

  it("is Meta's 7 days alone without lanes, the part a consumer checks from its one setting", () => {
    expect(minimumRetentionSeconds({})).toBe(WEEK);
    expect(retentionDaysProblem(7)).toBeUndefined();
    expect(retentionDaysProblem(7 - 1 / DAY)).toMatch(
      /^retentionDays is .*, but Meta retries a webhook for up to 7 days: use at least 7 days plus the longest retry budget of the subscriber's lanes \(default 10\)\.$/,
    );
    expect(retentionDaysProblem(Number.NaN, defaultLanes)).toMatch(/^retentionDays is NaN/);
  });

  it("defaults to the default budget's floor rounded up to whole days, which the default lanes accept", () => {
    expect(DEFAULT_SETTINGS.retentionDays).toBe(Math.ceil(minimumRetentionDays({ 'status lane': status })));
    expect(DEFAULT_SETTINGS.retentionDays).toBe(10);
    expect(retentionDaysProblem(DEFAULT_SETTINGS.retentionDays, defaultLanes)).toBeUndefined();
    const unordered = { 'status lane': status, 'message lane': stay(lane({ ordered: false })) };
    expect(retentionDaysProblem(DEFAULT_SETTINGS.retentionDays, unordered)).toBeUndefined();
  });
});
