/** The `botMix` part of lab/bench/results.json: per contestant and per event class, in the units AWS bills. */

import {
  costPerMillionEvents,
  type FrontDoor,
  measuredShape,
  referenceShape,
  type StackCost,
} from '../../cli/cost/stack-cost.ts';
import { median, round } from '../../cli/tools/statistics.ts';
import type { BotMixContestantName, BotMixOutput } from './consumer/bot-mix-worker.ts';
import type { EventClass } from './consumer/bot-mix-workload.ts';
import type { ConsumerRun } from './consumer/run-once.ts';

export interface BotMixContestant {
  /** Medians over the rounds; per turn = per 4 distinct events, the retries' share included. */
  readonly wruPerTurn: number;
  readonly rruPerTurn: number;
  readonly requestsPerTurn: number;
  /** The share of wruPerTurn counted for refused conditional writes (DynamoDB reports no units for them). */
  readonly refusedWriteWruPerTurn: number;
  /** Consumer Lambda, billed milliseconds (each invocation rounded up) per distinct event. */
  readonly lambdaMsPerEvent: number;
  readonly invocations: number;
  readonly redeliveries: number;
  readonly logBytesPerInvocation: number;
  readonly recordsPerSec: number;
  /**
   * Whole stack, dollars per million distinct events (cli/cost/stack-cost.ts): measured deliveries,
   * invocations, capacity units and log bytes; each consumer invocation billed docs/cost.md's assumed duration.
   */
  readonly dollarsPerMillionEvents: number;
  readonly dollarsByComponent: StackCost;
  /** The same with the consumer billed the milliseconds measured here (on DynamoDB Local, on this machine). */
  readonly dollarsPerMillionEventsAtMeasuredMs: number;
  /**
   * The same three figures behind a function URL instead of the HTTP API (no request charge, no access log);
   * absent from results written before the function URL was priced.
   */
  readonly functionUrl?: DoorCost;
  readonly effects: number;
  readonly missingEffects: number;
  readonly repeatedEffects: number;
}

export interface DoorCost {
  readonly dollarsPerMillionEvents: number;
  readonly dollarsByComponent: StackCost;
  readonly dollarsPerMillionEventsAtMeasuredMs: number;
}

/** Log bytes at INFO (what the functions log) and at DEBUG (INFO plus every line moved to debug). */
export interface LogBytesByLevel {
  readonly info: number;
  readonly debug: number;
}

/**
 * The bot mix's log volume, measured: the bytes the real receiver handler writes to stdout per delivery of the
 * mix (its lines and its EMF document, with a Lambda context), and the bytes ours' consumer writes per
 * invocation, each at both levels.
 */
export interface BotMixLogVolume {
  readonly receiverBytesPerDelivery: LogBytesByLevel;
  readonly consumerBytesPerInvocation: LogBytesByLevel;
}

export interface EventClassCost {
  readonly wru: number;
  readonly rru: number;
  readonly requests: number;
  /** Billed consumer milliseconds per delivery of the class; null where no run isolates it. */
  readonly lambdaMs: number | null;
}

export interface BotMixResults {
  readonly turns: number;
  readonly events: number;
  readonly deliveries: number;
  readonly retries: BotMixOutput['retries'];
  readonly rounds: number;
  readonly ours: BotMixContestant;
  readonly powertools: BotMixContestant;
  readonly powertoolsPerMessage: BotMixContestant;
  readonly oursNoUnhandledClaims: BotMixContestant;
  /** docs/design.md §2's write units for these batches, with the defaults and with claimUnhandledEvents false. */
  readonly floorWruPerTurn: number;
  readonly floorWruPerTurnNoUnhandledClaims: number;
  /** Per delivery of each class, measured on its own small workload (see buildEventClassWorkloads). */
  readonly eventClasses: Record<BotMixContestantName, Record<EventClass, EventClassCost>>;
  readonly classEvents: number;
  /** docs/cost.md's figure before the bot mix: every event fresh and handled, batches of 10. */
  readonly todaysDollarsPerMillionEvents: number;
  /** ours / Powertools, DynamoDB dollars (write and read units). */
  readonly dynamoDbCostRatio: number;
  readonly dynamoDbCostRatioPerMessage: number;
  /**
   * The same information on both sides: ours without claims for unhandled events against Powertools around the
   * per-message function (which never sees the statuses). Both pay the floor of a handled message's two writes.
   */
  readonly dynamoDbCostRatioLikeForLike: number;
  /**
   * Rounds of ours (defaults, and `claimUnhandledEvents: false`) whose write units differ from the floor or
   * that read anything; absent from results written before it was counted.
   */
  readonly roundsOffFloor?: number;
  /**
   * The refused claims of records that met their twin in flight and came back, per turn (median round), for
   * ours with the defaults and with `claimUnhandledEvents: false`; absent from results written before.
   */
  readonly returnedWruPerTurn?: number;
  readonly returnedWruPerTurnNoUnhandledClaims?: number;
  /** Absent from results written before the log volume was measured at both levels. */
  readonly logVolume?: BotMixLogVolume;
}

