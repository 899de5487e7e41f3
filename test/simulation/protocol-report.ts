/**
 * The figures of a run of schedules, as the JSON file `check:protocol --report` writes and as the text block
 * docs/reliability.md quotes (docs-figures.test.ts checks the two agree). Nothing in them depends on the
 * machine: the same command writes the same report.
 */
import type { RunSummary } from './run-many.ts';

export type ProtocolReport = Omit<RunSummary, 'firstFailure' | 'elapsedMs'>;

export function toReport(summary: RunSummary): ProtocolReport {
  const { firstFailure: _firstFailure, elapsedMs: _elapsedMs, ...report } = summary;
  return report;
}

export function formatReport(report: ProtocolReport): string {
  const list = (record: Readonly<Record<string, number>>) =>
    Object.entries(record)
      .filter(([, count]) => count > 0)
      .map(([name, count]) => `${name} ${count}`)
      .join(', ') || 'none';
  const last = report.firstSeed + report.schedules - 1;
  const failing = report.failures.map((failure) => failure.seed);
  return [
    `check:protocol: ${report.schedules} schedules (seeds ${report.firstSeed}–${last}, ${report.variant})`,
    `  steps ${report.steps}, invocations ${report.invocations}, events checked ${report.eventsChecked}, ` +
      `effects ${report.effects}, messages dead-lettered ${report.deadLetteredMessages}`,
    `  faults injected: ${report.totalFaults} (${list(report.faults)})`,
    `  effect→complete windows left open: ${list(report.windows)}`,
    `  double effects: ${report.doubleEffects.keys} keys, ${report.doubleEffects.extraEffects} extra effects; ` +
      `windows on those keys: ${list(report.doubleEffects.causes)}`,
    failing.length === 0
      ? '  violations: none'
      : `  violations: ${failing.length} schedules failed, seeds ${failing.slice(0, 20).join(' ')}${failing.length > 20 ? ' …' : ''}`,
  ].join('\n');
}
