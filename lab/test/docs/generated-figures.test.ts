/**
 * No figure typed by hand. Every page under docs/ and the README is scanned for the figures a bench, a
 * simulation or a report produces (lab/bench/markdown/hand-typed-figures.ts: ratios, dollars, percentages, ms, rates,
 * counts of schedules, faults and effects, a reliability run's counts). Each one must sit in a generated region
 * (`<!-- generated:NAME -->` … `<!-- /generated:NAME -->`) that regionGenerators below regenerates and
 * compares, or be listed in ./figure-allow-list.ts: a constant with its source, or a pending conversion with its
 * owner.
 *
 * To add a page or a README section: nothing, README.md and every .md under docs/ are scanned. To add a
 * generated region: write its generator and add it to regionGenerators, or to REGIONS_CHECKED_ELSEWHERE with
 * the test that compares it (a region nobody checks fails). To type a constant: add it to CONSTANT_FIGURES
 * with its source. To catch another kind of figure: add a pattern to FIGURE_PATTERNS.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRICES } from '../../../cli/cost/prices.ts';
import { costPerMillionEvents, referenceShape } from '../../../cli/cost/stack-cost.ts';
import { dollars, times } from '../../../cli/tools/markdown-table.ts';
import {
  FAN_OUT_SUBSCRIBER_COUNTS,
  fanOutCost,
  subscriberCostPerMillion,
} from '../../bench/cost/fan-out-cost.ts';
import { GOALS, goals, judgeGoals } from '../../bench/goals.ts';
import { fanOutTable } from '../../bench/markdown/fan-out-table.ts';
import { handTypedFigures, regionNames, unlistedFigures } from '../../bench/markdown/hand-typed-figures.ts';
import { readResults } from '../../bench/results-markdown.ts';
import { regionGenerators, staleRegions } from '../../docs/generated-regions.ts';
import { readRegion } from '../../docs/markdown/regions.ts';
import { type AllowedFigures, CONSTANT_FIGURES, PENDING_FIGURES } from './figure-allow-list.ts';

const ROOT = new URL('../../../', import.meta.url);
const page = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

/** README.md and every page under docs/, from the repository root. */
const PAGES = [
  'README.md',
  ...readdirSync(new URL('docs/', ROOT), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`)
    .sort(),
];

/**
 * Regions whose generator runs inside another test (it needs fakes or a replay), which compares the region with
 * it: named here so that a region nobody checks still fails.
 */
const REGIONS_CHECKED_ELSEWHERE: readonly { page: string; region: string; test: string }[] = [
  { page: 'docs/operations.md', region: 'ops-permissions', test: 'cli/test/unit/ops/aws-calls.test.ts' },
];

const allowedOn = (path: string, lists: readonly AllowedFigures[]) =>
  lists.filter((entry) => entry.page === path).flatMap((entry) => entry.figures);

describe('the figure scanner, on a made-up page', () => {
  const made = [
    'The handler took ×2.5 the floor and 12 ms per delivery.',
    '<!-- generated:results -->',
    'Generated: ×9.99 and 99 ms, $4.13, 97%.',
    '<!-- /generated:results -->',
    'A constant: 6 × the function timeout.',
    'Also $0.42, 97 %, 534 events/s, 8/s, 5000 schedules, faults 747, effects: 12, 3x and 0.945s.',
    'A run: 503 after 35 failed SendMessageBatch calls, 2 parts stored (12 events run), 40 events effected, bit flips 8/39.',
  ].join('\n');

  it('finds a hand-typed ratio and milliseconds outside a region, with their line, and nothing inside', () => {
    const found = handTypedFigures(made);
    expect(found.slice(0, 2)).toEqual([
      { figure: '×2.5', kind: 'ratio', line: 1 },
      { figure: '12 ms', kind: 'duration', line: 1 },
    ]);
    expect(found.filter((figure) => figure.line >= 2 && figure.line <= 4)).toEqual([]);
    expect(regionNames(made)).toEqual(['results']);
  });

  it('finds each kind of produced figure', () => {
    expect(
      handTypedFigures(made)
        .filter((figure) => figure.line === 6)
        .map((figure) => figure.figure),
    ).toEqual(
      expect.arrayContaining([
        '$0.42',
        '97 %',
        '534 events/s',
        '8/s',
        '5000 schedules',
        'faults 747',
        'effects: 12',
        '3x',
        '0.945s',
      ]),
    );
    expect(
      handTypedFigures(made)
        .filter((figure) => figure.line === 7)
        .map((figure) => figure.figure),
    ).toEqual([
      '35 failed SendMessageBatch calls',
      '2 parts stored',
      '12 events run',
      '40 events effected',
      '8/39',
    ]);
  });

  it('lets through only the figures listed, and fails the rest', () => {
    expect(unlistedFigures(made, ['6 ×']).map((figure) => figure.figure)).not.toContain('6 ×');
    expect(unlistedFigures(made, ['6 ×']).map((figure) => figure.figure)).toEqual(
      expect.arrayContaining(['×2.5', '12 ms']),
    );
    expect(unlistedFigures(made, []).map((figure) => figure.figure)).toContain('6 ×');
  });

  it('does not take numbers that are not produced figures', () => {
    expect(handTypedFigures('1000 updates, 10 entries, seeds 1–2000, HTTP 503, 2^53, 0x1F, node22.')).toEqual(
      [],
    );
  });
});

describe('generated figures', () => {
  it('every page holds what its generators write (npm run docs -- --check)', async () => {
    expect(staleRegions(regionGenerators(await readResults()))).toEqual([]);
  });

  it('every generated region of every page is one a generator writes, and holds what it writes', async () => {
    const generators = regionGenerators(await readResults());
    for (const path of PAGES) {
      const text = page(path);
      for (const name of regionNames(text)) {
        const elsewhere = REGIONS_CHECKED_ELSEWHERE.find((r) => r.page === path && r.region === name);
        if (elsewhere) {
          expect(page(elsewhere.test), `${elsewhere.test} checks ${path}#${name}`).toContain(`'${name}'`);
          continue;
        }
        const generated = generators[path]?.[name];
        expect(generated, `${path}#${name} has no generator in regionGenerators`).toBeDefined();
        expect(readRegion(text, name), `${path}#${name}`).toBe(generated?.trim());
      }
    }
    for (const [path, regions] of Object.entries(generators)) {
      expect(regionNames(page(path)), path).toEqual(expect.arrayContaining(Object.keys(regions)));
    }
  });

  it('leaves no produced figure outside the generated regions of any page, but the listed ones', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/benchmarks.md', 'docs/reliability.md']));
    const unlisted = PAGES.flatMap((path) =>
      unlistedFigures(page(path), [
        ...allowedOn(path, CONSTANT_FIGURES),
        ...allowedOn(path, PENDING_FIGURES),
      ]).map((found) => `${path}:${found.line} ${found.figure}`),
    );
    expect(unlisted).toEqual([]);
  });

  it('lists only figures that are still on their pages, each with a reason', () => {
    for (const entry of [...CONSTANT_FIGURES, ...PENDING_FIGURES]) {
      expect(PAGES, entry.page).toContain(entry.page);
      expect(entry.reason.length, `${entry.page}: reason`).toBeGreaterThan(20);
      const found = new Set(handTypedFigures(page(entry.page)).map((figure) => figure.figure));
      for (const figure of entry.figures) expect(found.has(figure), `${entry.page}: ${figure}`).toBe(true);
    }
  });

  it('stores the goals that the figures give, and the pages print them', async () => {
    const results = await readResults();
    expect(results.goals).toEqual(goals(results));
    const verdicts = judgeGoals(results);
    const table = readRegion(page('docs/benchmarks.md'), 'results');
    const summary = readRegion(page('docs/benchmarks.md'), 'summary').replace(/\s+/g, ' ');
    const met = summary.slice(summary.indexOf('Met:'), summary.indexOf('Not met:'));
    const notMet = summary.slice(summary.indexOf('Not met:'));
    for (const goal of GOALS) {
      const verdict = verdicts[goal.name];
      const row = table.split('\n').find((line) => line.startsWith(`| \`${goal.name}\``));
      expect(row, goal.name).toBeDefined();
      expect(row).toContain(verdict ? goal.format(verdict.measured) : 'not measured');
      // Cells are padded to the widest: compare with single spaces.
      expect(
        row
          ?.replace(/\s+/g, ' ')
          .trim()
          .endsWith(verdict?.met === false ? '| **no** |' : verdict?.met ? '| yes |' : '| not measured |'),
      ).toBe(true);
      if (verdict) expect(verdict.met ? met : notMet, goal.name).toContain(goal.short);
    }
    expect(Object.keys(results.goals)).toEqual(GOALS.map((goal) => goal.name));
  });

  it('the benchmarks summary gives cost per million events against Powertools, drain rate and receiver ratio', async () => {
    const results = await readResults();
    // Wrapped at the page's width: compare with single spaces.
    const summary = readRegion(page('docs/benchmarks.md'), 'summary').replace(/\s+/g, ' ');
    expect(summary).toContain(`${dollars(results.botMix.ours.dollarsPerMillionEvents)} per million events`);
    expect(summary).toContain(dollars(results.botMix.powertools.dollarsPerMillionEvents));
    expect(summary).toContain(dollars(results.botMix.powertoolsPerMessage.dollarsPerMillionEvents));
    expect(summary).toContain(times(results.consumer.speedup));
    const thousand = results.receiver.bodies.find((body) => body.updates === 1000);
    expect(summary).toContain(times(thousand?.ratio ?? Number.NaN));
    expect(summary).toContain('[below](#goals)');
  });

  it("docs/receiver.md gives the 1000-update body's queue messages and ratio from the results", async () => {
    const results = await readResults();
    const thousand = results.receiver.bodies.find((body) => body.updates === 1000);
    const region = readRegion(page('docs/receiver.md'), 'receiver-performance');
    expect(region).toMatch(
      new RegExp(
        `\\| 1000 +\\| .+\\| +${thousand?.queueMessages} \\| .+\\| +${times(thousand?.ratio ?? Number.NaN)} \\|`,
      ),
    );
  });

  it('prices the reference shapes from the one price module', () => {
    const busy = costPerMillionEvents(referenceShape('busy'));
    expect(busy.dynamoDb).toBeCloseTo(2 * PRICES.dynamoDb.perWriteRequestUnit * 1e6, 9);
    expect(busy.apiGateway).toBeCloseTo(PRICES.apiGateway.perRequest * 1e6, 9);
    const quiet = costPerMillionEvents(referenceShape('quiet'));
    // Batches of one: ten times the consumer invocations, and a receive and a delete for each.
    expect(quiet.sqs - busy.sqs).toBeCloseTo(2 * (1e6 - 1e5) * PRICES.sqs.perRequest, 9);
    expect(quiet.total).toBeGreaterThan(busy.total);
  });

  it('prices the fan-out of both mechanisms from the same shapes and prices', () => {
    const busy = referenceShape('busy');
    // One subscriber through the receiver is the busy shape itself, split into its parts.
    expect(fanOutCost('receiverSends', 1, busy).total).toBeCloseTo(costPerMillionEvents(busy).total, 9);
    const own = subscriberCostPerMillion(busy);
    expect(own.dynamoDb).toBeCloseTo(2 * PRICES.dynamoDb.perWriteRequestUnit * 1e6, 9);
    // A receive and a delete per batch of its own event source.
    expect(own.sqsReceiveAndDelete).toBeCloseTo(
      2 * busy.consumerInvocationsPerEvent * 1e6 * PRICES.sqs.perRequest,
      9,
    );
    for (const subscribers of FAN_OUT_SUBSCRIBER_COUNTS) {
      const ours = fanOutCost('receiverSends', subscribers, busy);
      const sns = fanOutCost('snsTopic', subscribers, busy);
      // The receiver sends once per queue; SNS is billed one publish, whatever the number of subscriptions.
      expect(ours.fanOut).toBeCloseTo(subscribers * PRICES.sqs.perRequest * 1e6, 9);
      expect(sns.fanOut).toBeCloseTo(PRICES.sns.perPublishRequest * 1e6, 9);
      expect(sns.shared).toBeCloseTo(ours.shared, 9);
      expect(ours.subscribersOwn).toBeCloseTo(subscribers * own.total, 9);
      expect(sns.total - ours.total).toBeCloseTo(sns.fanOut - ours.fanOut, 9);
    }
  });

  it('shows the fan-out table in docs/cost.md, priced from prices.ts', () => {
    const table = fanOutTable();
    expect(readRegion(page('docs/cost.md'), 'fan-out')).toContain(table);
    for (const subscribers of FAN_OUT_SUBSCRIBER_COUNTS) {
      expect(table).toContain(dollars(fanOutCost('receiverSends', subscribers).total));
      expect(table).toContain(dollars(fanOutCost('snsTopic', subscribers).total));
    }
    expect(readRegion(page('docs/cost.md'), 'prices')).toContain(dollars(PRICES.sns.perPublishRequest * 1e6));
  });
});
