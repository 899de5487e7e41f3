/**
 * Runs consecutive seeds and folds their results into one summary: schedules run, failures (seed and
 * violations), faults injected by kind, and the double effects observed with the windows that explain them.
 * Everything in the summary is a function of the seeds and the code: the same command writes the same
 * summary (wall-clock time is kept apart, in `elapsedMs`).
 */
import type { ConsumerVariant } from './consumer-under-test.ts';
import { FaultTally } from './faults.ts';
import { type Violation, WINDOW_CAUSES, type WindowCause } from './invariants.ts';
import { runSchedule, type ScheduleResult } from './run-schedule.ts';

export interface RunManyOptions {
  readonly firstSeed: number;
  readonly schedules: number;
  readonly variant?: ConsumerVariant;
  /** Stop at the first failing schedule. @default false */
  readonly stopAtFailure?: boolean;
  /** After each schedule: how many have run, and how many of them failed. */
  readonly onSchedule?: (done: number, failed: number) => void;
}

export interface ScheduleFailure {
  readonly seed: number;
  readonly violations: readonly Violation[];
}

export interface RunSummary {
  readonly variant: ConsumerVariant;
  readonly firstSeed: number;
  readonly schedules: number;
  readonly failures: readonly ScheduleFailure[];
  readonly steps: number;
  readonly invocations: number;
  /** Acknowledged events invariant 1 checked. */
  readonly eventsChecked: number;
  /** Acknowledged events it did not check: every message carrying them was dead-lettered. */
  readonly eventsExempt: number;
  /** Of those, events a deleted message handed to a dead-lettered holder of their claim. */
  readonly eventsHandedOff: number;
  readonly effects: number;
  /** Message handler calls the per-conversation order invariant checked against an earlier message. */
  readonly orderPairsChecked: number;
  /** Turn handler calls of several messages whose claims it checked. */
  readonly turnsChecked: number;
  readonly deadLetteredMessages: number;
  readonly faults: Record<string, number>;
  readonly totalFaults: number;
  /** Effects that did not end in their attempt's completion, by why. */
  readonly windows: Record<WindowCause, number>;
  /** Keys effected more than once, and the causes of the windows on those keys. */
  readonly doubleEffects: {
    readonly keys: number;
    readonly extraEffects: number;
    readonly causes: Record<string, number>;
  };
  /** The first failing schedule, whole, to print its trace. */
  readonly firstFailure: ScheduleResult | undefined;
  readonly elapsedMs: number;
}

export async function runMany(options: RunManyOptions): Promise<RunSummary> {
  const started = performance.now();
  const faults = new FaultTally();
  const failures: ScheduleFailure[] = [];
  const windows = Object.fromEntries(WINDOW_CAUSES.map((cause) => [cause, 0])) as Record<WindowCause, number>;
  const doubleCauses: Record<string, number> = {};
  let firstFailure: ScheduleResult | undefined;
  let steps = 0;
  let invocations = 0;
  let eventsChecked = 0;
  let eventsExempt = 0;
  let eventsHandedOff = 0;
  let effects = 0;
  let orderPairsChecked = 0;
  let turnsChecked = 0;
  let deadLettered = 0;
  let doubleKeys = 0;
  let extraEffects = 0;
  let schedules = 0;
  for (let seed = options.firstSeed; seed < options.firstSeed + options.schedules; seed++) {
    const result = await runSchedule({ seed, variant: options.variant });
    schedules++;
    faults.merge(result.faults);
    steps += result.steps;
    invocations += result.invocations;
    eventsChecked += result.report.eventsChecked;
    eventsExempt += result.report.eventsExempt;
    eventsHandedOff += result.report.eventsHandedOff;
    effects += result.effects;
    orderPairsChecked += result.order.pairsChecked;
    turnsChecked += result.order.turnsChecked;
    deadLettered += result.deadLetteredMessages;
    for (const window of result.report.windows) windows[window.cause]++;
    for (const double of result.report.doubleEffects) {
      doubleKeys++;
      extraEffects += double.effects - 1;
      for (const window of double.windows) doubleCauses[window.cause] = (doubleCauses[window.cause] ?? 0) + 1;
    }
    if (result.violations.length > 0) {
      failures.push({ seed, violations: result.violations });
      firstFailure ??= result;
    }
    options.onSchedule?.(schedules, failures.length);
    if (result.violations.length > 0 && options.stopAtFailure) break;
  }
  return {
    variant: options.variant ?? 'product',
    firstSeed: options.firstSeed,
    schedules,
    failures,
    steps,
    invocations,
    eventsChecked,
    eventsExempt,
    eventsHandedOff,
    effects,
    orderPairsChecked,
    turnsChecked,
    deadLetteredMessages: deadLettered,
    faults: faults.toRecord(),
    totalFaults: faults.total(),
    windows,
    doubleEffects: { keys: doubleKeys, extraEffects, causes: doubleCauses },
    firstFailure,
    elapsedMs: performance.now() - started,
  };
}
