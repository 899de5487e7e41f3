import { describe, expect, it } from 'vitest';
import { PRICES } from '../../../cli/cost/prices.ts';
import { ASSUMPTIONS } from '../../../cli/cost/stack-cost.ts';
import { DEFAULT_CONSUMER_MEMORY_MB } from '../../../lib/defaults.ts';
import {
  FORWARD_ANSWER_MS,
  FORWARD_ASSUMPTIONS,
  forwardCostPerMillion,
} from '../../bench/cost/forward-cost.ts';
import { forwardingRegion } from '../../bench/markdown/cost-page.ts';

describe('forwardCostPerMillion', () => {
  it('bills the consumer one destination answer per batch: a slower destination costs Lambda time only', () => {
    const fast = forwardCostPerMillion(50, 'busy');
    const slow = forwardCostPerMillion(1_050, 'busy');
    const invocations = 1e6 / ASSUMPTIONS.busy.batchSize;
    const gbSeconds = invocations * (DEFAULT_CONSUMER_MEMORY_MB / 1024) * 1;
    expect(slow.lambda - fast.lambda).toBeCloseTo(gbSeconds * PRICES.lambda.perGbSecond, 8);
    for (const part of ['sqs', 'dynamoDb', 'logs', 'dataOut'] as const) expect(slow[part]).toBe(fast[part]);
  });

  it('pays one answer per event with batches of one, so quiet traffic feels a slow destination more', () => {
    const quiet = forwardCostPerMillion(1_000, 'quiet');
    const busy = forwardCostPerMillion(1_000, 'busy');
    expect(quiet.lambda / busy.lambda).toBeGreaterThan(ASSUMPTIONS.busy.batchSize / 2);
  });

  it("sends each POST's body and headers out to the internet, and counts the receiver's send and the event source's requests", () => {
    const cost = forwardCostPerMillion(200, 'busy');
    const bytes = FORWARD_ASSUMPTIONS.bodyBytes + FORWARD_ASSUMPTIONS.requestOverheadBytes;
    expect(cost.dataOut).toBeCloseTo(((1e6 * bytes) / 1e9) * PRICES.dataTransfer.outToInternetPerGb, 10);
    const requests = 1e6 + (1e6 / ASSUMPTIONS.busy.batchSize) * ASSUMPTIONS.sqsRequestsPerConsumerInvocation;
    expect(cost.sqs).toBeCloseTo(requests * PRICES.sqs.perRequest, 10);
    expect(cost.total).toBeCloseTo(cost.sqs + cost.lambda + cost.dynamoDb + cost.logs + cost.dataOut, 10);
  });

  it('prints a row per answer time, its busy total the sum of its columns', () => {
    const totals = [...forwardingRegion().matchAll(/\*\*\$(\d+\.\d+)\*\*/g)].map((match) => Number(match[1]));
    expect(totals).toEqual(
      FORWARD_ANSWER_MS.map((answerMs) => Number(forwardCostPerMillion(answerMs, 'busy').total.toFixed(2))),
    );
  });
});
