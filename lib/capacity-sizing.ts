/**
 * Sizing from the expected peak (docs/capacity.md): the construct asks the planner of contract/capacity.ts
 * (`planCapacity`, no second model) for the front door's throttle (the HTTP API's route throttle, or the
 * receiver's reserved concurrency behind a function URL), each lane's `maxConcurrency` and the claim table's
 * warm throughput, uses them where the props set nothing (never below contract/settings.ts and lib/defaults.ts,
 * which are floors: without `expectedPeak` it sizes for DEFAULT_EXPECTED_PEAK, one number at its top tier), and
 * names every explicit setting or account quota that cannot carry the peak as a synth warning.
 */
import {
  type CapacityLimit,
  type CapacityPipeline,
  capacitySubscribers,
  DEFAULT_EXPECTED_PEAK,
  DEFAULT_WEBHOOK_ENDPOINT,
  DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS,
  EVENT_SOURCE_MAX_CONCURRENCY,
  type ExpectedPeak,
  peakTraffic,
  planCapacity,
  type WebhookEndpoint,
} from '../contract/capacity.ts';
import { forwardInFlightShare } from '../contract/forwarding.ts';
import type { LaneName } from '../contract/lanes.ts';
import { UnsafeSettingsError } from '../contract/settings.ts';
import type { ResolvedSubscriber } from '../contract/subscribers.ts';
import { DEFAULT_THROTTLING_BURST_LIMIT, DEFAULT_THROTTLING_RATE_LIMIT } from './defaults.ts';
import type { WhatsAppWebhookDedupProps } from './whatsapp-webhook-dedup-props.ts';

export interface CapacityWarning {
  /** `whatsapp-webhook-dedup:capacity:<setting>[:<subscriber>:<lane>]`, for `Annotations.addWarningV2`. */
  readonly id: string;
  readonly message: string;
}

export interface PeakSizing {
  readonly peak: ExpectedPeak;
  readonly endpoint: WebhookEndpoint;
  /** The HTTP API's route throttle (used with `http-api` only). */
  readonly throttlingRateLimit: number;
  readonly throttlingBurstLimit: number;
  /** The receiver's reserved concurrency, a function URL's throttle; `undefined` with `http-api` (none set). */
  readonly receiverReservedConcurrency: number | undefined;
  /** The subscribers with every `maxConcurrency` the props leave unset sized for the peak. */
  readonly subscribers: readonly ResolvedSubscriber[];
  /** `undefined` when a new table's warm throughput carries the peak (nothing to set, nothing billed). */
  readonly warmWriteUnitsPerSecond: number | undefined;
  readonly warnings: readonly CapacityWarning[];
}

/** Which lanes' `maxConcurrency` the props give, per subscriber (the message lane inherits its subscriber's). */
function explicitConcurrency(
  props: WhatsAppWebhookDedupProps,
  subscriber: ResolvedSubscriber,
): Record<LaneName, boolean> {
  const definition = props.subscribers?.[subscriber.name];
  const status = definition?.settings?.maxConcurrency !== undefined || props.maxConcurrency !== undefined;
  const lane = definition?.messageLane ?? props.messageLane;
  return { status, message: status || lane?.settings?.maxConcurrency !== undefined };
}

/** The most `maxConcurrency` a lane may have: a forward subscriber's share of `maxInFlight`, else no bound. */
function inFlightCap(subscriber: ResolvedSubscriber, lane: LaneName): number {
  const maxInFlight = subscriber.forward?.maxInFlight;
  if (maxInFlight === undefined) return Number.POSITIVE_INFINITY;
  return forwardInFlightShare(maxInFlight, lane, subscriber.messageLane !== undefined);
}

interface FrontDoorLimits {
  readonly endpoint: WebhookEndpoint;
  readonly rate: number;
  readonly burst: number;
  readonly reserved: number;
}

function pipelineOf(
  subscribers: readonly ResolvedSubscriber[],
  door: FrontDoorLimits,
  warmWriteUnits?: number,
): CapacityPipeline {
  return {
    endpoint: door.endpoint,
    throttlingRateLimit: door.rate,
    throttlingBurstLimit: door.burst,
    receiverReservedConcurrency: door.reserved,
    subscribers: capacitySubscribers(subscribers),
    warmWriteUnits,
  };
}

function warningId(limit: CapacityLimit): string {
  const setting = limit.setting.replace(/[^A-Za-z0-9.]+/g, '-').replace(/^-|-$/g, '');
  const where = limit.subscriber === undefined ? '' : `:${limit.subscriber}:${limit.lane}`;
  return `whatsapp-webhook-dedup:capacity:${setting}${where}`;
}

