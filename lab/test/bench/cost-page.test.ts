/** docs/cost.md's bot-mix region behind both front doors, and its logs line at INFO and DEBUG. */
import { describe, expect, it } from 'vitest';
import { PRICES } from '../../../cli/cost/prices.ts';
import { ASSUMPTIONS, KB_PER_GB } from '../../../cli/cost/stack-cost.ts';
import { dollars, n } from '../../../cli/tools/markdown-table.ts';
import type { BotMixContestant } from '../../bench/bot-mix-results.ts';
import { logsAtLevels, perMillionRegion } from '../../bench/markdown/cost-page.ts';
import type { ResultsFile } from '../../bench/results.ts';
import { readResults } from '../../bench/results-markdown.ts';

/** The committed results, with what a run since the function URL and the log levels were measured adds. */
async function measuredBothWays(): Promise<ResultsFile> {
  const results = await readResults();
  const ours: BotMixContestant = {
    ...results.botMix.ours,
    functionUrl: {
      dollarsPerMillionEvents: 2.47,
      dollarsByComponent: { ...results.botMix.ours.dollarsByComponent, apiGateway: 0, total: 2.47 },
      dollarsPerMillionEventsAtMeasuredMs: 2.5,
    },
  };
  return {
    ...results,
    botMix: {
      ...results.botMix,
      ours,
      logVolume: {
        receiverBytesPerDelivery: { info: 600, debug: 1400 },
        consumerBytesPerInvocation: { info: 1800, debug: 8000 },
      },
    },
  };
}

describe("docs/cost.md's bot mix behind both doors", () => {
  it('shows ours behind a function URL, and the logs at both levels, once a run measured them', async () => {
    const results = await measuredBothWays();
    const region = perMillionRegion(results);
    expect(region).toContain('bot mix, ours, function URL');
    expect(region).toContain('**Two front doors.**');
    expect(region.replace(/\s+/g, ' ')).toContain(`ours in the bot mix ${dollars(2.47)}`);
    const logs = logsAtLevels(results);
    const deliveries = results.botMix.deliveries / results.botMix.events;
    // The access log is what the HTTP API adds to the logs line, at either level.
    for (const level of ['info', 'debug'] as const) {
      expect((logs?.[level]['http-api'] ?? 0) - (logs?.[level]['function-url'] ?? 0)).toBeCloseTo(
        ((deliveries * 1e6 * ASSUMPTIONS.apiAccessLogKB) / KB_PER_GB) * PRICES.cloudWatch.logsPerGbIngested,
        9,
      );
    }
    // 800 bytes more per delivery and 6,200 per consumer invocation at DEBUG.
    expect((logs?.debug['http-api'] ?? 0) - (logs?.info['http-api'] ?? 0)).toBeCloseTo(
      ((deliveries * 1e6 * 0.8 + results.botMix.ours.invocations * (1e6 / results.botMix.events) * 6.2) /
        KB_PER_GB) *
        PRICES.cloudWatch.logsPerGbIngested,
      9,
    );
    const paragraph = region.replace(/\s+/g, ' ');
    for (const figure of [n(600), n(1400), n(1800), n(8000)]) expect(paragraph).toContain(figure);
    expect(paragraph).toContain(`**after** (INFO): ${dollars(logs?.info['http-api'] ?? Number.NaN)}`);
  });

  it('leaves the column and the logs paragraph out of results written before they were measured', async () => {
    const results = await readResults();
    const legacy: ResultsFile = {
      ...results,
      botMix: {
        ...results.botMix,
        ours: { ...results.botMix.ours, functionUrl: undefined },
        logVolume: undefined,
      },
    };
    const region = perMillionRegion(legacy);
    expect(region).not.toContain('bot mix, ours, function URL');
    expect(region).not.toContain('before and after the cut');
    expect(logsAtLevels(legacy)).toBeUndefined();
  });
});
