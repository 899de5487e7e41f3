/**
 * The bot mix holds what docs/benchmarks.md says it holds, its floor is design.md §2's arithmetic, and its
 * summary turns runs into per-turn units and goals as documented. (No timing: a benchmark is never a timed test.)
 */
import { describe, expect, it } from 'vitest';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import { summarizeBotMix } from '../../bench/bot-mix-results.ts';
import type { BotMixOutput } from '../../bench/consumer/bot-mix-worker.ts';
import {
  type BotEvent,
  buildBotMixWorkload,
  buildEventClassWorkloads,
  floorWriteUnits,
} from '../../bench/consumer/bot-mix-workload.ts';
import type { ConsumerRun } from '../../bench/consumer/run-once.ts';
import { goals } from '../../bench/goals.ts';

function keysOf(body: string): string[] {
  const extraction = extractEvents(body);
  if (!extraction.ok) throw new Error('unusable body');
  return extraction.events.map((event) => event.key);
}

describe('buildBotMixWorkload', () => {
  const workload = buildBotMixWorkload({ turns: 500 });

  it('holds per turn one message and the sent, delivered, read statuses of one reply', () => {
    const keys = workload.eventsOf.flat().map((event) => event.key);
    const distinct = new Set(keys);
    expect(distinct.size).toBe(2000);
    expect(workload.events).toBe(2000);
    expect([...distinct].filter((key) => key.startsWith('msg:'))).toHaveLength(500);
    for (const status of ['sent', 'delivered', 'read']) {
      expect([...distinct].filter((key) => key.startsWith('st:') && key.endsWith(`:${status}`))).toHaveLength(
        500,
      );
    }
    expect(workload.distinctWamids.size).toBe(500);
  });

  it('labels every record with the keys the extractor finds in its body', () => {
    workload.records.forEach((record, i) => {
      expect(keysOf(record.body)).toEqual(workload.eventsOf[i]?.map((event) => event.key));
    });
  });

  it('retries 10% of the deliveries, a third of them re-batched into new bodies of retried events only', () => {
    const { sameBytes, rebatchedBodies, rebatchedEvents } = workload.retries;
    expect(sameBytes + rebatchedEvents).toBe(200);
    expect(rebatchedEvents).toBe(67);
    expect(workload.records).toHaveLength(2000 + sameBytes + rebatchedBodies);
    const seen = new Set<string>();
    const firstBody = new Map<string, string>();
    let multiEventBodies = 0;
    let sameBytesSeen = 0;
    workload.records.forEach((record, i) => {
      const events = workload.eventsOf[i] as readonly BotEvent[];
      if (events.length > 1) {
        multiEventBodies++;
        // Every event of a re-batched body came before, in another body.
        for (const event of events) expect(seen.has(event.key)).toBe(true);
        expect(events.length).toBeLessThanOrEqual(3);
      } else {
        const key = (events[0] as BotEvent).key;
        if (seen.has(key)) {
          expect(record.body).toBe(firstBody.get(key));
          sameBytesSeen++;
        } else firstBody.set(key, record.body);
      }
      for (const event of events) seen.add(event.key);
    });
    expect(multiEventBodies).toBe(rebatchedBodies);
    expect(sameBytesSeen).toBe(sameBytes);
  });

  it('is the same for the same seed', () => {
    const again = buildBotMixWorkload({ turns: 500 });
    expect(again.records.map((record) => record.body)).toEqual(workload.records.map((record) => record.body));
  });
});

