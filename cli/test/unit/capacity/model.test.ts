import { describe, expect, it } from 'vitest';
import {
  type CapacityPipeline,
  type CapacitySubscriber,
  CONSUMER_CPU_MS_PER_RECORD,
  DEFAULT_RECEIVER_MS,
  DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS,
  drainWriteUnits,
  EVENT_SOURCE_SQS_CALL_MS,
  handlerRounds,
  LAMBDA_ACCOUNT_CONCURRENCY,
  LAMBDA_INVOKE_MS,
  LAMBDA_MIN_UNRESERVED_CONCURRENCY,
  LAMBDA_REQUESTS_PER_SECOND_PER_CONCURRENCY,
  MAX_SIZED_UTILISATION,
  P99_WAIT_TARGET_SECONDS,
  POSTS_PER_INBOUND_MESSAGE,
  POSTS_PER_OUTBOUND_MESSAGE,
  peakTraffic,
  planCapacity,
  RECEIVER_BLOCKING_TARGET,
  receiverReservedConcurrencyFor,
  slowestOf,
} from '../../../../contract/capacity.ts';
import { erlangB } from '../../../../contract/erlang-c.ts';
import { resolveSettings } from '../../../../contract/settings.ts';
import { DEFAULT_THROTTLING_BURST_LIMIT, DEFAULT_THROTTLING_RATE_LIMIT } from '../../../../lib/defaults.ts';
import { defaultPipeline } from '../../../capacity/pipeline.ts';
import { ASSUMPTIONS } from '../../../cost/stack-cost.ts';

const CLAIM_MS = 5;

/** One subscriber, both lanes standard queues without a window, maxConcurrency 2, batches of 10. */
function smallPipeline(overrides: Partial<CapacitySubscriber> = {}): CapacityPipeline {
  const settings = resolveSettings({ maxConcurrency: 2, batchSize: 10, maxBatchingWindowSeconds: 0 });
  return {
    throttlingRateLimit: 100,
    throttlingBurstLimit: 200,
    claimWriteMs: CLAIM_MS,
    receiverMs: 40,
    handlerMs: { message: 20, status: 10 },
    subscribers: [
      {
        name: 'only',
        fields: undefined,
        settings,
        messageLane: { ordered: false, settings },
        handles: { message: true, status: false },
        ...overrides,
      },
    ],
  };
}

/** M/M/2 by hand: ρ = a / 2, P(wait) = 2ρ² / (1 + ρ), Wq = P(wait) / (2μ − λ). */
function mm2MeanWait(lambda: number, serviceSeconds: number): number {
  const rho = (lambda * serviceSeconds) / 2;
  const pWait = (2 * rho ** 2) / (1 + rho);
  return pWait / (2 / serviceSeconds - lambda);
}

describe('peak traffic', () => {
  it('counts webhook POSTs as numbers × (3 × outbound + 1 × inbound), one update per POST', () => {
    const traffic = peakTraffic({ messagesPerSecond: 7, inboundPerSecond: 2, numbers: 3 });
    expect(traffic.postsPerSecond).toBe(3 * (POSTS_PER_OUTBOUND_MESSAGE * 7 + POSTS_PER_INBOUND_MESSAGE * 2));
    expect(traffic.statusesPerSecond).toBe(3 * POSTS_PER_OUTBOUND_MESSAGE * 7);
    expect(traffic.inboundPerSecond).toBe(6);
    // Without an inbound rate, a chat answers what it receives.
    expect(peakTraffic({ messagesPerSecond: 7 }).inboundPerSecond).toBe(7);
  });

  it('refuses a rate that is not a number and a count of numbers that is not whole', () => {
    expect(() => peakTraffic({ messagesPerSecond: Number.NaN })).toThrow(/messagesPerSecond/);
    expect(() => peakTraffic({ messagesPerSecond: 1, numbers: 1.5 })).toThrow(/numbers/);
  });
});

/** A handled message's invocation for `n` records by hand: their CPU in turn, claim, slowest handler, completion. */
const messageInvocationMs = (n: number, handlerMs = 20) =>
  n * CONSUMER_CPU_MS_PER_RECORD + 2 * CLAIM_MS + handlerMs * slowestOf(n);
/** A poller's time: receive, invoke, the invocation, delete. */
const pollerMs = (invocationMs: number) => invocationMs + 2 * EVENT_SOURCE_SQS_CALL_MS + LAMBDA_INVOKE_MS;

