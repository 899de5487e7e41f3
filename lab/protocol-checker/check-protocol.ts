/**
 * `npm run check:protocol -- [--schedules N] [--seed S] [--variant V] [--trace] [--report FILE]`
 *
 * Runs N schedules from seed S (default: 2000 from seed 1; `--seed S` alone runs that one schedule), with a
 * progress bar on stderr when it is a terminal, prints a summary (faults injected by kind, effect→complete
 * windows, double effects and why, failing seeds) and the trace of the first failing schedule; exits 1 when a
 * schedule failed. `--trace` prints every schedule's
 * trace (meant for one seed). `--variant` runs a mutant (a reverted fix) instead of the product.
 * `--report FILE` writes the summary as JSON (docs/reliability.md, "Figures", says what it holds). `--docs`
 * then rewrites docs/reliability.md's generated regions from the two committed reports
 * (protocol-report.json and protocol-report-200.json).
 */
import '../../cli/tools/silence-sdk-node-version-warning.ts';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { progressBar } from '../../cli/tools/progress-bar.ts';
import { CONSUMER_VARIANTS, type ConsumerVariant } from './consumer-under-test.ts';
import { describeFailure, describeViolations } from './failure-report.ts';
import { formatReport, toReport, writeReliabilityRegions } from './protocol-report.ts';
import { runMany } from './run-many.ts';
import { runSchedule } from './run-schedule.ts';

const { values } = parseArgs({
  options: {
    schedules: { type: 'string' },
    seed: { type: 'string' },
    variant: { type: 'string', default: 'product' },
    trace: { type: 'boolean', default: false },
    report: { type: 'string' },
    docs: { type: 'boolean', default: false },
  },
});

const variant = values.variant as ConsumerVariant;
if (!CONSUMER_VARIANTS.includes(variant)) {
  throw new Error(`--variant must be one of ${CONSUMER_VARIANTS.join(', ')}, got ${values.variant}.`);
}
const firstSeed = Number(values.seed ?? 1);
const schedules = Number(values.schedules ?? (values.seed === undefined ? 2000 : 1));
if (!Number.isInteger(firstSeed) || !Number.isInteger(schedules) || schedules < 1) {
  throw new Error('--seed and --schedules take integers, --schedules at least 1.');
}

if (values.trace) {
  for (let seed = firstSeed; seed < firstSeed + schedules; seed++) {
    const result = await runSchedule({ seed, variant });
    console.log(`--- schedule ${seed} (${variant}), ${result.steps} steps ---`);
    console.log(result.trace.format());
    console.log(result.violations.length === 0 ? 'no violation' : describeViolations(result));
  }
}

const bar = progressBar({ label: 'schedules', total: schedules, formatValue: String });
const summary = await runMany({
  firstSeed,
  schedules,
  variant,
  onSchedule: (done, failed) => bar.update(done, failed === 0 ? undefined : `${failed} failing`),
}).finally(() => bar.stop());
const report = toReport(summary);
console.log(formatReport(report));
const seconds = summary.elapsedMs / 1000;
console.log(`  ${seconds.toFixed(1)} s, ${(summary.schedules / seconds).toFixed(1)} schedules/s`);
if (summary.firstFailure !== undefined && !values.trace)
  console.log(`\n${describeFailure(summary.firstFailure)}`);
if (values.report !== undefined) {
  writeFileSync(values.report, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`report written to ${values.report}`);
}
if (values.docs) {
  console.log(writeReliabilityRegions() ? 'docs/reliability.md rewritten' : 'docs/reliability.md unchanged');
}
process.exitCode = summary.failures.length === 0 ? 0 : 1;
