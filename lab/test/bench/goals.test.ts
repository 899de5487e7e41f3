/** The bench's goals judged on made-up results: met, not met, at the threshold, and unmeasured parts. */
import { describe, expect, it } from 'vitest';
import { GOALS, type GoalInputs, goals, judgeGoals } from '../../bench/goals.ts';

type BotMix = NonNullable<GoalInputs['botMix']>;
type Contestant = BotMix['ours'];

const contestant = (wruPerTurn: number, dollarsAtMeasuredMs: number, rruPerTurn = 0): Contestant =>
  ({ wruPerTurn, rruPerTurn, dollarsPerMillionEventsAtMeasuredMs: dollarsAtMeasuredMs }) as Contestant;

/** A contestant's whole stack at docs/cost.md's assumed durations, behind the HTTP API and a function URL. */
const priced = (c: Contestant, httpApi: number, functionUrl: number): Contestant =>
  ({
    ...c,
    dollarsPerMillionEvents: httpApi,
    functionUrl: { dollarsPerMillionEvents: functionUrl },
  }) as Contestant;

const botMix = (changes: Partial<BotMix> = {}): BotMix => ({
  turns: 300,
  ours: priced(contestant(5.383, 3.71), 3.75, 2.48),
  oursNoUnhandledClaims: contestant(2.083, 3.13),
  powertools: priced(contestant(8.413, 4.14), 4.14, 2.87),
  powertoolsPerMessage: contestant(2.12, 3.08),
  floorWruPerTurn: 5.383,
  floorWruPerTurnNoUnhandledClaims: 2.083,
  roundsOffFloor: 0,
  ...changes,
});

const consumer = (ours: number, powertools: number): NonNullable<GoalInputs['consumer']> =>
  ({ ours: { requestsPerEvent: ours }, powertools: { requestsPerEvent: powertools } }) as NonNullable<
    GoalInputs['consumer']
  >;

const receiver = (
  msPerDelivery: number,
  floorMs: number,
  ratio: number,
): NonNullable<GoalInputs['receiver']> =>
  ({ bodies: [{ updates: 1000, msPerDelivery, floorMs, ratio }] }) as NonNullable<GoalInputs['receiver']>;

type Conversations = NonNullable<GoalInputs['conversations']>;

const conversations = (order: Partial<Conversations['order']> = {}): Conversations => ({
  order: { inversions: 0, judged: 200, pairs: 200, ...order },
});

/** Medians as the overhead part stores them (0.001 ms). */
const consumerOverhead = (
  toHandlerMs: number,
  barePutMs: number,
): NonNullable<GoalInputs['consumerOverhead']> => ({
  toHandler: { medianMs: toHandlerMs },
  barePut: { medianMs: barePutMs },
});

const stormIsolation = (
  withCampaignP99Ms: number,
  withoutCampaignP99Ms: number,
  messages = 200,
): NonNullable<GoalInputs['stormIsolation']> => ({
  withCampaign: { messages, messageP99Ms: withCampaignP99Ms },
  withoutCampaign: { messages, messageP99Ms: withoutCampaignP99Ms },
});

/**
 * Bodies of 1, 100, 1000 updates whose acknowledgement after the modelled round trip took these paired medians
 * (the median of the per-pair ratios is on/off), with a CPU per delivery of `cpuRatio` times off's.
 */
const archive = (
  ...pairs: [offMs: number, onMs: number, cpuRatio?: number][]
): NonNullable<GoalInputs['archive']> => ({
  bodies: pairs.map(([offMs, onMs, cpuRatio = 1.2], index) => ({
    updates: [1, 100, 1000][index] ?? 1,
    modelled: { pairedRatio: onMs / offMs },
    cpuPerDelivery: { pairedRatio: cpuRatio },
  })),
});

const met: GoalInputs = {
  consumer: consumer(1.6, 1.81),
  botMix: botMix(),
  receiver: receiver(16.4396, 5.7494, 2.86),
  archive: archive([1.0, 1.03], [1.6, 1.65], [11, 11.5]),
  consumerOverhead: consumerOverhead(6.2, 5.7),
  stormIsolation: stormIsolation(62, 48),
  conversations: conversations(),
};