describe('floorWriteUnits', () => {
  const message = (id: string): BotEvent => ({ kind: 'message', key: `msg:${id}`, value: {} });
  const status = (id: string): BotEvent => ({ kind: 'status', key: `st:${id}:read`, value: {} });

  it('charges 2 per fresh handled event, 1 per fresh unhandled one, 1 per later batch, 0 within a batch', () => {
    const eventsOf = [
      [message('a')],
      [message('a')], // same batch: free
      [status('s')],
      [message('b'), status('s')], // a re-batched body: s again in the same batch, free
      [message('a')], // next batch: a refused claim
      [status('s')], // next batch: a refused claim
    ];
    expect(floorWriteUnits({ eventsOf, batchSize: 4 }, { claimUnhandledEvents: true })).toBe(
      2 + 1 + 2 + 1 + 1,
    );
    expect(floorWriteUnits({ eventsOf, batchSize: 4 }, { claimUnhandledEvents: false })).toBe(2 + 2 + 1);
  });
});

describe('buildEventClassWorkloads', () => {
  it('builds one class per workload, the retries repeating bodies already drained', () => {
    const classes = buildEventClassWorkloads(20, 10);
    expect(classes.message.records.every((record) => keysOf(record.body)[0]?.startsWith('msg:'))).toBe(true);
    expect(classes.status.records.every((record) => keysOf(record.body)[0]?.startsWith('st:'))).toBe(true);
    const primed = new Set(classes.retry.prime?.map((record) => record.body));
    expect(classes.retry.records.every((record) => primed.has(record.body))).toBe(true);
    expect(classes.retryInBatch.records).toHaveLength(40);
    const pairs = classes.retryInBatch.records.map((record) => record.body);
    for (let i = 0; i < pairs.length; i += 2) expect(pairs[i]).toBe(pairs[i + 1]);
  });
});

