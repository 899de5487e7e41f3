/**
 * What the capacity planner sizes for a peak (contract/capacity.ts), computed here from `planCapacity` so that
 * the infra tests compare the template with the model rather than with typed figures.
 */
import {
  type CapacitySizing,
  capacitySubscribers,
  DEFAULT_EXPECTED_PEAK,
  type ExpectedPeak,
  planCapacity,
} from '../../contract/capacity.ts';
import type { LaneName } from '../../contract/lanes.ts';
import { resolveMessageLane } from '../../contract/lanes.ts';
import { DEFAULT_SETTINGS, resolveSettings } from '../../contract/settings.ts';
import {
  DEFAULT_SUBSCRIBER_NAME,
  type ResolvedSubscriber,
  resolveSubscribers,
  type SubscriberDefinitions,
} from '../../contract/subscribers.ts';

/** The default subscriber as the construct resolves it without props. */
export function defaultSubscriber(): ResolvedSubscriber {
  return {
    name: DEFAULT_SUBSCRIBER_NAME,
    entry: 'functions/consumer.ts',
    forward: undefined,
    fields: undefined,
    numbers: undefined,
    wabas: undefined,
    keyNamespace: undefined,
    settings: resolveSettings(),
    statusLedger: undefined,
    claimUnhandledEvents: undefined,
    memorySize: undefined,
    messageLane: resolveMessageLane({}, undefined, undefined),
  };
}

/** The planner's sizing for `peak` over `subscribers` (the default one when omitted), both handlers assumed. */
export function plannedSizing(
  peak: ExpectedPeak = DEFAULT_EXPECTED_PEAK,
  subscribers: SubscriberDefinitions | undefined = undefined,
): CapacitySizing {
  const resolved = subscribers === undefined ? [defaultSubscriber()] : resolveSubscribers(subscribers);
  return planCapacity(peak, {
    throttlingRateLimit: Number.POSITIVE_INFINITY,
    throttlingBurstLimit: Number.POSITIVE_INFINITY,
    subscribers: capacitySubscribers(resolved),
  }).sizing;
}

/** The sized `maxConcurrency` of one subscriber's lane. */
export function sizedConcurrency(sizing: CapacitySizing, subscriber: string, lane: LaneName): number {
  const value = sizing.maxConcurrency.find(
    (entry) => entry.subscriber === subscriber && entry.lane === lane,
  )?.value;
  if (value === undefined) throw new Error(`no sizing for ${subscriber}, ${lane} lane`);
  return value;
}

/** The `maxConcurrency` the construct gives a lane it sizes: the planner's, never below the default. */
export function constructConcurrency(sizing: CapacitySizing, subscriber: string, lane: LaneName): number {
  return Math.max(sizedConcurrency(sizing, subscriber, lane), DEFAULT_SETTINGS.maxConcurrency);
}
