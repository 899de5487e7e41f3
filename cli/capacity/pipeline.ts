/**
 * The pipeline the planner sizes: what the construct deploys without `expectedPeak` (settings from
 * contract/settings.ts and the lanes of contract/lanes.ts, then sized for DEFAULT_EXPECTED_PEAK by
 * lib/capacity-sizing.ts as the construct does), behind either front door, with the default subscriber, N
 * copies of it, or the subscribers of a module shaped like bin/subscribers.ts (each entry imported to see which
 * handlers it has).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  type CapacityPipeline,
  type CapacitySubscriber,
  capacitySubscribers,
  DEFAULT_WEBHOOK_ENDPOINT,
  type WebhookEndpoint,
} from 'whatsapp-webhook-dedup/contract/capacity';
import { resolveMessageLane } from 'whatsapp-webhook-dedup/contract/lanes';
import { resolveSettings } from 'whatsapp-webhook-dedup/contract/settings';
import {
  DEFAULT_SUBSCRIBER_NAME,
  type ResolvedSubscriber,
  resolveSubscribers,
  type SubscriberDefinitions,
} from 'whatsapp-webhook-dedup/contract/subscribers';
import { forwardWebhookHandlers } from 'whatsapp-webhook-dedup/functions/forward/forward-handlers';
import { forwardTarget } from 'whatsapp-webhook-dedup/functions/forward/forwarder';
import { webhookHandlers as defaultHandlers } from 'whatsapp-webhook-dedup/functions/webhook-handlers';
import { sizeForPeak } from 'whatsapp-webhook-dedup/lib/capacity-sizing';
import { DEFAULT_CONSUMER_MEMORY_MB } from 'whatsapp-webhook-dedup/lib/defaults';

export const PROJECT_ROOT = resolve(import.meta.dirname, '..', '..');
const DEFAULT_ENTRY = 'functions/consumer.ts';

/** A subscriber as the planner prices it: the model's view and its consumer memory. */
export interface PlannedSubscriber extends CapacitySubscriber {
  readonly memorySize: number;
}

export interface PlannedPipeline extends CapacityPipeline {
  readonly endpoint: WebhookEndpoint;
  readonly subscribers: readonly PlannedSubscriber[];
}

interface HandlerSet {
  readonly onMessage?: unknown;
  readonly onConversationTurn?: unknown;
  readonly onStatus?: unknown;
  /** A record handler takes every kind of event. */
  readonly onRecord?: unknown;
}

function handles(handlers: HandlerSet): CapacitySubscriber['handles'] {
  const records = handlers.onRecord !== undefined;
  return {
    message: records || handlers.onMessage !== undefined || handlers.onConversationTurn !== undefined,
    status: records || handlers.onStatus !== undefined,
  };
}

function planned(subscriber: ResolvedSubscriber, handlers: HandlerSet): PlannedSubscriber {
  const [model] = capacitySubscribers([subscriber], () => handles(handlers));
  return {
    ...(model as CapacitySubscriber),
    memorySize: subscriber.memorySize ?? DEFAULT_CONSUMER_MEMORY_MB,
  };
}

/**
 * The construct's sizing for its default peak, as `cdk synth` applies it: the front door's throttle (the
 * route's, or the receiver's reserved concurrency), each lane's `maxConcurrency` the definitions leave unset,
 * and the claim table's warm throughput.
 */
function deployed(
  resolved: readonly ResolvedSubscriber[],
  definitions: SubscriberDefinitions | undefined,
  handlersOf: (subscriber: ResolvedSubscriber) => HandlerSet,
  endpoint: WebhookEndpoint,
): PlannedPipeline {
  const sizing = sizeForPeak(
    { endpoint, ...(definitions === undefined ? {} : { subscribers: definitions }) },
    resolved,
  );
  return {
    endpoint,
    throttlingRateLimit: sizing.throttlingRateLimit,
    throttlingBurstLimit: sizing.throttlingBurstLimit,
    ...(sizing.receiverReservedConcurrency === undefined
      ? {}
      : { receiverReservedConcurrency: sizing.receiverReservedConcurrency }),
    warmWriteUnits: sizing.warmWriteUnitsPerSecond,
    subscribers: sizing.subscribers.map((subscriber) => planned(subscriber, handlersOf(subscriber))),
  };
}

/** The construct with default props (but `endpoint`): one subscriber over functions/webhook-handlers.ts. */
export function defaultPipeline(
  copies = 1,
  endpoint: WebhookEndpoint = DEFAULT_WEBHOOK_ENDPOINT,
): PlannedPipeline {
  if (copies === 1) {
    const subscriber: ResolvedSubscriber = {
      name: DEFAULT_SUBSCRIBER_NAME,
      entry: DEFAULT_ENTRY,
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
    return deployed([subscriber], undefined, () => defaultHandlers, endpoint);
  }
  const definitions: SubscriberDefinitions = Object.fromEntries(
    Array.from({ length: copies }, (_, index) => [`subscriber-${index + 1}`, { entry: DEFAULT_ENTRY }]),
  );
  return deployed(resolveSubscribers(definitions), definitions, () => defaultHandlers, endpoint);
}

/** The subscribers exported as `subscribers` by `modulePath` (from the project root), like bin/subscribers.ts. */
export async function pipelineFromModule(
  modulePath: string,
  endpoint: WebhookEndpoint = DEFAULT_WEBHOOK_ENDPOINT,
): Promise<PlannedPipeline> {
  const module = (await import(pathToFileURL(resolve(PROJECT_ROOT, modulePath)).href)) as {
    subscribers?: SubscriberDefinitions;
  };
  if (!('subscribers' in module)) {
    throw new TypeError(`${modulePath} exports no subscribers (see bin/subscribers.ts).`);
  }
  if (module.subscribers === undefined) return defaultPipeline(1, endpoint);
  const resolved = resolveSubscribers(module.subscribers);
  const handlers = new Map<string, HandlerSet>();
  for (const subscriber of resolved) {
    if (subscriber.entry === undefined) {
      // A forward subscriber handles every kind of event; the secret plays no part in the plan.
      if (subscriber.forward !== undefined) {
        handlers.set(
          subscriber.name,
          forwardWebhookHandlers(forwardTarget(subscriber.forward, ''), { batch: subscriber.forward.batch }),
        );
      }
      continue;
    }
    const entry = (await import(pathToFileURL(resolve(PROJECT_ROOT, subscriber.entry)).href)) as {
      webhookHandlers?: HandlerSet;
    };
    if (entry.webhookHandlers === undefined) {
      throw new TypeError(`Subscriber ${subscriber.name}: ${subscriber.entry} exports no webhookHandlers.`);
    }
    handlers.set(subscriber.name, entry.webhookHandlers);
  }
  return deployed(
    resolved,
    module.subscribers,
    (subscriber) => handlers.get(subscriber.name) ?? {},
    endpoint,
  );
}
