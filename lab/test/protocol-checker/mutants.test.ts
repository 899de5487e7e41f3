/**
 * The protocol checker has teeth: each mutant (the real wiring, `createConsumerHandler`, with one port
 * wrapped to break one rule, see consumer-under-test.ts) is found within the default run of 2000 schedules,
 * by the invariant it targets, and the same wiring without the mutation passes the same schedules (the
 * control). The seeds kept below fail for the mutant, with exactly the invariants listed, and pass for the
 * product. The `dead-letter-*` mutants break the consumer's own dead-lettering of the records a handler gave up
 * on (`DeadLetter`), on both lanes. Seeds move when the checker's draws change;
 * `npm run check:protocol -- --variant <mutant> --schedules 300` lists the new ones.
 */
import { describe, expect, it } from 'vitest';
import type { ConsumerVariant } from '../../protocol-checker/consumer-under-test.ts';
import { describeFailure } from '../../protocol-checker/failure-report.ts';
import type { InvariantName } from '../../protocol-checker/invariants.ts';
import { runMany } from '../../protocol-checker/run-many.ts';
import { runSchedule } from '../../protocol-checker/run-schedule.ts';

const DEFAULT_SCHEDULES = 2000;

interface KeptSeed {
  readonly seed: number;
  /** The invariants the mutant breaks on this seed. */
  readonly violates: readonly InvariantName[];
}