/**
 * Sizes what the props leave unset for `props.expectedPeak` (DEFAULT_EXPECTED_PEAK without it) and warns of
 * what cannot carry it. Throws `UnsafeSettingsError` for a peak that is not a rate.
 */
export function sizeForPeak(
  props: WhatsAppWebhookDedupProps,
  subscribers: readonly ResolvedSubscriber[],
): PeakSizing {
  const peak = props.expectedPeak ?? DEFAULT_EXPECTED_PEAK;
  const endpoint = props.endpoint ?? DEFAULT_WEBHOOK_ENDPOINT;
  try {
    peakTraffic(peak);
  } catch (error) {
    throw error instanceof RangeError ? new UnsafeSettingsError(`expectedPeak: ${error.message}`) : error;
  }
  const declared = planCapacity(
    peak,
    pipelineOf(subscribers, {
      endpoint,
      rate: props.throttlingRateLimit ?? Number.POSITIVE_INFINITY,
      burst: props.throttlingBurstLimit ?? Number.POSITIVE_INFINITY,
      reserved: props.receiverReservedConcurrency ?? Number.POSITIVE_INFINITY,
    }),
  );
  const { sizing } = declared;
  const sized = (subscriber: ResolvedSubscriber, lane: LaneName, own: number) => {
    if (explicitConcurrency(props, subscriber)[lane]) return own;
    const value = sizing.maxConcurrency.find(
      (entry) => entry.subscriber === subscriber.name && entry.lane === lane,
    )?.value;
    // No concurrency up to the event source's maximum meets the target: the warning below names the lane.
    // Never below the default: a small declared peak gains nothing from a lower cap (concurrency costs nothing
    // while idle) and would meet Meta's retries after an outage, which come faster than the steady peak.
    // Never above a forward subscriber's share of its `maxInFlight`: the destination's bound comes first, and a
    // peak it cannot carry is named in the warnings below.
    return Math.min(Math.max(value ?? EVENT_SOURCE_MAX_CONCURRENCY, own), inFlightCap(subscriber, lane));
  };
  const sizedSubscribers = subscribers.map((subscriber) => ({
    ...subscriber,
    settings: {
      ...subscriber.settings,
      maxConcurrency: sized(subscriber, 'status', subscriber.settings.maxConcurrency),
    },
    messageLane:
      subscriber.messageLane === undefined
        ? undefined
        : {
            ...subscriber.messageLane,
            settings: {
              ...subscriber.messageLane.settings,
              maxConcurrency: sized(subscriber, 'message', subscriber.messageLane.settings.maxConcurrency),
            },
          },
  }));
  // The same floor for the throttle: a 429 is a late duplicate, and an idle API costs nothing.
  const throttlingRateLimit =
    props.throttlingRateLimit ?? Math.max(sizing.throttlingRateLimit, DEFAULT_THROTTLING_RATE_LIMIT);
  const throttlingBurstLimit =
    props.throttlingBurstLimit ?? Math.max(sizing.throttlingBurstLimit, DEFAULT_THROTTLING_BURST_LIMIT);
  // Sized from the peak itself, not floored at the default's: a reservation is taken from the account's
  // concurrency whether the receiver runs or not, so an idle one is not free (docs/decisions.md, "Front door").
  const reserved = props.receiverReservedConcurrency ?? sizing.receiverReservedConcurrency;
  const warm = Math.max(DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS, sizing.warmWriteUnitsPerSecond);
  const plan = planCapacity(
    peak,
    pipelineOf(
      sizedSubscribers,
      { endpoint, rate: throttlingRateLimit, burst: throttlingBurstLimit, reserved },
      warm,
    ),
  );
  const posts = plan.traffic.postsPerSecond;
  const failing = plan.limits.filter((limit) => !limit.carries);
  const warnings = failing.map((limit, index) => ({
    id: warningId(limit),
    message: `${props.expectedPeak === undefined ? 'The default peak' : 'expectedPeak'} (${posts} webhook POSTs/s) is not carried: ${plan.problems[index]}${limit.kind === 'quota' ? ` (${limit.source ?? 'Service Quotas'})` : ''}. See docs/capacity.md.`,
  }));
  return {
    peak,
    endpoint,
    throttlingRateLimit,
    throttlingBurstLimit,
    receiverReservedConcurrency: endpoint === 'function-url' ? reserved : undefined,
    subscribers: sizedSubscribers,
    warmWriteUnitsPerSecond: warm > DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS ? warm : undefined,
    warnings,
  };
}
