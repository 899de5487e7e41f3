/**
 * The simulator has teeth: with either fix of issue 10 reverted (a mutant that wraps one port of the real
 * consumer, see consumer-under-test.ts), the default run of 2000 schedules finds the lost event, and the
 * seeds kept below fail for the mutant and pass for the product. Seeds move when the simulator's draws
 * change; `npm run check:protocol -- --variant <mutant> --schedules 300` lists the new ones.
 */
import { describe, expect, it } from 'vitest';
import type { ConsumerVariant } from './consumer-under-test.ts';
import { describeFailure } from './failure-report.ts';
import type { InvariantName } from './invariants.ts';
import { runMany } from './run-many.ts';
import { runSchedule } from './run-schedule.ts';

const DEFAULT_SCHEDULES = 2000;

interface KeptSeed {
  readonly seed: number;
  /** The invariants the mutant breaks on this seed. */
  readonly violates: readonly InvariantName[];
}

const MUTANTS: readonly {
  readonly variant: Exclude<ConsumerVariant, 'product'>;
  readonly keptSeeds: readonly KeptSeed[];
}[] = [
  {
    // §1: a duplicate in flight under the same message is acknowledged; its first delivery then fails.
    variant: 'in-flight-acknowledged',
    keptSeeds: [
      { seed: 11, violates: ['at-least-once'] },
      { seed: 16, violates: ['at-least-once'] },
      { seed: 23, violates: ['at-least-once'] },
    ],
  },
  {
    // §2: a retried status reads its own earlier ledger write as `repeated`, and its handler does not act.
    variant: 'ledger-repeated',
    keptSeeds: [
      { seed: 1, violates: ['at-least-once', 'unstable-change'] },
      // The first ledger write applied but its answer was lost; the retry is told `repeated`: only the loss shows.
      { seed: 60, violates: ['at-least-once'] },
      // The effect ran as its invocation timed out; the takeover's handler is told something else.
      { seed: 8, violates: ['unstable-change'] },
    ],
  },
];

describe.each(MUTANTS)('with the fix reverted ($variant)', ({ variant, keptSeeds }) => {
  it(`the default ${DEFAULT_SCHEDULES} schedules find a lost event`, { timeout: 120_000 }, async () => {
    const summary = await runMany({
      firstSeed: 1,
      schedules: DEFAULT_SCHEDULES,
      variant,
      stopAtFailure: true,
    });
    expect(summary.failures).toHaveLength(1);
    const invariants = summary.failures[0]?.violations.map((violation) => violation.invariant);
    expect(invariants).toContain('at-least-once');
  });

  it.each(keptSeeds)(
    'seed $seed fails for the mutant and passes for the product',
    async ({ seed, violates }) => {
      const mutant = await runSchedule({ seed, variant });
      expect(new Set(mutant.violations.map((violation) => violation.invariant))).toEqual(new Set(violates));
      const product = await runSchedule({ seed });
      expect(product.violations, describeFailure(product)).toEqual([]);
    },
  );
});
