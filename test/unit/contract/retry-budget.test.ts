/**
 * The retry budget: the defaults ride out a day-long downstream outage and fit the retentions; budgets that do
 * not are refused with a message that says what to change; docs/consumer.md prints what the defaults give.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  longestBackoffSeconds,
  longestTimeInQueueSeconds,
  MAX_RETRY_DELAY_SECONDS,
  MIN_OUTAGE_RIDDEN_OUT_SECONDS,
  outageRiddenOutSeconds,
  receivesToRideOut,
} from '../../../contract/retry-budget.ts';
import {
  DEFAULT_SETTINGS,
  type PipelineSettingsInput,
  resolveSettings,
  UnsafeSettingsError,
} from '../../../contract/settings.ts';
import { backoffDelaySeconds } from '../../../functions/consumer/retry-policy.ts';
import { readRegion } from '../../../lab/docs/markdown/regions.ts';
import { RETRY_BUDGET_REGION, retryBudgetMarkdown } from '../../../lab/docs/retry-budget-markdown.ts';

const DAY = 86_400;

const refusal = (input: PipelineSettingsInput): string => {
  try {
    resolveSettings(input);
  } catch (error) {
    expect(error).toBeInstanceOf(UnsafeSettingsError);
    return (error as Error).message;
  }
  throw new Error(`resolveSettings accepted ${JSON.stringify(input)}`);
};

describe('the default retry budget', () => {
  const defaults = resolveSettings();

  it('keeps a record out of the DLQ through a downstream outage of at least 24 hours, whatever the draws', () => {
    expect(defaults).toMatchObject({
      maxReceiveCount: 60,
      retryBaseDelaySeconds: 30,
      retryMaxDelaySeconds: 3600,
    });
    expect(outageRiddenOutSeconds(defaults)).toBeGreaterThanOrEqual(MIN_OUTAGE_RIDDEN_OUT_SECONDS);
    // Spare receives for the ones spent otherwise (leases, duplicates, throttled claims).
    expect(receivesToRideOut(MIN_OUTAGE_RIDDEN_OUT_SECONDS, defaults)).toBeLessThan(defaults.maxReceiveCount);
  });

  it('reaches the DLQ long before either queue would delete the record', () => {
    const longest = longestTimeInQueueSeconds(defaults);
    expect(longestBackoffSeconds(defaults)).toBeLessThan(longest);
    expect(longest).toBeLessThan(defaults.queueRetentionDays * DAY);
    expect(longest).toBeLessThan(defaults.deadLetterRetentionDays * DAY);
  });

  it('is what the readers of one setting fall back to', () => {
    expect(DEFAULT_SETTINGS).toMatchObject({
      maxReceiveCount: defaults.maxReceiveCount,
      retryBaseDelaySeconds: defaults.retryBaseDelaySeconds,
      retryMaxDelaySeconds: defaults.retryMaxDelaySeconds,
    });
  });
});

describe('the outage ridden out', () => {
  const budgets = fc
    .record({
      retryBaseDelaySeconds: fc.integer({ min: 1, max: 600 }),
      retryMaxDelaySeconds: fc.integer({ min: 600, max: 7200 }),
      maxReceiveCount: fc.integer({ min: 2, max: 120 }),
    })
    .filter((b) => b.retryBaseDelaySeconds <= b.retryMaxDelaySeconds);

  it('is a floor of the time between the first and the last receive, for any draws', () => {
    const draws = fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
      minLength: 120,
      maxLength: 120,
    });
    fc.assert(
      fc.property(budgets, draws, (budget, values) => {
        let lastReceiveAt = 0;
        for (let n = 1; n < budget.maxReceiveCount; n++) {
          lastReceiveAt += backoffDelaySeconds(n, budget, () => values[n] as number);
        }
        expect(lastReceiveAt).toBeGreaterThanOrEqual(outageRiddenOutSeconds(budget));
      }),
    );
  });

  it('is reached by receivesToRideOut receives and not by one fewer', () => {
    fc.assert(
      fc.property(budgets, fc.integer({ min: 1, max: 3 * DAY }), (budget, seconds) => {
        const receives = receivesToRideOut(seconds, budget);
        expect(outageRiddenOutSeconds({ ...budget, maxReceiveCount: receives })).toBeGreaterThanOrEqual(
          seconds,
        );
        expect(outageRiddenOutSeconds({ ...budget, maxReceiveCount: receives - 1 })).toBeLessThan(seconds);
      }),
    );
  });
});

describe('budgets resolveSettings refuses', () => {
  it('one that sends records to the DLQ within a day, naming the smallest maxReceiveCount that would not', () => {
    const message = refusal({ maxReceiveCount: 20 });
    expect(message).toMatch(
      /^maxReceiveCount 20 with retry delays from 30 s up to 3600 s keeps a record out of the DLQ through a downstream outage of [\d.]+ h only/,
    );
    const smallest = receivesToRideOut(MIN_OUTAGE_RIDDEN_OUT_SECONDS, DEFAULT_SETTINGS);
    expect(message).toContain(`Use a maxReceiveCount of at least ${smallest}`);
    expect(resolveSettings({ maxReceiveCount: smallest }).maxReceiveCount).toBe(smallest);
    expect(() => resolveSettings({ maxReceiveCount: smallest - 1 })).toThrow(UnsafeSettingsError);
  });

  it('one that outlives the delivery queue, which would delete the record before the DLQ', () => {
    const input = { maxReceiveCount: 40, retryMaxDelaySeconds: 36_000, queueRetentionDays: 7 };
    const message = refusal(input);
    expect(message).toMatch(/past queueRetentionDays \(7\): SQS would delete it before it reaches the DLQ/);
    const fitting = Number(/at most (\d+)/.exec(message)?.[1]);
    expect(resolveSettings({ ...input, maxReceiveCount: fitting }).maxReceiveCount).toBe(fitting);
    expect(() => resolveSettings({ ...input, maxReceiveCount: fitting + 1 })).toThrow(/queueRetentionDays/);
  });

  it('one that outlives the DLQ, which counts retention from the first enqueue', () => {
    expect(refusal({ deadLetterRetentionDays: 2 })).toMatch(
      /past deadLetterRetentionDays \(2\), counted from its first enqueue: the DLQ would delete it on arrival/,
    );
  });

  it('a cap past what SQS accepts 12 hours after the receive', () => {
    expect(refusal({ retryMaxDelaySeconds: MAX_RETRY_DELAY_SECONDS + 1 })).toMatch(
      new RegExp(
        `^retryMaxDelaySeconds is ${MAX_RETRY_DELAY_SECONDS + 1}: .*use at most ${MAX_RETRY_DELAY_SECONDS}`,
      ),
    );
  });

  it.each<[PipelineSettingsInput]>([
    [{ retryBaseDelaySeconds: 0 }],
    [{ retryBaseDelaySeconds: 1.5 }],
    [{ retryBaseDelaySeconds: 120, retryMaxDelaySeconds: 60 }],
  ])('delays that are not whole seconds with base <= cap: %j', (input) => {
    expect(refusal(input)).toMatch(/use whole seconds, 1 <= retryBaseDelaySeconds <= retryMaxDelaySeconds/);
  });

  it.each([60.5, 1001])('maxReceiveCount %s, which SQS does not take', (maxReceiveCount) => {
    expect(refusal({ maxReceiveCount })).toMatch(/SQS takes a whole number up to 1000/);
  });

  it('accepts a short budget only when told the outage to ride out is short (compressed-time tests)', () => {
    const compressed = { maxReceiveCount: 5, retryBaseDelaySeconds: 1, retryMaxDelaySeconds: 4 };
    expect(() => resolveSettings(compressed)).toThrow(/outage of 0 h only/);
    expect(resolveSettings(compressed, { outageToRideOutSeconds: 5 })).toMatchObject(compressed);
    expect(() => resolveSettings(compressed, { outageToRideOutSeconds: 8 })).toThrow(UnsafeSettingsError);
  });
});

describe('docs/consumer.md, retry budget', () => {
  const page = readFileSync(new URL('../../../docs/consumer.md', import.meta.url), 'utf8');

  it('prints what the defaults give (`npm run retry-budget -- --write-docs`)', () => {
    expect(readRegion(page, RETRY_BUDGET_REGION)).toBe(retryBudgetMarkdown(resolveSettings()).trim());
  });

  it('names the cap SQS allows as the code computes it', () => {
    expect(page).toContain(`${MAX_RETRY_DELAY_SECONDS.toLocaleString('en-US')} s`);
  });
});
