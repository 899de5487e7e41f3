/**
 * The recorded scenario reports (lab/capacity-simulation/results.json, `npm run capacity-simulation -- all
 * --record`) and docs/capacity.md's region agree, and every difference from the planner over a fifth says why.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../cli/capacity/pipeline.ts';
import { DIFFERENCE_REASONS } from '../../capacity-simulation/scale-report.ts';
import { AWAITING_FULL_RUN, SCENARIO_NAMES } from '../../capacity-simulation/scenarios.ts';
import { readSimulationResults, simulationMarkdown } from '../../capacity-simulation/simulation-markdown.ts';
import { CAPACITY_PAGE } from '../../docs/capacity-markdown.ts';
import { readRegion } from '../../docs/markdown/regions.ts';

describe('recorded capacity simulation', () => {
  const results = readSimulationResults();

  it('holds a report of each scenario but those awaiting their full run, which it does not hold yet', () => {
    const awaiting = Object.keys(AWAITING_FULL_RUN);
    expect(results?.reports.map((report) => report.scenario).sort()).toEqual(
      SCENARIO_NAMES.filter((name) => !awaiting.includes(name)).sort(),
    );
  });

  it('holds the full run of each scenario, every verdict holding: the defaults carry them all', () => {
    for (const report of results?.reports ?? []) {
      const failing = report.verdicts.filter((verdict) => !verdict.holds).map((verdict) => verdict.name);
      expect({ scenario: report.scenario, short: report.short, failing }).toEqual({
        scenario: report.scenario,
        short: false,
        failing: [],
      });
    }
  });

  it('gives the reason for every difference from the planner over 20 %', () => {
    for (const report of results?.reports ?? []) {
      for (const comparison of report.comparisons) {
        const direction = comparison.simulation > comparison.planner ? 'higher' : 'lower';
        if (comparison.difference > 0.2) {
          expect(comparison.reason).toEqual(expect.any(String));
          expect(comparison.reason).toBe(DIFFERENCE_REASONS[comparison.metric][direction]);
        } else expect(comparison.reason).toBeNull();
      }
    }
  });

  it(`is what ${CAPACITY_PAGE} shows`, () => {
    const page = readFileSync(resolve(PROJECT_ROOT, CAPACITY_PAGE), 'utf8');
    expect(readRegion(page, 'capacity-simulation')).toBe(simulationMarkdown());
  });
});