export const TODAYS_SHAPE = 'busy' as const;

/**
 * `receiverLogBytes`: what the receiver logged per delivery of the mix (lab/bench/receiver/log-volume-worker.ts);
 * without it, the receiver's log volume is docs/cost.md's assumption.
 */
export function summarizeBotMix(output: BotMixOutput, receiverLogBytes?: LogBytesByLevel): BotMixResults {
  const runsOf = (name: BotMixContestantName) => output.runs.filter((run) => run.contestant === name);
  // Results written before returns were counted have none: every run's floor is then the batches' own.
  const indexedRunsOf = (name: BotMixContestantName) =>
    output.runs
      .map((run, index) => ({ run, returned: output.returnedWru?.[index] ?? 0 }))
      .filter(({ run }) => run.contestant === name);
  const medianReturned = (name: BotMixContestantName) =>
    median(indexedRunsOf(name).map(({ returned }) => returned));
  const summary = (name: BotMixContestantName) =>
    summarizeContestant(runsOf(name), output, receiverLogBytes?.info);
  const ours = summary('ours');
  const powertools = summary('powertools');
  const powertoolsPerMessage = summary('powertoolsPerMessage');
  const oursNoUnhandledClaims = summary('oursNoUnhandledClaims');
  const floorWruPerTurn = round(output.floorWru / output.turns);
  const todays = costPerMillionEvents(referenceShape(TODAYS_SHAPE)).total;
  const dynamoDbCostRatio = round(ours.dollarsByComponent.dynamoDb / powertools.dollarsByComponent.dynamoDb);
  const dynamoDbCostRatioPerMessage = round(
    ours.dollarsByComponent.dynamoDb / powertoolsPerMessage.dollarsByComponent.dynamoDb,
  );
  const dynamoDbCostRatioLikeForLike = round(
    oursNoUnhandledClaims.dollarsByComponent.dynamoDb / powertoolsPerMessage.dollarsByComponent.dynamoDb,
  );
  return {
    turns: output.turns,
    events: output.events,
    deliveries: output.deliveries,
    retries: output.retries,
    rounds: runsOf('ours').length,
    ours,
    powertools,
    powertoolsPerMessage,
    oursNoUnhandledClaims,
    floorWruPerTurn,
    floorWruPerTurnNoUnhandledClaims: round(output.floorWruNoUnhandledClaims / output.turns),
    eventClasses: eventClasses(output),
    classEvents: output.classEvents,
    todaysDollarsPerMillionEvents: round(todays, 2),
    dynamoDbCostRatio,
    dynamoDbCostRatioPerMessage,
    dynamoDbCostRatioLikeForLike,
    returnedWruPerTurn: round(medianReturned('ours') / output.turns),
    returnedWruPerTurnNoUnhandledClaims: round(medianReturned('oursNoUnhandledClaims') / output.turns),
    roundsOffFloor:
      offFloor(indexedRunsOf('ours'), output.floorWru) +
      offFloor(indexedRunsOf('oursNoUnhandledClaims'), output.floorWruNoUnhandledClaims),
    ...(receiverLogBytes !== undefined &&
      output.debugRun !== undefined && {
        logVolume: {
          receiverBytesPerDelivery: receiverLogBytes,
          consumerBytesPerInvocation: {
            info: ours.logBytesPerInvocation,
            debug: round(output.debugRun.logBytes / output.debugRun.invocations, 0),
          },
        },
      }),
  };
}