const MUTANTS: readonly {
  readonly variant: Exclude<ConsumerVariant, 'product'>;
  /** The invariant the mutant breaks: the first failing schedule must name it. */
  readonly targets: InvariantName;
  readonly keptSeeds: readonly KeptSeed[];
}[] = [
  {
    // docs/consumer.md, "A duplicate in flight: who may acknowledge it", reverted: a duplicate in flight under
    // the same message is acknowledged; its first delivery then fails, and nobody is left to run the event.
    variant: 'in-flight-acknowledged',
    targets: 'at-least-once',
    keptSeeds: [
      { seed: 4, violates: ['at-least-once'] },
      { seed: 5, violates: ['at-least-once'] },
      { seed: 11, violates: ['at-least-once'] },
    ],
  },
  {
    // The ledger's change per status (docs/decisions.md, "The ledger remembers the change per status") reverted: a
    // retried status reads its own earlier ledger write as `repeated`, and its handler does not act.
    variant: 'ledger-repeated',
    targets: 'at-least-once',
    keptSeeds: [
      { seed: 3, violates: ['at-least-once', 'ledger-change', 'unstable-change'] },
      // The only handler call is told `repeated`, not the `advanced` the status made: the loss shows, and the
      // wrong change, but nothing unstable.
      { seed: 100, violates: ['at-least-once', 'ledger-change'] },
      // The status was effected, and a later attempt's handler is told something else.
      { seed: 49, violates: ['ledger-change', 'unstable-change'] },
      // A group send: a username participant's `failed`, in that participant's own ledger, told repeated.
      { seed: 17, violates: ['at-least-once', 'ledger-change', 'unstable-change'] },
    ],
  },
  {
    // The lease ends a margin after the claim: a slow effect outlives it, a duplicate delivery or a Meta retry
    // takes the claim over and effects again, and the first worker's `complete` is refused (claim lost).
    variant: 'lease-at-claim',
    targets: 'double-effect',
    keptSeeds: [
      { seed: 8, violates: ['double-effect'] },
      { seed: 16, violates: ['double-effect'] },
      { seed: 31, violates: ['double-effect'] },
    ],
  },
  {
    // The ledger advances on any other rank: a late `sent` or `delivered` replaces a current `read`, or a late
    // `failed` a current `delivered`, and its handler is told `advanced` where the model expects `merged`.
    variant: 'rank-any-change',
    targets: 'ledger-backwards',
    keptSeeds: [
      { seed: 3, violates: ['ledger-backwards', 'ledger-change'] },
      { seed: 5, violates: ['ledger-backwards', 'ledger-change'] },
      // No handler is told a wrong change: only the ledger's watched ranks show it.
      { seed: 28, violates: ['ledger-backwards'] },
      // A group send: a username participant's ledger moves back from read to a late delivered.
      { seed: 21, violates: ['ledger-backwards', 'ledger-change'] },
    ],
  },
  {
    // The message lane's consumer runs its FIFO batches unordered: two parts of one conversation in one batch
    // run in parallel, and the later one's handler starts before the earlier one's has returned.
    variant: 'fifo-in-parallel',
    targets: 'conversation-order',
    keptSeeds: [
      { seed: 2, violates: ['conversation-order'] },
      { seed: 7, violates: ['conversation-order'] },
      // In turns with a 3 s burst window: each record's messages make a turn of their own, in parallel.
      { seed: 18, violates: ['conversation-order'] },
    ],
  },
  {
    // The receiver's conversation read from `from` alone, the rule before BSUIDs: a customer whose phone number
    // comes and goes has the messages that carried it in `<phone_number_id>:<phone>` and the others in
    // `<phone_number_id>:-`, two FIFO groups that run in parallel; the order is checked by the customer's BSUID.
    variant: 'conversation-from-phone',
    targets: 'conversation-order',
    keptSeeds: [
      { seed: 6, violates: ['conversation-order'] },
      // Two messages, the first without the phone number, the second with it: the second's handler starts first.
      { seed: 30, violates: ['conversation-order'] },
      // In turns with a 1 s burst window: the message that named the phone number alone (its BSUID only in its
      // contact) in the phone's group, apart from the customer's others.
      { seed: 53, violates: ['conversation-order'] },
    ],
  },
  {
    // The lane DLQ never gets the records a handler gave up on (`DeadLetter`), yet the consumer is told they were
    // stored: it counts them as handled, SQS deletes them, and the events their handler gave up on are lost.
    variant: 'dead-letter-dropped',
    targets: 'at-least-once',
    keptSeeds: [
      // On the message lane: a message its handler gave up on, on its first receive.
      { seed: 11, violates: ['at-least-once'] },
      // On the status lane: two statuses of one message, gone with their record.
      { seed: 60, violates: ['at-least-once'] },
      // The conversation moved on past a message that is neither done nor in the DLQ.
      { seed: 15, violates: ['at-least-once', 'conversation-order'] },
    ],
  },
  {
    // A send to the lane DLQ that failed is taken for a success: the records it carried are deleted, neither
    // effected nor in the DLQ.
    variant: 'dead-letter-failure-ignored',
    targets: 'dead-letter',
    keptSeeds: [
      // On the message lane: the send failed, the record was deleted, and its message is lost.
      { seed: 59, violates: ['at-least-once', 'dead-letter'] },
      // On the status lane: nothing is lost (another body carries the status its handler gave up on, and is
      // effected from there), yet the record is deleted.
      { seed: 128, violates: ['dead-letter'] },
      { seed: 207, violates: ['dead-letter'] },
    ],
  },
  {
    // Every `DeadLetter` read as `afterReceives: 1`: a record goes to the DLQ on the first receive its handler
    // gives up on, where the handler asked for more tries.
    variant: 'dead-letter-receives-ignored',
    targets: 'dead-letter',
    keptSeeds: [
      // On the status lane, on the first receive.
      { seed: 10, violates: ['dead-letter'] },
      // On the message lane, on the first receive.
      { seed: 34, violates: ['dead-letter'] },
      // On the message lane, on the second receive, where the handler asked for three.
      { seed: 43, violates: ['dead-letter'] },
    ],
  },
];

describe.each(MUTANTS)('mutant $variant', ({ variant, targets, keptSeeds }) => {
  it(`the default ${DEFAULT_SCHEDULES} schedules find it by ${targets}; without the mutation they pass`, {
    timeout: 120_000,
  }, async () => {
    const mutant = await runMany({
      firstSeed: 1,
      schedules: DEFAULT_SCHEDULES,
      variant,
      stopAtFailure: true,
    });
    expect(mutant.failures).toHaveLength(1);
    const invariants = mutant.failures[0]?.violations.map((violation) => violation.invariant);
    expect(invariants).toContain(targets);

    const control = await runMany({ firstSeed: 1, schedules: mutant.schedules });
    expect(control.schedules).toBe(mutant.schedules);
    expect(control.failures, control.firstFailure && describeFailure(control.firstFailure)).toEqual([]);
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
