/**
 * docs/reliability.md quotes the protocol checker: an excerpt of one schedule's trace, and the figures of
 * runs of schedules in generated regions. The excerpt's lines must appear, in order, in the replay of its
 * seed. The regions must be what the committed reports generate (`npm run check:protocol -- ... --docs`
 * writes them), and the short report must be what the protocol checker produces today: this test runs its 200
 * schedules again and compares the JSON byte for byte. When the checker's draws change, rerun the two
 * commands the page names.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  FULL_REPORT_FILE,
  formatReport,
  RELIABILITY_PAGE,
  readReport,
  SHORT_REPORT_FILE,
  SHORT_REPORT_SCHEDULES,
  staleReliabilityRegions,
  toReport,
} from '../../protocol-checker/protocol-report.ts';
import { runMany } from '../../protocol-checker/run-many.ts';
import { runSchedule } from '../../protocol-checker/run-schedule.ts';

const doc = readFileSync(RELIABILITY_PAGE, 'utf8');
const start = doc.indexOf('## The protocol checker');
const section = doc.slice(start, doc.indexOf('\n## ', start + 1));

describe('docs/reliability.md, the protocol checker', () => {
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

describe('docs/reliability.md, figures of runs of schedules', () => {
  it('the short report is what the protocol checker writes today, byte for byte', {
    timeout: 120_000,
  }, async () => {
    const summary = await runMany({ firstSeed: 1, schedules: SHORT_REPORT_SCHEDULES });
    const committed = readFileSync(SHORT_REPORT_FILE, 'utf8');
    expect(`${JSON.stringify(toReport(summary), null, 2)}\n`).toBe(committed);
    expect(section).toContain(formatReport(toReport(summary)));
  });

  it('its generated regions are what the committed reports format to', () => {
    const full = readReport(FULL_REPORT_FILE);
    const short = readReport(SHORT_REPORT_FILE);
    expect(staleReliabilityRegions(doc, full, short)).toEqual([]);
    expect(section).toContain(`\`\`\`\n${formatReport(full)}\n\`\`\``);
  });

  it('the long run held every invariant, checked more events than it exempted, and saw TTL delete', () => {
    const full = readReport(FULL_REPORT_FILE);
    expect(full.failures).toEqual([]);
    expect(full.schedules).toBeGreaterThanOrEqual(2000);
    expect(full.eventsChecked).toBeGreaterThan(full.eventsExempt);
    expect(full.faults['ttl-deletion']).toBeGreaterThan(0);
    expect(full.doubleEffects.keys).toBeGreaterThan(0);
  });
});
