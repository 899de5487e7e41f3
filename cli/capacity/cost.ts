/**
 * What the peak costs while it lasts, from the price table docs/cost.md uses (cli/cost/prices.ts) and its
 * assumed log volumes (cli/cost/stack-cost.ts ASSUMPTIONS): per hour, and per month were it to last all month,
 * behind either front door (`frontDoorCost`: the HTTP API's request charge and access log, or a function URL's
 * nothing).
 */

import { type CapacityPlan, DEFAULT_RECEIVER_MS } from 'whatsapp-webhook-dedup/contract/capacity';
import { DEFAULT_RECEIVER_MEMORY_MB } from 'whatsapp-webhook-dedup/lib/defaults';
import { PRICES } from '../cost/prices.ts';
import {
  ASSUMPTIONS,
  DEFAULT_FRONT_DOOR,
  type FrontDoor,
  frontDoorCost,
  KB_PER_GB,
} from '../cost/stack-cost.ts';
import type { PlannedPipeline } from './pipeline.ts';

/** AWS prices a month as 730 hours. https://aws.amazon.com/lambda/pricing/ */
export const HOURS_PER_MONTH = 730;
const SECONDS_PER_HOUR = 3600;

export interface PeakCost {
  readonly door: FrontDoor;
  readonly perHour: {
    /** The HTTP API's requests; 0 behind a function URL. */
    readonly apiGateway: number;
    readonly receiver: number;
    readonly sqs: number;
    readonly consumers: number;
    readonly dynamoDb: number;
    readonly logs: number;
    readonly total: number;
  };
  readonly perMonth: number;
}

const lambda = (invocations: number, seconds: number, memoryMb: number) =>
  invocations * (PRICES.lambda.perRequest + (memoryMb / 1024) * seconds * PRICES.lambda.perGbSecond);

/** `door`: the plan's own `endpoint` unless another is asked for (to compare both doors on one plan). */
export function peakCost(
  plan: CapacityPlan,
  pipeline: PlannedPipeline,
  door: FrontDoor = plan.endpoint ?? DEFAULT_FRONT_DOOR,
): PeakCost {
  const posts = plan.traffic.postsPerSecond * SECONDS_PER_HOUR;
  const front = frontDoorCost(door, posts, ASSUMPTIONS.apiAccessLogKB);
  const receiverSeconds = (pipeline.receiverMs ?? DEFAULT_RECEIVER_MS) / 1000;
  let sqs = 0;
  let consumers = 0;
  let consumerInvocations = 0;
  for (const lane of plan.lanes) {
    const memory = pipeline.subscribers.find((s) => s.name === lane.subscriber)?.memorySize;
    const invocations = (lane.eventsPerSecond / lane.batchFill) * SECONDS_PER_HOUR;
    const perRequest = lane.ordered ? PRICES.sqs.fifoPerRequest : PRICES.sqs.perRequest;
    // One send per event (one update per POST), then the event source's receive and delete per batch.
    sqs +=
      (lane.eventsPerSecond * SECONDS_PER_HOUR + invocations * ASSUMPTIONS.sqsRequestsPerConsumerInvocation) *
      perRequest;
    consumers += lambda(invocations, lane.batchSeconds, memory ?? 0);
    consumerInvocations += invocations;
  }
  const parts = {
    apiGateway: front.requests,
    receiver: lambda(posts, receiverSeconds, DEFAULT_RECEIVER_MEMORY_MB),
    sqs,
    consumers,
    dynamoDb: plan.claimWriteUnitsPerSecond * SECONDS_PER_HOUR * PRICES.dynamoDb.perWriteRequestUnit,
    logs:
      ((posts * ASSUMPTIONS.receiverLogKB +
        front.accessLogKB +
        consumerInvocations * ASSUMPTIONS.busy.consumerLogKB) /
        KB_PER_GB) *
      PRICES.cloudWatch.logsPerGbIngested,
  };
  const total = Object.values(parts).reduce((sum, value) => sum + value, 0);
  return { door, perHour: { ...parts, total }, perMonth: total * HOURS_PER_MONTH };
}
