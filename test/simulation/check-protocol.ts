/**
 * `npm run check:protocol -- [--schedules N] [--seed S] [--variant V] [--trace] [--report FILE]`
 *
 * Runs N schedules from seed S (default: 2000 from seed 1; `--seed S` alone runs that one schedule), prints a
 * summary (faults injected by kind, effect→complete windows, double effects and why, failing seeds) and the
 * trace of the first failing schedule; exits 1 when a schedule failed. `--trace` prints every schedule's
 * trace (meant for one seed). `--variant` runs a mutant (a reverted fix) instead of the product.
 * `--report FILE` writes the summary as JSON (docs/reliability.md quotes such a file).
 */
import '../../local/silence-sdk-node-version-warning.ts';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CONSUMER_VARIANTS, type ConsumerVariant } from './consumer-under-test.ts';
import { describeFailure } from './failure-report.ts';
import { type RunSummary, runMany } from './run-many.ts';
import { runSchedule } from './run-schedule.ts';

const { values } = parseArgs({
  options: {
    schedules: { type: 'string' },
    seed: { type: 'string' },
    variant: { type: 'string', default: 'product' },
    trace: { type: 'boolean', default: false },
    report: { type: 'string' },
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
    console.log(
      result.violations.length === 0 ? 'no violation' : describeFailure(result).split('\ntrace:')[0],
    );
  }
}

const summary = await runMany({ firstSeed, schedules, variant });
console.log(formatSummary(summary));
if (summary.firstFailure !== undefined && !values.trace)
  console.log(`\n${describeFailure(summary.firstFailure)}`);
if (values.report !== undefined) {
  const { firstFailure: _first, elapsedMs: _elapsed, ...report } = summary;
  writeFileSync(values.report, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`report written to ${values.report}`);
}
process.exitCode = summary.failures.length === 0 ? 0 : 1;

function formatSummary(run: RunSummary): string {
  const rate = run.schedules / (run.elapsedMs / 1000);
  const list = (record: Record<string, number>) =>
    Object.entries(record)
      .filter(([, count]) => count > 0)
      .map(([name, count]) => `${name} ${count}`)
      .join(', ') || 'none';
  const last = run.firstSeed + run.schedules - 1;
  return [
    `check:protocol: ${run.schedules} schedules (seeds ${run.firstSeed}–${last}, ${run.variant}) in ` +
      `${(run.elapsedMs / 1000).toFixed(1)} s (${rate.toFixed(1)} schedules/s)`,
    `  steps ${run.steps}, invocations ${run.invocations}, events checked ${run.eventsChecked}, ` +
      `effects ${run.effects}, messages dead-lettered ${run.deadLetteredMessages}`,
    `  faults injected: ${run.totalFaults} (${list(run.faults)})`,
    `  effect→complete windows left open: ${list(run.windows)}`,
    `  double effects: ${run.doubleEffects.keys} keys, ${run.doubleEffects.extraEffects} extra effects; ` +
      `windows on those keys: ${list(run.doubleEffects.causes)}`,
    run.failures.length === 0
      ? '  violations: none'
      : `  violations: ${run.failures.length} schedules failed, seeds ${run.failures
          .slice(0, 20)
          .map((failure) => failure.seed)
          .join(' ')}${run.failures.length > 20 ? ' …' : ''}`,
  ].join('\n');
}
