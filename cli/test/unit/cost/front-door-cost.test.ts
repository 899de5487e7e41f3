/** Both front doors through the one formula: what a function URL leaves out, and nothing else. */
import { describe, expect, it } from 'vitest';
import { planCapacity } from '../../../../contract/capacity.ts';
import { peakCost } from '../../../capacity/cost.ts';
import { defaultPipeline } from '../../../capacity/pipeline.ts';
import { PRICES } from '../../../cost/prices.ts';
import {
  costPerMillionEvents,
  FRONT_DOORS,
  KB_PER_GB,
  referenceShape,
  type StackCost,
} from '../../../cost/stack-cost.ts';

const accessLogPerMillion = (deliveriesPerEvent: number, kb: number) =>
  ((deliveriesPerEvent * 1e6 * kb) / KB_PER_GB) * PRICES.cloudWatch.logsPerGbIngested;

describe('costPerMillionEvents behind each front door', () => {
  it('drops the HTTP API request charge and its access log behind a function URL, and nothing else', () => {
    const shape = { ...referenceShape('busy'), deliveriesPerEvent: 1.1 };
    const httpApi = costPerMillionEvents(shape, 'http-api');
    const functionUrl = costPerMillionEvents(shape, 'function-url');
    expect(httpApi.apiGateway).toBeCloseTo(1.1 * PRICES.apiGateway.perRequest * 1e6, 9);
    expect(functionUrl.apiGateway).toBe(0);
    expect(httpApi.logs - functionUrl.logs).toBeCloseTo(
      accessLogPerMillion(1.1, shape.apiAccessLogKBPerDelivery),
      9,
    );
    for (const same of ['receiver', 'consumer', 'sqs', 'dynamoDb'] as (keyof StackCost)[]) {
      expect(functionUrl[same], same).toBe(httpApi[same]);
    }
  });

  it('prices the HTTP API by default, as the construct deploys it', () => {
    expect(costPerMillionEvents(referenceShape('quiet'))).toEqual(
      costPerMillionEvents(referenceShape('quiet'), 'http-api'),
    );
    expect(FRONT_DOORS).toEqual(['http-api', 'function-url']);
  });
});

describe('peakCost behind each front door', () => {
  const plan = planCapacity({ messagesPerSecond: 100, inboundPerSecond: 50 }, defaultPipeline());

  it("takes the plan's own door unless asked for another, and differs only by the door's charges", () => {
    const httpApi = peakCost(plan, defaultPipeline(), 'http-api');
    const functionUrl = peakCost(plan, defaultPipeline(), 'function-url');
    expect(peakCost(plan, defaultPipeline()).door).toBe(plan.endpoint);
    expect(functionUrl.perHour.apiGateway).toBe(0);
    const posts = plan.traffic.postsPerSecond * 3600;
    expect(httpApi.perHour.apiGateway).toBeCloseTo(posts * PRICES.apiGateway.perRequest, 9);
    expect(httpApi.perHour.logs).toBeGreaterThan(functionUrl.perHour.logs);
    expect(httpApi.perHour.receiver).toBe(functionUrl.perHour.receiver);
    expect(httpApi.perHour.total - functionUrl.perHour.total).toBeCloseTo(
      httpApi.perHour.apiGateway + (httpApi.perHour.logs - functionUrl.perHour.logs),
      9,
    );
  });
});
