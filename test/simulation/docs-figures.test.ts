/**
 * docs/reliability.md quotes the simulator: an excerpt of one schedule's trace, and the figures of a run of
 * schedules. Both must be what the commands print today: the excerpt's lines appear, in order, in the replay
 * of its seed; the figures are the committed report's (`npm run check:protocol -- --schedules 20000
 * --report test/simulation/report.json` writes it). When the simulator's draws change, rerun both commands
 * and paste their output.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatReport, type ProtocolReport } from './protocol-report.ts';
import { runSchedule } from './run-schedule.ts';

const doc = readFileSync(new URL('../../docs/reliability.md', import.meta.url), 'utf8');
const start = doc.indexOf('## Deterministic simulation');
const section = doc.slice(start, doc.indexOf('\n## ', start + 1));

describe('docs/reliability.md, deterministic simulation', () => {
  it('quotes trace lines that replaying their seed prints, in that order', async () => {
    const seed = Number(/`npm run check:protocol -- --seed (\d+) --trace`:/.exec(section)?.[1]);
    const quoted = section.split('\n').filter((line) => /^ +\d+\.\d{3}s {2}/.test(line));
    expect(Number.isInteger(seed)).toBe(true);
    expect(quoted.length).toBeGreaterThanOrEqual(5);
    const trace = (await runSchedule({ seed })).trace.format().split('\n');
    let from = 0;
    for (const line of quoted) {
      const found = trace.indexOf(line, from);
      expect(found, `${line}\nis not in the trace of seed ${seed} after line ${from}`).toBeGreaterThanOrEqual(
        from,
      );
      from = found + 1;
    }
  });
});

describe('docs/reliability.md, figures of a run of schedules', () => {
  it('quotes exactly what the committed report formats to', () => {
    const report = JSON.parse(
      readFileSync(new URL('./protocol-report.json', import.meta.url), 'utf8'),
    ) as ProtocolReport;
    expect(report.failures).toEqual([]);
    expect(report.schedules).toBeGreaterThanOrEqual(2000);
    expect(section).toContain(`\`\`\`\n${formatReport(report)}\n\`\`\``);
  });
});
