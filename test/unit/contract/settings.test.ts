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
import { resolveMessageLane } from '../../../contract/lanes.ts';
import {
  DEFAULT_SETTINGS,
  latestLeaseEndSeconds,
  MAX_QUEUE_RETENTION_DAYS,
  MIN_QUEUE_RETENTION_DAYS,
  type PipelineSettingsInput,
  resolveSettings,
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
