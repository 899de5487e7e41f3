/**
 * The capacity simulation's five scenarios, each full and short (`npm test` runs the short ones within its
 * time budget): the short version keeps the full one's rates and verdicts and shortens what can be shortened:
 * 1 s of traffic instead of 10 or 5 minutes (steady, ten numbers), a campaign of 1,000 messages instead of
 * 100,000, 15 s of a campaign beside nine numbers instead of 10 minutes (long enough that the backlog the
 * campaign's statuses build in the status lane keeps them past 1 s at p99, which without fair queues the nine's
 * would share); the outage's short version lasts 1 minute instead of 40, at 5 messages/s each way
 * instead of 100 (docs/decisions.md, "The full outage runs below a number's top tier", says why the full one
 * is not at a number's top tier). Steady traffic (steady, ten numbers, campaign beside nine, outage) is a
 * window: warmed up, so that the statuses of earlier messages arrive from its first second, and cut at its end,
 * so that what the endpoint sees is the steady rate throughout.
 */
import { ACTIVE_CONVERSATION_SECONDS, DEFAULT_EXPECTED_PEAK } from '../../contract/capacity.ts';
import type { ScenarioConfig } from './simulation.ts';
import type { NumberTraffic } from './traffic.ts';

export const SCENARIO_NAMES = [
  'steady',
  'campaign',
  'outage',
  'ten-numbers',
  'campaign-beside-nine',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/**
 * Scenarios whose full run is not recorded yet, each with why: lab/capacity-simulation/results.json holds the
 * full run of every other scenario, and docs/capacity.md says which are missing. Their short runs are in
 * `npm test` all the same.
 */
export const AWAITING_FULL_RUN: Readonly<Partial<Record<ScenarioName, string>>> = {};

const TOP = DEFAULT_EXPECTED_PEAK.messagesPerSecond;
const MINUTE = 60_000;
/**
 * The full outage's live chat rate each way, below the top tier so that an hour of its traffic and the retries
 * of 40 minutes of it can be simulated within a session here (docs/decisions.md, "The full outage runs below
 * a number's top tier").
 */
const OUTAGE_MESSAGES_PER_SECOND = 100;
/** The latest a read status follows its message (traffic.ts): a run warmed up this long meets the steady rate. */
const STATUS_TAIL_MS = 66_000;

/** One number at the top tier, as the planner's default peak: as many inbound messages as outbound. */
function topTierNumber(index: number): NumberTraffic {
  return {
    index,
    outboundPerSecond: TOP,
    inboundPerSecond: DEFAULT_EXPECTED_PEAK.inboundPerSecond ?? TOP,
    conversations: TOP * ACTIVE_CONVERSATION_SECONDS,
  };
}

/** A live chat number: customers write, the bot answers each (3 statuses per answer). */
function chatNumber(index: number, perSecond: number): NumberTraffic {
  return {
    index,
    outboundPerSecond: perSecond,
    inboundPerSecond: perSecond,
    conversations: perSecond * ACTIVE_CONVERSATION_SECONDS,
  };
}

function campaignNumber(index: number, total: number): NumberTraffic {
  return {
    index,
    outboundPerSecond: TOP,
    outboundTotal: total,
    inboundPerSecond: 100,
    conversations: 100_000,
  };
}

/** One number at the top tier (with 100 inbound messages a second) beside nine live chats of 20 a second. */
function tenNumbers(): NumberTraffic[] {
  return [
    { ...topTierNumber(0), inboundPerSecond: 100 },
    ...Array.from({ length: 9 }, (_, index) => chatNumber(index + 1, 20)),
  ];
}

export function scenario(name: ScenarioName, short: boolean): ScenarioConfig {
  switch (name) {
    case 'steady':
      return {
        name,
        trafficMs: short ? 1_000 : 10 * MINUTE,
        warmUpMs: STATUS_TAIL_MS,
        windowed: true,
        numbers: [topTierNumber(0)],
        drainLimitMs: 10 * MINUTE,
      };
    case 'campaign': {
      const total = short ? 1_000 : 100_000;
      return {
        name,
        trafficMs: (total / TOP) * 1000 + (short ? 1_000 : MINUTE),
        numbers: [campaignNumber(0, total)],
        drainLimitMs: 10 * MINUTE,
      };
    }
    case 'outage':
      return {
        name,
        trafficMs: short ? 150_000 : 60 * MINUTE,
        warmUpMs: STATUS_TAIL_MS,
        windowed: true,
        numbers: [chatNumber(0, short ? 5 : OUTAGE_MESSAGES_PER_SECOND)],
        outage: short
          ? { fromMs: 10_000, durationMs: MINUTE }
          : { fromMs: 5 * MINUTE, durationMs: 40 * MINUTE },
        drainLimitMs: 2 * 60 * MINUTE,
      };
    case 'ten-numbers':
      return {
        name,
        trafficMs: short ? 1_000 : 5 * MINUTE,
        warmUpMs: STATUS_TAIL_MS,
        windowed: true,
        numbers: tenNumbers(),
        drainLimitMs: 10 * MINUTE,
      };
    case 'campaign-beside-nine':
      // Ten numbers' traffic: the campaign's statuses and the nine's outrun the status lane's drain, and only
      // SQS fair queues keep the nine's from queueing behind the campaign's.
      return {
        name,
        trafficMs: short ? 15_000 : 10 * MINUTE,
        warmUpMs: STATUS_TAIL_MS,
        windowed: true,
        numbers: tenNumbers(),
        drainLimitMs: 10 * MINUTE,
      };
  }
}

/**
 * A control that must fail: the steady scenario behind the route throttle of before the construct sized it for
 * a peak (1,000 rps).
 */
export function oldThrottleControl(): ScenarioConfig {
  return {
    ...scenario('steady', true),
    name: 'steady, 1,000 rps throttle',
    overrides: { throttleRate: 1_000, throttleBurst: 1_000 },
    // The 429s are the point: the run stops before Meta's retries are served.
    drainLimitMs: 3_000,
  };
}