describe('the slowest of a batch', () => {
  it('is the harmonic number of its records, linear between whole numbers', () => {
    expect(slowestOf(1)).toBe(1);
    expect(slowestOf(2)).toBeCloseTo(1.5, 12);
    expect(slowestOf(10)).toBeCloseTo(7381 / 2520, 12);
    expect(slowestOf(2.5)).toBeCloseTo(1.5 + 0.5 / 3, 12);
  });
});

describe('the lanes', () => {
  it('drains concurrency × batch / a full batch, and waits as M/M/c over full batches', () => {
    const peak = { messagesPerSecond: 10, inboundPerSecond: 40 };
    const plan = planCapacity(peak, smallPipeline());
    const message = plan.lanes.find((lane) => lane.lane === 'message');
    const s = pollerMs(messageInvocationMs(10)) / 1000;
    expect(message?.fullBatchSeconds).toBeCloseTo(s, 12);
    expect(message?.drainPerSecond).toBeCloseTo((2 * 10) / s, 9);
    const batches = 40 / 10;
    expect(message?.utilisation).toBeCloseTo((batches * s) / 2, 12);
    expect(message?.meanWaitSeconds).toBeCloseTo(mm2MeanWait(batches, s), 12);
    expect(message?.backlogEvents).toBeCloseTo(40 * mm2MeanWait(batches, s), 9);
    // A poller takes what arrived during its previous batch, whose length grows with what it took.
    const fill = message?.batchFill as number;
    expect(fill).toBeGreaterThan(1);
    expect(fill).toBeCloseTo((40 * pollerMs(messageInvocationMs(fill))) / 1000 / 2, 6);
    expect(message?.batchSeconds).toBeCloseTo(messageInvocationMs(fill) / 1000, 12);
    // Statuses without onStatus: their CPU and claim only.
    const status = plan.lanes.find((lane) => lane.lane === 'status');
    expect(status?.eventsPerSecond).toBe(30);
    const statusFill = status?.batchFill as number;
    expect(status?.batchSeconds).toBeCloseTo((statusFill * CONSUMER_CPU_MS_PER_RECORD + CLAIM_MS) / 1000, 12);
  });

  it('lasts a batch until its slowest handler is done', () => {
    // The same lane at a rate that fills its batches: ten records take H(10) handler means, not one.
    const plan = planCapacity({ messagesPerSecond: 0, inboundPerSecond: 300 }, smallPipeline());
    const message = plan.lanes.find((lane) => lane.lane === 'message');
    expect(message?.batchFill).toBe(10);
    expect(message?.batchSeconds).toBeCloseTo(messageInvocationMs(10) / 1000, 12);
    expect(message?.batchSeconds).toBeGreaterThan(
      (10 * CONSUMER_CPU_MS_PER_RECORD + 2 * CLAIM_MS + 2.9 * 20) / 1000,
    );
  });

  it("runs no more of a batch's handlers at once than a forward subscriber's maxInFlight leaves an invocation", () => {
    expect(handlerRounds(10)).toBe(slowestOf(10));
    expect(handlerRounds(10, 10)).toBe(slowestOf(10));
    expect(handlerRounds(10, 1)).toBe(10);
    expect(handlerRounds(10, 2)).toBeCloseTo(5 * slowestOf(2), 12);
    // maxConcurrency 2 per lane, shares of 2 (4 over two lanes): one POST per invocation, ten in turn.
    const bounded = planCapacity(
      { messagesPerSecond: 0, inboundPerSecond: 300 },
      smallPipeline({ maxInFlight: 4 }),
    );
    const message = bounded.lanes.find((lane) => lane.lane === 'message');
    expect(message?.batchSeconds).toBeCloseTo(
      (10 * CONSUMER_CPU_MS_PER_RECORD + 2 * CLAIM_MS + 10 * 20) / 1000,
      12,
    );
    // Its concurrency is capped at its share: the p99 limit names maxInFlight as what to raise.
    const limit = bounded.limits.find(({ name }) => name === 'only, message lane: p99 wait');
    expect(limit?.setting).toBe('forward.maxInFlight');
    // A share above the concurrency leaves it named as before.
    const wide = planCapacity(
      { messagesPerSecond: 0, inboundPerSecond: 300 },
      smallPipeline({ maxInFlight: 100 }),
    );
    expect(wide.limits.find(({ name }) => name === 'only, message lane: p99 wait')?.setting).toBe(
      'messageLane.settings.maxConcurrency',
    );
  });

  it('bounds a FIFO lane by its active conversations', () => {
    const settings = resolveSettings({ maxConcurrency: 8, batchSize: 10, maxBatchingWindowSeconds: 0 });
    const pipeline = smallPipeline({ messageLane: { ordered: true, settings } });
    const lane = planCapacity({ messagesPerSecond: 1, activeConversations: 3 }, pipeline).lanes[0];
    expect(lane?.usableConcurrency).toBe(3);
    expect(lane?.drainPerSecond).toBeCloseTo((3 * 10) / (pollerMs(messageInvocationMs(10)) / 1000), 9);
  });

  it('reports a lane that cannot keep up by how fast its backlog grows', () => {
    const plan = planCapacity({ messagesPerSecond: 0, inboundPerSecond: 1000 }, smallPipeline());
    const message = plan.lanes.find((lane) => lane.lane === 'message');
    const fullMs = pollerMs(messageInvocationMs(10));
    const drain = (2 * 10) / (fullMs / 1000);
    expect(message?.meanWaitSeconds).toBeUndefined();
    expect(message?.backlogGrowthPerSecond).toBeCloseTo(1000 - drain, 9);
    expect(plan.problems).toContain(
      `subscriber only, message lane: drain ${Math.round(drain)} events/s < 1000 events/s (2 concurrent × batch 10 / ${Number(fullMs.toFixed(1))} ms, window 0 s): raise messageLane.settings.maxConcurrency`,
    );
  });
});

