/**
 * The pipeline the planner sizes: the construct's defaults today (throttle from lib/defaults.ts, settings from
 * contract/settings.ts, the lanes of contract/lanes.ts), with the default subscriber, N copies of it, or the
 * subscribers of a module shaped like bin/subscribers.ts (each entry imported to see which handlers it has).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  type CapacityPipeline,
  type CapacitySubscriber,
  capacitySubscribers,
} from '../../contract/capacity.ts';
import { resolveMessageLane } from '../../contract/lanes.ts';
import { resolveSettings } from '../../contract/settings.ts';
import {
  DEFAULT_SUBSCRIBER_NAME,
  type ResolvedSubscriber,
  resolveSubscribers,
  type SubscriberDefinitions,
} from '../../contract/subscribers.ts';
import { webhookHandlers as defaultHandlers } from '../../functions/webhook-handlers.ts';
import {
  DEFAULT_CONSUMER_MEMORY_MB,
  DEFAULT_THROTTLING_BURST_LIMIT,
  DEFAULT_THROTTLING_RATE_LIMIT,
} from '../../lib/defaults.ts';

export const PROJECT_ROOT = resolve(import.meta.dirname, '..', '..');
const DEFAULT_ENTRY = 'functions/consumer.ts';

/** A subscriber as the planner prices it: the model's view and its consumer memory. */
export interface PlannedSubscriber extends CapacitySubscriber {
  readonly memorySize: number;
}

export interface PlannedPipeline extends CapacityPipeline {
  readonly subscribers: readonly PlannedSubscriber[];
}

interface HandlerSet {
  readonly onMessage?: unknown;
  readonly onConversationTurn?: unknown;
  readonly onStatus?: unknown;
}

function handles(handlers: HandlerSet): CapacitySubscriber['handles'] {
  return {
    message: handlers.onMessage !== undefined || handlers.onConversationTurn !== undefined,
    status: handlers.onStatus !== undefined,
  };
}

function planned(subscriber: ResolvedSubscriber, handlers: HandlerSet): PlannedSubscriber {
  const [model] = capacitySubscribers([subscriber], () => handles(handlers));
  return {
    ...(model as CapacitySubscriber),
    memorySize: subscriber.memorySize ?? DEFAULT_CONSUMER_MEMORY_MB,
  };
}

function withDefaults(subscribers: PlannedSubscriber[]): PlannedPipeline {
  return {
    throttlingRateLimit: DEFAULT_THROTTLING_RATE_LIMIT,
    throttlingBurstLimit: DEFAULT_THROTTLING_BURST_LIMIT,
    subscribers,
  };
}

/** The construct with default props: one subscriber over functions/webhook-handlers.ts. */
export function defaultPipeline(copies = 1): PlannedPipeline {
  if (copies === 1) {
    const subscriber: ResolvedSubscriber = {
      name: DEFAULT_SUBSCRIBER_NAME,
      entry: DEFAULT_ENTRY,
      fields: undefined,
      keyNamespace: undefined,
      settings: resolveSettings(),
      statusLedger: undefined,
      claimUnhandledEvents: undefined,
      memorySize: undefined,
      messageLane: resolveMessageLane({}, undefined, undefined),
    };
    return withDefaults([planned(subscriber, defaultHandlers)]);
  }
  const definitions: SubscriberDefinitions = Object.fromEntries(
    Array.from({ length: copies }, (_, index) => [`subscriber-${index + 1}`, { entry: DEFAULT_ENTRY }]),
  );
  return withDefaults(resolveSubscribers(definitions).map((s) => planned(s, defaultHandlers)));
}

/** The subscribers exported as `subscribers` by `modulePath` (from the project root), like bin/subscribers.ts. */
export async function pipelineFromModule(modulePath: string): Promise<PlannedPipeline> {
  const module = (await import(pathToFileURL(resolve(PROJECT_ROOT, modulePath)).href)) as {
    subscribers?: SubscriberDefinitions;
  };
  if (!('subscribers' in module)) {
    throw new TypeError(`${modulePath} exports no subscribers (see bin/subscribers.ts).`);
  }
  if (module.subscribers === undefined) return defaultPipeline();
  const resolved = resolveSubscribers(module.subscribers);
  const subscribers: PlannedSubscriber[] = [];
  for (const subscriber of resolved) {
    const entry = (await import(pathToFileURL(resolve(PROJECT_ROOT, subscriber.entry)).href)) as {
      webhookHandlers?: HandlerSet;
    };
    if (entry.webhookHandlers === undefined) {
      throw new TypeError(`Subscriber ${subscriber.name}: ${subscriber.entry} exports no webhookHandlers.`);
    }
    subscribers.push(planned(subscriber, entry.webhookHandlers));
  }
  return withDefaults(subscribers);
}
