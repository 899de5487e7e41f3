/**
 * The `stormIsolation` part of lab/bench/results.json (docs/benchmarks.md, "Storm isolation"): the capacity
 * simulation's campaign scenario (lab/capacity-simulation/scenarios.ts, its short version) run twice with the
 * same seed, once as it is and once with the campaign's messages taken out, so that the number's customers
 * write in alone, at the same moments. What a live chat feels of a campaign is the message lane's p99 wait in the first beside the
 * second: the real receiver and consumer over models of SQS, Lambda and DynamoDB in virtual time, so that the
 * figure is the product's (its lanes, their sizes, the table's throughput) and not the contention of emulators
 * sharing a machine.
 */
import { round } from '../../../cli/tools/statistics.ts';
import type { LatencySeries } from '../../capacity-simulation/measures.ts';
import { scenario } from '../../capacity-simulation/scenarios.ts';
import { runScenario, type ScenarioConfig } from '../../capacity-simulation/simulation.ts';

/** One run's lane waits, from the first acceptance of an event to its handler's start (virtual ms). */
export interface LaneWaits {
  /** Message-lane events handled: the samples of the p99. */
  readonly messages: number;
  readonly messageP50Ms: number;
  readonly messageP99Ms: number;
  readonly statuses: number;
  readonly statusP99Ms: number;
}

export interface StormIsolationResults {
  readonly scenario: string;
  readonly short: boolean;
  readonly seed: number;
  /** Outbound messages of the campaign, each followed by three statuses. */
  readonly campaignMessages: number;
  /** Customers' messages per second, in both runs. */
  readonly inboundPerSecond: number;
  readonly withCampaign: LaneWaits;
  readonly withoutCampaign: LaneWaits;
  /** Wall seconds both runs took. */
  readonly wallSeconds: number;
}

/**
 * The campaign scenario with its campaign taken out: the same number, the same customers writing in at the same
 * moments (the campaign is drawn but not sent, so that the seed's draws of the inbound messages stay the same).
 */
export function withoutCampaign(config: ScenarioConfig): ScenarioConfig {
  return {
    ...config,
    name: `${config.name}, without the campaign`,
    numbers: config.numbers.map((number) => ({ ...number, outboundSilent: true })),
  };
}

export function laneWaits(waits: {
  readonly message: LatencySeries;
  readonly status: LatencySeries;
}): LaneWaits {
  return {
    messages: waits.message.count,
    messageP50Ms: waits.message.percentile(50),
    messageP99Ms: waits.message.percentile(99),
    statuses: waits.status.count,
    statusP99Ms: waits.status.percentile(99),
  };
}

export async function runStormIsolation(
  options: { seed: number; short: boolean },
  log: (line: string) => void,
): Promise<StormIsolationResults> {
  const started = performance.now();
  const config = scenario('campaign', options.short);
  const quiet = withoutCampaign(config);
  const waitsOf = async (run: ScenarioConfig) => {
    const measures = await runScenario(run, options.seed);
    const waits = laneWaits(measures.waits);
    log(
      `storm: ${run.name}: message lane p99 ${waits.messageP99Ms} ms over ${waits.messages} messages, ` +
        `status lane p99 ${waits.statusP99Ms} ms over ${waits.statuses} statuses`,
    );
    return waits;
  };
  const withCampaign = await waitsOf(config);
  const without = await waitsOf(quiet);
  const number = config.numbers[0];
  return {
    scenario: config.name,
    short: options.short,
    seed: options.seed,
    campaignMessages: config.numbers.reduce((sum, n) => sum + (n.outboundTotal ?? 0), 0),
    inboundPerSecond: number?.inboundPerSecond ?? 0,
    withCampaign,
    withoutCampaign: without,
    wallSeconds: round((performance.now() - started) / 1000, 1),
  };
}
