/**
 * Child process of `npm run bench`: the bot mix (see bot-mix-workload.ts) drained by ours and by Powertools,
 * each in two configurations, on the same DynamoDB Local: warm-up, then rounds of one run each (the order
 * flipped every round, ours next to Powertools' recipe in all of them), then one small run per contestant and
 * event class. Capacity units come from DynamoDB's answers (`ReturnConsumedCapacity`), see
 * lab/bench/support/consumed-capacity.ts.
 */
import { serveWorker } from '../support/worker-process.ts';
import {
  buildBotMixWorkload,
  buildEventClassWorkloads,
  type EventClass,
  floorWriteUnits,
  returnedClaimUnits,
} from './bot-mix-workload.ts';
import {
  type Contestant,
  ours,
  oursWith,
  POWERTOOLS_ANY_EVENT_KEY,
  powertoolsKeyedOn,
  powertoolsPerMessage,
} from './contestants.ts';
import { roundOrder } from './rounds.ts';
import { type ConsumerRun, runOnce } from './run-once.ts';

export interface BotMixInput {
  readonly dynamodbEndpoint: string;
  readonly turns: number;
  readonly retryRatio: number;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly functionTimeoutMs: number;
  readonly rounds: number;
  readonly warmupTurns: number;
  /** Deliveries of each event-class run. */
  readonly classEvents: number;
}

export const BOT_MIX_CONTESTANTS = [
  'powertools',
  'ours',
  'powertoolsPerMessage',
  'oursNoUnhandledClaims',
] as const;
export type BotMixContestantName = (typeof BOT_MIX_CONTESTANTS)[number];

export interface BotMixOutput {
  readonly turns: number;
  readonly events: number;
  readonly deliveries: number;
  readonly retries: {
    readonly sameBytes: number;
    readonly rebatchedBodies: number;
    readonly rebatchedEvents: number;
  };
  readonly distinctWamids: number;
  readonly floorWru: number;
  readonly floorWruNoUnhandledClaims: number;
  readonly runs: ConsumerRun[];
  /** Each run's {@link returnedClaimUnits}, in the order of `runs`: its floor is `floorWru` (or the other) plus it. */
  readonly returnedWru: number[];
  readonly classRuns: Record<BotMixContestantName, Record<EventClass, ConsumerRun>>;
  readonly classEvents: number;
  /** One more run of ours on the same workload, logging at DEBUG: its log bytes beside the rounds' (INFO). */
  readonly debugRun: ConsumerRun;
}

const CONTESTANTS: Record<BotMixContestantName, Contestant> = {
  powertools: powertoolsKeyedOn(POWERTOOLS_ANY_EVENT_KEY),
  ours,
  powertoolsPerMessage,
  oursNoUnhandledClaims: oursWith('oursNoUnhandledClaims', { claimUnhandledEvents: false }),
};

/** Ours must be exact; the others' effects are reported (missing, repeated) rather than enforced. */
const strict = (name: string) => name.startsWith('ours');

serveWorker<BotMixInput, BotMixOutput>(async (input, progress) => {
  const workload = buildBotMixWorkload({
    turns: input.turns,
    retryRatio: input.retryRatio,
    batchSize: input.batchSize,
  });
  const warmup = buildBotMixWorkload({
    turns: input.warmupTurns,
    retryRatio: input.retryRatio,
    batchSize: input.batchSize,
    seed: 5,
    serialOffset: 5_000_000,
  });
  const contestants = BOT_MIX_CONTESTANTS.map((name) => CONTESTANTS[name]);
  for (const contestant of contestants) {
    const run = await runOnce(contestant, warmup, input, { strict: strict(contestant.name) });
    progress(`bot mix warm-up ${contestant.name}: ${run.wallMs.toFixed(0)} ms`);
  }
  const runs: ConsumerRun[] = [];
  for (let round = 0; round < input.rounds; round++) {
    for (const contestant of roundOrder(contestants, round)) {
      const run = await runOnce(contestant, workload, input, { strict: strict(contestant.name) });
      runs.push(run);
      progress(
        `bot mix ${round + 1}/${input.rounds} ${contestant.name}: ${(run.wru / workload.turns).toFixed(2)} WRU/turn, ` +
          `${(run.rru / workload.turns).toFixed(2)} RRU/turn, ${run.eventsPerSec.toFixed(0)} records/s, ` +
          `${run.effects} effects (${run.missingEffects} missing, ${run.repeatedEffects} repeated)`,
      );
    }
  }
  const debugRun = await atLogLevel('DEBUG', () => runOnce(ours, workload, input, { strict: true }));
  progress(`bot mix ours at DEBUG: ${debugRun.logBytes} log bytes in ${debugRun.invocations} invocations`);
  const classes = buildEventClassWorkloads(input.classEvents, input.batchSize);
  const classRuns = {} as Record<BotMixContestantName, Record<EventClass, ConsumerRun>>;
  for (const name of BOT_MIX_CONTESTANTS) {
    const contestant = CONTESTANTS[name];
    const byClass = {} as Record<EventClass, ConsumerRun>;
    for (const [eventClass, classWorkload] of Object.entries(classes) as [
      EventClass,
      (typeof classes)[EventClass],
    ][]) {
      byClass[eventClass] = await runOnce(contestant, classWorkload, input, {
        strict: strict(name),
        prime: classWorkload.prime,
      });
    }
    classRuns[name] = byClass;
    progress(
      `bot mix classes ${name}: ` +
        Object.entries(byClass)
          .map(([eventClass, run]) => `${eventClass} ${run.wru} WRU`)
          .join(', '),
    );
  }
  return {
    turns: workload.turns,
    events: workload.events,
    deliveries: workload.records.length,
    retries: workload.retries,
    distinctWamids: workload.distinctWamids.size,
    floorWru: floorWriteUnits(workload, { claimUnhandledEvents: true }),
    floorWruNoUnhandledClaims: floorWriteUnits(workload, { claimUnhandledEvents: false }),
    runs,
    returnedWru: runs.map((run) =>
      returnedClaimUnits(workload, run.redeliveredIds, {
        claimUnhandledEvents: run.contestant !== 'oursNoUnhandledClaims',
      }),
    ),
    classRuns,
    classEvents: input.classEvents,
    debugRun,
  };
});

/** Powertools reads its level when a Logger is made, and runOnce makes each container's logger anew. */
async function atLogLevel<T>(level: string, work: () => Promise<T>): Promise<T> {
  const before = process.env.POWERTOOLS_LOG_LEVEL;
  process.env.POWERTOOLS_LOG_LEVEL = level;
  try {
    return await work();
  } finally {
    if (before === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
    else process.env.POWERTOOLS_LOG_LEVEL = before;
  }
}