describe('the claim table', () => {
  it('writes 2 per handled message, 1 per status without a handler, 3 with onStatus (its ledger write)', () => {
    const peak = { messagesPerSecond: 10, inboundPerSecond: 4 };
    expect(planCapacity(peak, smallPipeline()).claimWriteUnitsPerSecond).toBe(2 * 4 + 1 * 30);
    const withStatus = smallPipeline({ handles: { message: true, status: true } });
    expect(planCapacity(peak, withStatus).claimWriteUnitsPerSecond).toBe(2 * 4 + 3 * 30);
    const unclaimed = smallPipeline({ claimUnhandledEvents: false });
    expect(planCapacity(peak, unclaimed).claimWriteUnitsPerSecond).toBe(2 * 4);
  });

  it('sizes the warm throughput for what the sized lanes write at their drain rate, above the mean', () => {
    const plan = planCapacity({ messagesPerSecond: 10, inboundPerSecond: 4 }, smallPipeline());
    // A lane catching up on a backlog writes at c full batches per batch time: 2 per message, 1 per status.
    const drain = (lane: 'message' | 'status', writes: number) => {
      const planned = plan.lanes.find((entry) => entry.lane === lane);
      const c = Math.max(planned?.usableConcurrency ?? 0, planned?.neededConcurrency ?? 0);
      return ((c * 10) / (planned?.fullBatchSeconds as number)) * writes;
    };
    expect(plan.sizing.warmWriteUnitsPerSecond).toBe(Math.ceil(drain('message', 2) + drain('status', 1)));
    expect(plan.sizing.warmWriteUnitsPerSecond).toBeGreaterThan(plan.claimWriteUnitsPerSecond);
  });

  it("names the warm throughput when the writes exceed a new table's", () => {
    const peak = { messagesPerSecond: 0, inboundPerSecond: DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS };
    const settings = resolveSettings({ maxConcurrency: 100, batchSize: 10, maxBatchingWindowSeconds: 0 });
    const plan = planCapacity(peak, {
      ...smallPipeline({ messageLane: { ordered: false, settings } }),
      warmWriteUnits: DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS,
    });
    const drained = Math.ceil(plan.lanes.reduce((sum, lane) => sum + drainWriteUnits(lane), 0));
    expect(drained).toBeGreaterThan(2 * peak.inboundPerSecond);
    expect(plan.problems).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^claim table warm throughput .* ${DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS} < ${drained} WU/s`,
        ),
      ),
    );
  });
});

describe('the limits', () => {
  it('come in the order a webhook meets them, from the route throttle to the account quotas', () => {
    const names = planCapacity({ messagesPerSecond: 1 }, smallPipeline()).limits.map((limit) => limit.name);
    expect(names.slice(0, 3)).toEqual([
      'HTTP API route throttle, rate',
      'HTTP API route throttle, burst',
      'Receiver concurrency',
    ]);
    expect(names.at(-1)).toBe('API Gateway, account');
    expect(names.indexOf('Claim table, warm write throughput')).toBeGreaterThan(
      names.indexOf('only, status lane: drain rate'),
    );
  });

  it("name the default throttle with the figure that fails at two numbers' top tier", () => {
    const plan = planCapacity({ messagesPerSecond: 1000, numbers: 2 }, defaultPipeline());
    const posts = 2 * (POSTS_PER_OUTBOUND_MESSAGE * 1000 + POSTS_PER_INBOUND_MESSAGE * 1000);
    expect(plan.problems).toContain(
      `throttlingRateLimit ${DEFAULT_THROTTLING_RATE_LIMIT} < ${posts} POSTs/s`,
    );
    expect(plan.problems).toContainEqual(
      expect.stringContaining(`throttlingBurstLimit ${DEFAULT_THROTTLING_BURST_LIMIT} < ${posts} requests`),
    );
  });

  it('count the receiver as POSTs/s × its duration and ask for the Lambda quota beyond the account limit', () => {
    const pipeline = { ...smallPipeline(), throttlingRateLimit: 1e6, throttlingBurstLimit: 1e6 };
    const plan = planCapacity({ messagesPerSecond: 10_000, inboundPerSecond: 0 }, pipeline);
    expect(plan.receiverConcurrency).toBe(Math.ceil((30_000 * 40) / 1000));
    expect(plan.problems).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^Lambda concurrent executions ${LAMBDA_ACCOUNT_CONCURRENCY} < \\d+ executions .*: raise the quota$`,
        ),
      ),
    );
  });

  it('carry a small peak on the defaults, and say so with no problem', () => {
    expect(planCapacity({ messagesPerSecond: 1 }, defaultPipeline()).problems).toEqual([]);
  });

  it("assume the receiver's duration that docs/cost.md assumes", () => {
    expect(DEFAULT_RECEIVER_MS).toBe(ASSUMPTIONS.receiverMs);
  });
});

