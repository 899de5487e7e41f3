/**
 * How a failing schedule is shown: its seed and variant, the command that replays it, what it violated,
 * and its trace, one line per step.
 */
import type { ScheduleResult } from './run-schedule.ts';

export function replayCommand(result: Pick<ScheduleResult, 'seed' | 'variant'>): string {
  const variant = result.variant === 'product' ? '' : ` --variant ${result.variant}`;
  return `npm run check:protocol -- --seed ${result.seed}${variant} --trace`;
}

/** The seed, the replay command, the violations, the settings and the faults; no trace. */
export function describeViolations(result: ScheduleResult): string {
  const settings = result.settings;
  return [
    `Schedule ${result.seed} (${result.variant}) failed; replay: ${replayCommand(result)}`,
    ...result.violations.map((violation) => `  ${violation.invariant}: ${violation.detail}`),
    `  settings: ${settings.pollers} pollers, batches of ${settings.batchSize}, timeout ${settings.functionTimeoutMs} ms, ` +
      `visibility ${settings.queue.visibilityTimeoutMs} ms, maxReceiveCount ${settings.queue.maxReceiveCount}`,
    `  faults: ${JSON.stringify(Object.fromEntries(result.faults.counts))}`,
  ].join('\n');
}

export function describeFailure(result: ScheduleResult): string {
  return `${describeViolations(result)}\ntrace:\n${result.trace.format()}`;
}