describe('goals', () => {
  it('are all met on results that meet them, each with the figure judged', () => {
    expect(goals(met)).toEqual(Object.fromEntries(GOALS.map((goal) => [goal.name, true])));
    const verdicts = judgeGoals(met);
    expect(verdicts.receiverRatioAtMost3At1000Updates?.measured).toBeCloseTo(16.4396 / 5.7494, 9);
    expect(verdicts.botMixDynamoDbAtMost0_7xPowertools?.measured).toBeCloseTo(5.383 / 8.413, 9);
    expect(verdicts.botMixDynamoDbAtFloor?.measured).toBeCloseTo(0, 9);
  });

  it('are unmeasured (null) for the parts a run left out', () => {
    expect(goals({})).toEqual(Object.fromEntries(GOALS.map((goal) => [goal.name, null])));
    expect(goals({ receiver: met.receiver })).toMatchObject({
      receiverRatioAtMost3At1000Updates: true,
      consumerFewerRequestsPerEvent: null,
      botMixDynamoDbAtFloor: null,
    });
  });

  it('miss the consumer goal at equal requests per record', () => {
    expect(goals({ consumer: consumer(1.81, 1.81) }).consumerFewerRequestsPerEvent).toBe(false);
    expect(goals({ consumer: consumer(1.9, 1.81) }).consumerFewerRequestsPerEvent).toBe(false);
  });

  it('judge the receiver on its milliseconds, not on the ratio rounded to ×3.00', () => {
    // 17.25 / 5.75 = 3.0 exactly: met; 17.27 / 5.75 = 3.0035, stored as ratio 3.00: not met.
    expect(goals({ receiver: receiver(17.25, 5.75, 3) }).receiverRatioAtMost3At1000Updates).toBe(true);
    expect(goals({ receiver: receiver(17.27, 5.75, 3) }).receiverRatioAtMost3At1000Updates).toBe(false);
  });

  it('judge the archive acknowledgement on its slowest body size, met at 5 % and missed just above', () => {
    expect(judgeGoals({ archive: archive([1.0, 1.02], [10, 10.5]) }).receiverArchiveWithin5Percent).toEqual({
      measured: 1.05,
      met: true,
      note: 'CPU per delivery ×1.200',
    });
    const missed = judgeGoals({ archive: archive([1.0, 1.0], [10, 10.51], [11, 11]) });
    expect(missed.receiverArchiveWithin5Percent?.met).toBe(false);
    expect(missed.receiverArchiveWithin5Percent?.measured).toBeCloseTo(1.051, 9);
    expect(goals({ archive: { bodies: [] } }).receiverArchiveWithin5Percent).toBeNull();
    expect(goals({}).receiverArchiveWithin5Percent).toBeNull();
  });

  it('judge the archive on its CPU per delivery too: within 25 % on every body size, in the same run', () => {
    const atThreshold = judgeGoals({ archive: archive([10, 10.2, 1.1], [10, 10.1, 1.25]) });
    expect(atThreshold.receiverArchiveWithin5Percent).toEqual({
      measured: 1.02,
      met: true,
      note: 'CPU per delivery ×1.250',
    });
    // The acknowledgement within 5 % does not make up for a CPU per delivery above 25 %, on any body size.
    const cpuHeavy = judgeGoals({ archive: archive([10, 10.2, 1.1], [10, 10.1, 1.250001]) });
    expect(cpuHeavy.receiverArchiveWithin5Percent?.met).toBe(false);
    expect(cpuHeavy.receiverArchiveWithin5Percent?.measured).toBeCloseTo(1.02, 9);
  });

  it('leave the archive goal unmeasured without both sides for every body size', () => {
    const [first, second] = archive([10, 10.2], [10, 10.1]).bodies;
    const noCpu = { bodies: [first, { updates: 100, modelled: second?.modelled }] };
    expect(goals({ archive: noCpu } as GoalInputs).receiverArchiveWithin5Percent).toBeNull();
    // Results of runs before the CPU was measured, judged over a connection: no verdict, not a wrong one.
    const networkOnly = { bodies: [{ updates: 1, network: { pairedRatio: 1.01 } }] };
    expect(goals({ archive: networkOnly } as GoalInputs).receiverArchiveWithin5Percent).toBeNull();
  });

  it('leave the receiver goal unmeasured without a 1000-update body', () => {
    const small = { bodies: [{ updates: 100, msPerDelivery: 1, floorMs: 1, ratio: 1 }] } as NonNullable<
      GoalInputs['receiver']
    >;
    expect(goals({ receiver: small }).receiverRatioAtMost3At1000Updates).toBeNull();
  });

  it('miss the floor goal one unit off in the median round, or with a round off the floor, or a read', () => {
    const oneUnit = 5.383 + 1 / 300;
    expect(goals({ botMix: botMix({ ours: contestant(oneUnit, 3.71) }) }).botMixDynamoDbAtFloor).toBe(false);
    expect(goals({ botMix: botMix({ roundsOffFloor: 1 }) }).botMixDynamoDbAtFloor).toBe(false);
    expect(goals({ botMix: botMix({ ours: contestant(5.383, 3.71, 0.01) }) }).botMixDynamoDbAtFloor).toBe(
      false,
    );
    // Results written before rounds were counted are judged on the median round.
    expect(goals({ botMix: botMix({ roundsOffFloor: undefined }) }).botMixDynamoDbAtFloor).toBe(true);
  });

  it("miss the DynamoDB goals above 0.7 of the recipe's cost and above the per-message wrapping's", () => {
    const heavy = botMix({
      ours: contestant(0.71 * 8.413, 3.71),
      oursNoUnhandledClaims: contestant(2.2, 3.13),
    });
    const verdicts = goals({ botMix: heavy });
    expect(verdicts.botMixDynamoDbAtMost0_7xPowertools).toBe(false);
    expect(verdicts.botMixLikeForLikeAtMostPowertoolsPerMessage).toBe(false);
    const justBelow = botMix({ ours: contestant(6.99, 3.71), powertools: contestant(10, 4.14) });
    expect(goals({ botMix: justBelow }).botMixDynamoDbAtMost0_7xPowertools).toBe(true);
  });

  it('price the whole-stack goal at each contestant’s measured milliseconds', () => {
    const slower = botMix({ ours: contestant(5.383, 4.14) });
    expect(goals({ botMix: slower }).botMixWholeStackBelowPowertoolsAtMeasuredMs).toBe(false);
    expect(
      judgeGoals({ botMix: botMix() }).botMixWholeStackBelowPowertoolsAtMeasuredMs?.measured,
    ).toBeCloseTo(3.71 / 4.14, 9);
  });

  it("price ours behind a function URL against Powertools' recipe behind its HTTP API, at most 0.65", () => {
    const name = 'botMixWholeStackFunctionUrlAtMost0_65xPowertools';
    // Powertools' own function-URL figure is not what the goal reads: its recipe keeps its HTTP API.
    expect(judgeGoals({ botMix: botMix() })[name]?.measured).toBeCloseTo(2.48 / 4.14, 9);
    const atThreshold = botMix({ ours: priced(contestant(5.383, 3.71), 3.75, 0.65 * 4.14) });
    expect(goals({ botMix: atThreshold })[name]).toBe(true);
    const above = botMix({ ours: priced(contestant(5.383, 3.71), 3.75, 2.7) });
    expect(judgeGoals({ botMix: above })[name]).toMatchObject({ met: false });
    // Results written before the function URL was priced leave the goal unmeasured.
    expect(goals({ botMix: botMix({ ours: contestant(5.383, 3.71) }) })[name]).toBeNull();
  });

  it("judge the consumer's overhead on the two medians, met at one claim round trip plus 1 ms", () => {
    const name = 'consumerHandlerStartWithinClaimPlus1Ms';
    expect(judgeGoals(met)[name]?.measured).toBeCloseTo(0.5, 9);
    // 6.7 − 5.7 is a hair above 1 in floating point; stored at 0.001 ms, it is 1 ms exactly: met.
    expect(judgeGoals({ consumerOverhead: consumerOverhead(6.7, 5.7) })[name]).toEqual({
      measured: 1,
      met: true,
    });
    // The figures of the issue: 8.2 ms against 5.7 ms.
    expect(judgeGoals({ consumerOverhead: consumerOverhead(8.2, 5.7) })[name]).toMatchObject({ met: false });
    expect(goals({ consumerOverhead: consumerOverhead(6.701, 5.7) })[name]).toBe(false);
    expect(goals({})[name]).toBeNull();
  });

  it("judge storm isolation on the message lane's p99 with the campaign against without, at most twice", () => {
    const name = 'campaignMessageLaneP99AtMost2xWithout';
    expect(judgeGoals(met)[name]?.measured).toBeCloseTo(62 / 48, 9);
    expect(goals({ stormIsolation: stormIsolation(96, 48) })[name]).toBe(true);
    expect(judgeGoals({ stormIsolation: stormIsolation(97, 48) })[name]).toMatchObject({ met: false });
    // A status backlog the message lane queued behind: seconds against tens of milliseconds.
    expect(goals({ stormIsolation: stormIsolation(1039, 48) })[name]).toBe(false);
    // No message handled without the campaign: nothing to compare with.
    expect(goals({ stormIsolation: stormIsolation(62, 0, 0) })[name]).toBeNull();
  });

  it('miss the order goal on one inversion, or when a pair went unjudged', () => {
    expect(judgeGoals(met).conversationsNoInversions).toEqual({ measured: 0, met: true });
    const inverted = conversations({ inversions: 1 });
    expect(goals({ conversations: inverted }).conversationsNoInversions).toBe(false);
    const unjudged = conversations({ judged: 199 });
    expect(judgeGoals({ conversations: unjudged }).conversationsNoInversions).toEqual({
      measured: 0,
      met: false,
      note: '1 of 200 pairs not judged',
    });
  });

  it('no longer include the retired goals', () => {
    const names = GOALS.map((goal) => goal.name);
    expect(names).not.toContain('drainWithin5PercentOfFloor');
    expect(names).not.toContain('botMixWholeStackBelowTodaysFigure');
    expect(names).not.toContain('conversationsReplyAtMost1_5xFloor');
    expect(names).not.toContain('conversationsStormAtMost2xLone');
    expect(new Set(names).size).toBe(names.length);
  });
});