describe('the function URL door', () => {
  const functionUrl = (reserved?: number): CapacityPipeline => ({
    ...smallPipeline(),
    endpoint: 'function-url',
    ...(reserved === undefined ? {} : { receiverReservedConcurrency: reserved }),
  });

  it("replaces the route throttle by the receiver's reservation and the API Gateway quota by the unreserved floor", () => {
    const names = planCapacity({ messagesPerSecond: 1 }, functionUrl()).limits.map((limit) => limit.name);
    expect(names.slice(0, 2)).toEqual([
      'Function URL throttle: receiver reserved concurrency',
      'Lambda reserved concurrency, account',
    ]);
    expect(names.at(-1)).toBe('Lambda concurrency, account');
    expect(names.filter((name) => /HTTP API|API Gateway|Receiver concurrency/.test(name))).toEqual([]);
  });

  it('sizes the reservation for the rate limit with a fifth spare, and for at most 0.1 % turned away', () => {
    // Large: Lambda's 10 requests/s per execution binds (the mean concurrency is far below it).
    const busy = 4000;
    expect(receiverReservedConcurrencyFor(busy, 40)).toBe(
      Math.ceil(busy / (LAMBDA_REQUESTS_PER_SECOND_PER_CONCURRENCY * MAX_SIZED_UTILISATION)),
    );
    // Slow receiver: the executions busy at once bind, beyond their mean by what Erlang B asks.
    const slow = receiverReservedConcurrencyFor(100, 500);
    expect(slow).toBeGreaterThan(100 * 0.5);
    expect(erlangB(slow, 100 * 0.5)).toBeLessThanOrEqual(RECEIVER_BLOCKING_TARGET);
    expect(erlangB(slow - 1, 100 * 0.5)).toBeGreaterThan(RECEIVER_BLOCKING_TARGET);
    // Quiet: never 0.
    expect(receiverReservedConcurrencyFor(0, 40)).toBe(1);
  });

  it('names a reservation short of the peak, and the account quota and unreserved floor it outgrows', () => {
    const peak = { messagesPerSecond: 1000, inboundPerSecond: 0 };
    const needed = receiverReservedConcurrencyFor(peakTraffic(peak).postsPerSecond, 40);
    expect(planCapacity(peak, functionUrl(10)).problems).toContainEqual(
      expect.stringMatching(new RegExp(`^receiverReservedConcurrency 10 < ${needed} executions \\(`)),
    );
    const greedy = planCapacity(peak, functionUrl(950));
    expect(greedy.problems).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^Lambda concurrent executions ${LAMBDA_ACCOUNT_CONCURRENCY - LAMBDA_MIN_UNRESERVED_CONCURRENCY} < 950 executions .*: raise the quota$`,
        ),
      ),
    );
    // The reservation counts against the account whether the receiver runs or not.
    expect(greedy.sizing.lambdaConcurrency).toBeGreaterThanOrEqual(950);
  });

  it('sizes the reservation the construct deploys behind a function URL, and carries the default peak', () => {
    const pipeline = defaultPipeline(1, 'function-url');
    const plan = planCapacity({ messagesPerSecond: 1000 }, pipeline);
    expect(pipeline.receiverReservedConcurrency).toBe(plan.sizing.receiverReservedConcurrency);
    expect(plan.problems).toEqual([]);
    expect(defaultPipeline().receiverReservedConcurrency).toBeUndefined();
  });
});

describe('the sizing', () => {
  it.each([{ messagesPerSecond: 80 }, { messagesPerSecond: 1000 }, { messagesPerSecond: 1000, numbers: 3 }])(
    'carries its own peak once applied to the defaults (%j)',
    (peak) => {
      const defaults = defaultPipeline();
      const { sizing } = planCapacity(peak, defaults);
      const concurrency = (lane: string) =>
        sizing.maxConcurrency.find((entry) => entry.lane === lane)?.value as number;
      const sized: CapacityPipeline = {
        ...defaults,
        throttlingRateLimit: sizing.throttlingRateLimit,
        throttlingBurstLimit: sizing.throttlingBurstLimit,
        warmWriteUnits: sizing.warmWriteUnitsPerSecond,
        subscribers: defaults.subscribers.map((subscriber) => ({
          ...subscriber,
          settings: { ...subscriber.settings, maxConcurrency: concurrency('status') },
          messageLane:
            subscriber.messageLane === undefined
              ? undefined
              : {
                  ...subscriber.messageLane,
                  settings: { ...subscriber.messageLane.settings, maxConcurrency: concurrency('message') },
                },
        })),
      };
      const quotas = planCapacity(peak, sized).limits.filter((limit) => limit.kind === 'quota');
      expect(
        planCapacity(peak, sized).problems.filter(
          (problem) => !quotas.some((quota) => problem.startsWith(quota.setting)),
        ),
      ).toEqual([]);
      // One less concurrency on the message lane fails its p99 (when above Lambda's minimum of 2).
      if (concurrency('message') > 2) {
        const short = sized.subscribers.map((subscriber) => ({
          ...subscriber,
          messageLane: subscriber.messageLane && {
            ...subscriber.messageLane,
            settings: { ...subscriber.messageLane.settings, maxConcurrency: concurrency('message') - 1 },
          },
        }));
        expect(planCapacity(peak, { ...sized, subscribers: short }).problems).toContainEqual(
          expect.stringContaining('message lane: messageLane.settings.maxConcurrency'),
        );
      }
    },
  );

  it('keeps a fifth of each lane spare even where the p99 target would allow more load', () => {
    const peak = { messagesPerSecond: 1000 };
    const defaults = defaultPipeline();
    const withStatusConcurrency = (c: number): CapacityPipeline => ({
      ...defaults,
      subscribers: defaults.subscribers.map((subscriber) => ({
        ...subscriber,
        settings: { ...subscriber.settings, maxConcurrency: c },
      })),
    });
    const sized = planCapacity(peak, defaults).sizing.maxConcurrency.find((entry) => entry.lane === 'status')
      ?.value as number;
    const statusAt = (c: number) =>
      planCapacity(peak, withStatusConcurrency(c)).lanes.find((lane) => lane.lane === 'status');
    expect(statusAt(sized)?.utilisation).toBeLessThanOrEqual(MAX_SIZED_UTILISATION);
    // One less would still meet the status lane's 60 s p99 in the M/M/c steady state, but above the ceiling.
    const below = statusAt(sized - 1);
    expect(below?.p99WaitSeconds).toBeLessThanOrEqual(P99_WAIT_TARGET_SECONDS.status);
    expect(below?.utilisation).toBeGreaterThan(MAX_SIZED_UTILISATION);
  });
});
