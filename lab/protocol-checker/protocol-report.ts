/**
 * The figures of a run of schedules, as the JSON file `check:protocol --report` writes, and as
 * docs/reliability.md quotes them in its generated regions (`<!-- generated:NAME -->`, written by
 * `check:protocol --docs`; docs-figures.test.ts regenerates the short report and checks both). Nothing in
 * them depends on the machine: the same command writes the same report. Zero counts are shown too: a fault
 * that never happened, or a window cause never seen, is a figure as well.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { readRegion, replaceRegion } from '../docs/markdown/regions.ts';
import { EXCUSING_CAUSES, WINDOW_CAUSES } from './invariants.ts';
import type { RunSummary } from './run-many.ts';

export type ProtocolReport = Omit<RunSummary, 'firstFailure' | 'elapsedMs'>;

/** The committed reports: the long run the page quotes, and the short one the tests regenerate. */
export const FULL_REPORT_FILE = new URL('./protocol-report.json', import.meta.url);
export const SHORT_REPORT_FILE = new URL('./protocol-report-200.json', import.meta.url);
export const SHORT_REPORT_SCHEDULES = 200;
export const RELIABILITY_PAGE = new URL('../../docs/reliability.md', import.meta.url);

export function toReport(summary: RunSummary): ProtocolReport {
  const { firstFailure: _firstFailure, elapsedMs: _elapsedMs, ...report } = summary;
  return report;
}

export function readReport(file: URL): ProtocolReport {
  return JSON.parse(readFileSync(file, 'utf8')) as ProtocolReport;
}

const list = (entries: readonly (readonly [string, number])[]) =>
  entries.map(([name, count]) => `${name} ${count}`).join(', ') || 'none';

export function formatReport(report: ProtocolReport): string {
  const last = report.firstSeed + report.schedules - 1;
  const failing = report.failures.map((failure) => failure.seed);
  const windows = (excusing: boolean) =>
    list(
      WINDOW_CAUSES.filter((cause) => EXCUSING_CAUSES.has(cause) === excusing).map(
        (cause) => [cause, report.windows[cause]] as const,
      ),
    );
  return [
    `check:protocol: ${report.schedules} schedules (seeds ${report.firstSeed}–${last}, ${report.variant})`,
    `  steps ${report.steps}, invocations ${report.invocations}, effects ${report.effects}, ` +
      `messages dead-lettered ${report.deadLetteredMessages}`,
    `  events acknowledged ${report.eventsChecked + report.eventsExempt}: checked ${report.eventsChecked}, ` +
      `exempt ${report.eventsExempt} (in the DLQ; ${report.eventsHandedOff} of them handed over by a deleted message)`,
    `  faults injected: ${report.totalFaults} (${list(Object.entries(report.faults))})`,
    `  effects their attempt did not complete: opening the window ${windows(true)}; opening none ${windows(false)}`,
    `  double effects: ${report.doubleEffects.keys} keys, ${report.doubleEffects.extraEffects} extra effects; ` +
      `windows on those keys: ${list(Object.entries(report.doubleEffects.causes))}`,
    failing.length === 0
      ? '  violations: none'
      : `  violations: ${failing.length} schedules failed, seeds ${failing.slice(0, 20).join(' ')}${failing.length > 20 ? ' …' : ''}`,
  ].join('\n');
}

/** docs/reliability.md's generated regions, from the long and the short report. */
export function reliabilityRegions(full: ProtocolReport, short: ProtocolReport): Record<string, string> {
  const zeros = [
    ...Object.entries(full.faults)
      .filter(([, count]) => count === 0)
      .map(([name]) => `\`${name}\``),
    ...WINDOW_CAUSES.filter((cause) => full.windows[cause] === 0).map((cause) => `\`${cause}\``),
  ];
  return {
    'protocol-report': fenced(formatReport(full)),
    'protocol-report-short': fenced(formatReport(short)),
    'protocol-zero-counts':
      zeros.length === 0
        ? `No count was 0 in the ${full.schedules} schedules.`
        : `Zero in all ${full.schedules} schedules: ${zeros.join(', ')}.`,
    'protocol-dead-letters':
      `The ${full.deadLetteredMessages} dead-lettered messages are the harsh schedules' (handlers failing or ` +
      'throttled on every receive) and those a handler gave up on (`DeadLetter`); the ' +
      `${full.eventsExempt} acknowledged events they answer for are counted as exempt, apart from the ` +
      `${full.eventsChecked} checked, and ${full.eventsHandedOff} of them were also carried by a message that ` +
      'was deleted because it found their claim held for the dead-lettered one.',
  };
}

function fenced(text: string): string {
  return `\`\`\`\n${text}\n\`\`\``;
}

/** Regions of the page that differ from what the committed reports generate. */
export function staleReliabilityRegions(page: string, full: ProtocolReport, short: ProtocolReport): string[] {
  return Object.entries(reliabilityRegions(full, short))
    .filter(([name, content]) => readRegion(page, name) !== content.trim())
    .map(([name]) => name);
}

/** Rewrites docs/reliability.md's regions from the committed reports; returns whether the page changed. */
export function writeReliabilityRegions(): boolean {
  const before = readFileSync(RELIABILITY_PAGE, 'utf8');
  const regions = reliabilityRegions(readReport(FULL_REPORT_FILE), readReport(SHORT_REPORT_FILE));
  const after = Object.entries(regions).reduce(
    (page, [name, content]) => replaceRegion(page, name, content),
    before,
  );
  if (after !== before) writeFileSync(RELIABILITY_PAGE, after);
  return after !== before;
}