describe('summarizeBotMix', () => {
  const run = (contestant: string, wru: number, rru = 0): ConsumerRun => ({
    contestant,
    wallMs: 1000,
    eventsPerSec: 1000,
    requests: wru + rru,
    requestsByOperation: {},
    requestsPerEvent: 1,
    meanRequestMsByOperation: {},
    wru,
    rru,
    failedConditionWru: 0,
    effects: 100,
    missingEffects: 0,
    repeatedEffects: 0,
    nodeCpuMs: 100,
    invocations: 40,
    medianInvocationMs: 20,
    p90InvocationMs: 30,
    billedMs: 800,
    logBytes: 80_000,
    failedInvocations: 0,
    redeliveries: 0,
    redeliveredIds: [],
  });
  const classRuns = Object.fromEntries(
    ['ours', 'powertools', 'powertoolsPerMessage', 'oursNoUnhandledClaims'].map((name) => [
      name,
      Object.fromEntries(['message', 'status', 'retry', 'retryInBatch'].map((c) => [c, run(name, 100)])),
    ]),
  ) as unknown as BotMixOutput['classRuns'];
  const output = (oursWru: number, oursReturned = 0): BotMixOutput => ({
    turns: 100,
    events: 400,
    deliveries: 440,
    retries: { sameBytes: 27, rebatchedBodies: 6, rebatchedEvents: 13 },
    distinctWamids: 100,
    floorWru: 540,
    floorWruNoUnhandledClaims: 215,
    runs: [
      run('ours', oursWru),
      run('powertools', 880),
      run('powertoolsPerMessage', 220),
      run('oursNoUnhandledClaims', 215),
    ],
    returnedWru: [oursReturned, 0, 0, 0],
    classRuns,
    classEvents: 100,
    debugRun: { ...run('ours', oursWru), logBytes: 200_000 },
  });

  it('stores the log volume at both levels and prices the receiver at the INFO bytes it measured', () => {
    const receiver = { info: 500, debug: 900 };
    const measured = summarizeBotMix(output(540), receiver);
    expect(measured.logVolume).toEqual({
      receiverBytesPerDelivery: receiver,
      consumerBytesPerInvocation: { info: 80_000 / 40, debug: 200_000 / 40 },
    });
    const assumed = summarizeBotMix(output(540));
    expect(assumed.logVolume).toBeUndefined();
    // 440 deliveries per 400 events at 500 bytes instead of the assumed 750: 1.1 M × 0.25 KB at $0.50 per GB.
    expect(assumed.ours.dollarsByComponent.logs - measured.ours.dollarsByComponent.logs).toBeCloseTo(
      (1.1e6 * 0.25 * 0.5) / 1e6,
      2,
    );
  });

  it('prices each contestant behind a function URL without the HTTP API and its access log', () => {
    const { ours } = summarizeBotMix(output(540));
    const functionUrl = ours.functionUrl;
    expect(functionUrl?.dollarsByComponent.apiGateway).toBe(0);
    expect(functionUrl?.dollarsByComponent.receiver).toBe(ours.dollarsByComponent.receiver);
    // 1.1 deliveries per event: $1.00 per million requests, and 0.35 KB of access log each at $0.50 per GB.
    expect(ours.dollarsPerMillionEvents - (functionUrl?.dollarsPerMillionEvents ?? 0)).toBeCloseTo(
      1.1 * 1 + (1.1e6 * 0.35 * 0.5) / 1e6,
      1,
    );
  });

  it('reports units per turn and the goals against both Powertools configurations', () => {
    const summary = summarizeBotMix(output(540));
    expect(summary.ours.wruPerTurn).toBe(5.4);
    expect(summary.floorWruPerTurn).toBe(5.4);
    expect(summary.dynamoDbCostRatio).toBeCloseTo(540 / 880, 3);
    expect(summary.dynamoDbCostRatioLikeForLike).toBeCloseTo(215 / 220, 2);
    expect(summary.roundsOffFloor).toBe(0);
    expect(goals({ botMix: summary })).toMatchObject({
      botMixDynamoDbAtFloor: true,
      botMixDynamoDbAtMost0_7xPowertools: true,
      botMixLikeForLikeAtMostPowertoolsPerMessage: true,
    });
    // The same batches, deliveries and durations: only DynamoDB differs between the two.
    expect(summary.powertools.dollarsPerMillionEvents - summary.ours.dollarsPerMillionEvents).toBeCloseTo(
      ((880 - 540) / 400) * 0.625,
      2,
    );
  });

  it('holds each round to the floor plus its own returns: a copy that met its twin in flight claims again', () => {
    const returned = summarizeBotMix(output(548, 8));
    expect(returned.roundsOffFloor).toBe(0);
    expect(returned.returnedWruPerTurn).toBe(0.08);
    expect(goals({ botMix: returned }).botMixDynamoDbAtFloor).toBe(true);
    // The same units without returns to account for them: one unit per refused claim above the floor.
    const unexplained = summarizeBotMix(output(548, 0));
    expect(unexplained.roundsOffFloor).toBe(1);
    expect(goals({ botMix: unexplained }).botMixDynamoDbAtFloor).toBe(false);
  });

  it('misses the like-for-like goal when ours without unhandled claims writes more than Powertools per message', () => {
    const heavier = output(540);
    const summary = summarizeBotMix({
      ...heavier,
      runs: heavier.runs.map((r) => (r.contestant === 'oursNoUnhandledClaims' ? { ...r, wru: 230 } : r)),
    });
    expect(summary.dynamoDbCostRatioLikeForLike).toBeGreaterThan(1);
    expect(goals({ botMix: summary }).botMixLikeForLikeAtMostPowertoolsPerMessage).toBe(false);
  });

  it('misses the floor goal when ours writes one unit more than the floor', () => {
    const summary = summarizeBotMix(output(541));
    expect(summary.roundsOffFloor).toBe(1);
    expect(goals({ botMix: summary }).botMixDynamoDbAtFloor).toBe(false);
  });

  it('counts a round off the floor even when the median round is at it', () => {
    const base = output(540);
    const summary = summarizeBotMix({
      ...base,
      runs: [...base.runs, run('ours', 540), run('ours', 539)],
    });
    expect(summary.ours.wruPerTurn).toBe(5.4);
    expect(summary.roundsOffFloor).toBe(1);
    expect(goals({ botMix: summary }).botMixDynamoDbAtFloor).toBe(false);
  });
});
