/**
 * What the protocol tests assert about a run of schedules: no schedule violated an invariant, and the run
 * checked something: events (more checked than exempt, since the DLQ answers for the exempt ones),
 * invocations, faults, and TTL deletions among them. On failure the message carries the failing seeds, the
 * replay command and the first failing schedule's trace.
 */
import { expect } from 'vitest';
import { describeFailure } from './failure-report.ts';
import type { RunSummary } from './run-many.ts';

export function expectEveryScheduleToHold(summary: RunSummary, schedules: number): void {
  const failing = summary.failures.map((failure) => failure.seed).join(' ');
  expect(
    summary.failures,
    summary.firstFailure === undefined
      ? ''
      : `failing seeds: ${failing}\n${describeFailure(summary.firstFailure)}`,
  ).toEqual([]);
  expect(summary.schedules).toBe(schedules);
  // Not vacuous: every schedule had events to check and invocations to run them.
  expect(summary.eventsChecked).toBeGreaterThanOrEqual(schedules);
  expect(summary.invocations).toBeGreaterThanOrEqual(schedules);
  expect(summary.totalFaults).toBeGreaterThan(schedules);
  expect(summary.eventsChecked).toBeGreaterThan(summary.eventsExempt);
  expect(summary.faults['ttl-deletion']).toBeGreaterThan(0);
}
