/**
 * Each scenario's verdicts (docs/decisions.md, "Each scenario has verdicts; exactly once is judged on the
 * 200s"): what must hold for the defaults to carry it. A run whose verdict fails makes `npm run
 * capacity-simulation --` exit 1.
 */
import { P99_WAIT_TARGET_SECONDS } from '../../contract/capacity.ts';
import { backlogPeak, LatencySeries, type ScenarioMeasures } from './measures.ts';
import type { ScenarioName } from './scenarios.ts';

export interface Verdict {
  readonly name: string;
  readonly holds: boolean;
  readonly detail: string;
}

const MESSAGE_P99_MS = P99_WAIT_TARGET_SECONDS.message * 1000;
/**
 * The campaign's status backlog must fall to a tenth of its peak within this long; beside nine other numbers,
 * it must be empty this long after the campaign's last status.
 */
export const CAMPAIGN_DRAIN_SECONDS = 600;
/** The campaign beside nine numbers: number 0 runs the campaign, numbers 1 to 9 chat (scenarios.ts). */
const CAMPAIGN_NUMBER = 0;
const THE_NINE = Array.from({ length: 9 }, (_, index) => index + 1);

function exactlyOnce(m: ScenarioMeasures): Verdict {
  const { keys, missing, repeated, queuedAtEnd } = m.effects;
  // An event not effected when the run stops is either still queued or lost: only a drained run can tell.
  const pending =
    missing === 0
      ? ''
      : m.drained
        ? ' (every queue drained: lost)'
        : ` (${queuedAtEnd} still queued at the end)`;
  return {
    name: 'every accepted event effected exactly once',
    holds: m.effects.violations === 0 && keys > 0,
    detail: `${keys} events, ${missing} not effected when the run stopped${pending}, ${repeated} effected more than once`,
  };
}

function noDeadLetters(m: ScenarioMeasures): Verdict {
  const arrivals = m.deadLetters.statusLane + m.deadLetters.messageLane + m.deadLetters.quarantined;
  return { name: 'no DLQ arrival', holds: arrivals === 0, detail: `${arrivals} arrivals` };
}

function no429(m: ScenarioMeasures): Verdict {
  return {
    name: 'no 429',
    holds: m.sender.throttled429 === 0,
    detail: `${m.sender.throttled429} answered 429`,
  };
}

function noThrottledWrites(m: ScenarioMeasures): Verdict {
  return {
    name: 'no DynamoDB throttling',
    holds: m.dynamoDb.throttledAttempts === 0,
    detail: `${m.dynamoDb.throttledAttempts} write attempts throttled`,
  };
}

function messageWait(p99: number, who = 'message lane'): Verdict {
  return {
    name: `${who} p99 wait under 1 s`,
    holds: p99 < MESSAGE_P99_MS,
    detail: `p99 ${Math.round(p99)} ms`,
  };
}

function drained(m: ScenarioMeasures): Verdict {
  return {
    name: 'every update accepted and every queue drained',
    holds: m.drained && m.sender.pending === 0,
    detail: `${m.sender.pending} updates never accepted; ended after ${Math.round(m.virtualMs / 1000)} s`,
  };
}

/** The p99 status-lane wait of each of these numbers, the worst of them, and that of all of them together. */
export function statusWaitOf(
  m: ScenarioMeasures,
  numbers: readonly number[],
): { worstP99: number; worstNumber: number | undefined; p99: number } {
  let worstP99 = 0;
  let worstNumber: number | undefined;
  const series: LatencySeries[] = [];
  for (const number of numbers) {
    const waits = m.statusesByNumber.get(number)?.waits;
    if (waits === undefined) continue;
    series.push(waits);
    if (waits.percentile(99) >= worstP99) {
      worstP99 = waits.percentile(99);
      worstNumber = number;
    }
  }
  return { worstP99, worstNumber, p99: LatencySeries.merged(series).percentile(99) };
}

/** The light numbers' statuses wait no longer than a person would for a message, however the campaign queues. */
function lightStatusWait(m: ScenarioMeasures, numbers: readonly number[]): Verdict {
  const { worstP99, worstNumber, p99 } = statusWaitOf(m, numbers);
  const counted = numbers.every((number) => (m.statusesByNumber.get(number)?.waits.count ?? 0) > 0);
  return {
    name: `the ${numbers.length} other numbers' statuses p99 wait under 1 s (status lane)`,
    holds: counted && worstP99 < MESSAGE_P99_MS,
    detail: `worst p99 ${Math.round(worstP99)} ms (number ${worstNumber ?? '-'}), all ${numbers.length} together ${Math.round(p99)} ms`,
  };
}

/** The campaign's own statuses are all handled within the drain limit of its last one. */
function campaignStatusesDrained(m: ScenarioMeasures, number: number): Verdict {
  const statuses = m.statusesByNumber.get(number);
  const seconds =
    statuses?.drainedMs === undefined ? undefined : (statuses.drainedMs - statuses.lastAcceptedMs) / 1000;
  return {
    name: `the campaign's status backlog emptied within ${CAMPAIGN_DRAIN_SECONDS} s of its last status`,
    holds: seconds !== undefined && seconds <= CAMPAIGN_DRAIN_SECONDS,
    detail:
      statuses === undefined
        ? 'no status'
        : `${statuses.peakBacklog} of its statuses queued at most; its last accepted at ${(statuses.lastAcceptedMs / 1000).toFixed(1)} s, ${seconds === undefined ? 'never emptied' : `emptied ${seconds.toFixed(1)} s later`}`,
  };
}

export function verdicts(name: ScenarioName, m: ScenarioMeasures): Verdict[] {
  switch (name) {
    case 'steady':
      return [
        no429(m),
        noThrottledWrites(m),
        messageWait(m.waits.message.percentile(99)),
        exactlyOnce(m),
        noDeadLetters(m),
      ];
    case 'campaign': {
      const { drainSeconds } = backlogPeak(m.backlog.status);
      return [
        no429(m),
        messageWait(m.waits.message.percentile(99), 'live chats (message lane)'),
        {
          name: `status backlog drained within ${CAMPAIGN_DRAIN_SECONDS} s of its peak`,
          holds: drainSeconds !== undefined && drainSeconds <= CAMPAIGN_DRAIN_SECONDS,
          detail: drainSeconds === undefined ? 'never drained' : `${drainSeconds} s`,
        },
        exactlyOnce(m),
        noDeadLetters(m),
      ];
    }
    case 'outage':
      return [drained(m), exactlyOnce(m), noDeadLetters(m)];
    case 'ten-numbers': {
      let worst = 0;
      for (const [number, series] of m.waitsByNumber)
        if (number !== 0) worst = Math.max(worst, series.percentile(99));
      return [messageWait(worst, "the 9 other numbers' chats"), exactlyOnce(m), noDeadLetters(m)];
    }
    case 'campaign-beside-nine':
      return [
        lightStatusWait(m, THE_NINE),
        campaignStatusesDrained(m, CAMPAIGN_NUMBER),
        exactlyOnce(m),
        noDeadLetters(m),
      ];
  }
}