/** Rounds whose write units differ from the floor plus their own returns, or that read anything. */
const offFloor = (runs: readonly { run: ConsumerRun; returned: number }[], floor: number) =>
  runs.filter(({ run, returned }) => run.wru !== floor + returned || run.rru !== 0).length;

function summarizeContestant(
  runs: readonly ConsumerRun[],
  output: BotMixOutput,
  receiverLogBytesPerDelivery: number | undefined,
): BotMixContestant {
  if (runs.length === 0) throw new Error('A bot-mix contestant has no run.');
  const perTurn = (pick: (run: ConsumerRun) => number) => round(median(runs.map(pick)) / output.turns);
  const middle = (pick: (run: ConsumerRun) => number) => median(runs.map(pick));
  const wru = middle((run) => run.wru);
  const rru = middle((run) => run.rru);
  const invocations = middle((run) => run.invocations);
  const billedMs = middle((run) => run.billedMs);
  const logBytes = middle((run) => run.logBytes);
  const measured = {
    events: output.events,
    deliveries: output.deliveries,
    consumerInvocations: invocations,
    wru,
    rru,
    consumerLogBytes: logBytes,
    receiverLogBytesPerDelivery,
  };
  const behind = (door: FrontDoor): DoorCost => {
    const cost = costPerMillionEvents(measuredShape(measured), door);
    const atMeasuredMs = costPerMillionEvents(
      measuredShape({ ...measured, consumerBilledMs: billedMs }),
      door,
    );
    return {
      dollarsPerMillionEvents: round(cost.total, 2),
      dollarsByComponent: Object.fromEntries(
        Object.entries(cost).map(([component, dollars]) => [component, round(dollars, 3)]),
      ) as unknown as StackCost,
      dollarsPerMillionEventsAtMeasuredMs: round(atMeasuredMs.total, 2),
    };
  };
  const httpApi = behind('http-api');
  return {
    wruPerTurn: perTurn((run) => run.wru),
    rruPerTurn: perTurn((run) => run.rru),
    requestsPerTurn: perTurn((run) => run.requests),
    refusedWriteWruPerTurn: perTurn((run) => run.failedConditionWru),
    lambdaMsPerEvent: round(billedMs / output.events, 2),
    invocations,
    redeliveries: middle((run) => run.redeliveries),
    logBytesPerInvocation: round(logBytes / invocations, 0),
    recordsPerSec: round(
      middle((run) => run.eventsPerSec),
      1,
    ),
    ...httpApi,
    functionUrl: behind('function-url'),
    effects: middle((run) => run.effects),
    missingEffects: Math.max(...runs.map((run) => run.missingEffects)),
    repeatedEffects: Math.max(...runs.map((run) => run.repeatedEffects)),
  };
}

function eventClasses(output: BotMixOutput): BotMixResults['eventClasses'] {
  const n = output.classEvents;
  const per = (run: ConsumerRun, deliveries: number): EventClassCost => ({
    wru: round(run.wru / deliveries),
    rru: round(run.rru / deliveries),
    requests: round(run.requests / deliveries),
    lambdaMs: round(run.billedMs / deliveries, 2),
  });
  return Object.fromEntries(
    Object.entries(output.classRuns).map(([name, runs]) => [
      name,
      {
        message: per(runs.message, n),
        status: per(runs.status, n),
        retry: per(runs.retry, n),
        // Each message twice in one batch, less the same messages once: the cost of the in-batch copy.
        retryInBatch: {
          wru: round((runs.retryInBatch.wru - runs.message.wru) / n),
          rru: round((runs.retryInBatch.rru - runs.message.rru) / n),
          requests: round((runs.retryInBatch.requests - runs.message.requests) / n),
          lambdaMs: null,
        },
      },
    ]),
  ) as BotMixResults['eventClasses'];
}
