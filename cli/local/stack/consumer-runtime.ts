/**
 * A subscriber's consumer as the local stack runs it: the same wiring as in Lambda (`createConsumerFromEnv`
 * over the subscriber module's `webhookHandlers`, configured by its own environment), with two local
 * additions around every handler: each side effect can be made to take a while (`/local/faults` →
 * `effect.delayMs`, so that the outage drill can load the consumer like a real effect would), and each
 * handler call that returns is journaled as one effect of that subscriber, with when it started and ended
 * (`/local/effects`).
 */
import type { Context, SQSEvent } from 'aws-lambda';
import type { ResolvedSubscriber } from 'whatsapp-webhook-dedup/contract/subscribers';
import type {
  ConversationTurnContext,
  RecordContext,
  WebhookHandler,
  WebhookHandlers,
} from 'whatsapp-webhook-dedup/functions/consumer/handler-api';
import type { EffectRun } from './effects-journal.ts';

export interface EffectDelay {
  /** Milliseconds the next side effect should take (0: none). */
  nextEffectDelayMs(): number;
}

export interface LocalEffectsOptions {
  readonly delay: EffectDelay;
  /**
   * Called with the event key once the handler returned, and when the call ran (epoch ms): from the moment it
   * was called, the effect delay included, to its return.
   */
  readonly recordEffect: (key: string, run: EffectRun) => void;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
}

/** Wraps every registered handler: wait for the configured effect time, run it, then record the effect. */
export function withLocalEffects(handlers: WebhookHandlers, options: LocalEffectsOptions): WebhookHandlers {
  const clock = options.clock ?? Date.now;
  const wrap = <C extends { readonly key: string }>(
    handler: WebhookHandler<C> | undefined,
  ): WebhookHandler<C> | undefined =>
    handler === undefined
      ? undefined
      : async (context: C) => {
          const startedAt = clock();
          const ms = options.delay.nextEffectDelayMs();
          if (ms > 0) await new Promise((done) => setTimeout(done, ms));
          await handler(context);
          options.recordEffect(context.key, { startedAt, endedAt: clock() });
        };
  const turn = handlers.onConversationTurn;
  const part = handlers.onRecord;
  return {
    // Whatever else the module sets (handlers and options this wrapper does not know) passes through.
    ...handlers,
    ...(handlers.onMessage && { onMessage: wrap(handlers.onMessage) }),
    // A turn is one side effect for all its messages: one delay, then each message's key journaled.
    ...(turn && {
      onConversationTurn: async (context: ConversationTurnContext) => {
        const startedAt = clock();
        const ms = options.delay.nextEffectDelayMs();
        if (ms > 0) await new Promise((done) => setTimeout(done, ms));
        await turn(context);
        const run = { startedAt, endedAt: clock() };
        for (const message of context.messages) options.recordEffect(message.key, run);
      },
    }),
    ...(handlers.onStatus && { onStatus: wrap(handlers.onStatus) }),
    ...(handlers.onError && { onError: wrap(handlers.onError) }),
    ...(handlers.onManagementEvent && { onManagementEvent: wrap(handlers.onManagementEvent) }),
    ...(handlers.onGroupEvent && { onGroupEvent: wrap(handlers.onGroupEvent) }),
    // A record's events are one side effect too: one delay, then each event's key journaled.
    ...(part && {
      onRecord: async (context: RecordContext) => {
        const startedAt = clock();
        const ms = options.delay.nextEffectDelayMs();
        if (ms > 0) await new Promise((done) => setTimeout(done, ms));
        await part(context);
        const run = { startedAt, endedAt: clock() };
        for (const event of context.events) options.recordEffect(event.key, run);
      },
    }),
  };
}

/** The handler names a handler set defines (`onMessage`, …), for `/local/info` and the outage drill. */
export function definedHandlers(handlers: WebhookHandlers): (keyof WebhookHandlers)[] {
  const names = [
    'onMessage',
    'onConversationTurn',
    'onStatus',
    'onError',
    'onManagementEvent',
    'onGroupEvent',
    'onRecord',
  ] as const;
  return names.filter((name) => typeof handlers[name] === 'function');
}

export class SubscriberModuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SubscriberModuleError';
  }
}

/** The `webhookHandlers` of a subscriber's module, imported by `importModule` (local-subscribers.ts). */
export async function importSubscriberHandlers(
  subscriber: Pick<ResolvedSubscriber, 'name' | 'entry' | 'forward'>,
  importModule: (
    subscriber: Pick<ResolvedSubscriber, 'name' | 'entry' | 'forward'>,
  ) => Promise<Record<string, unknown>>,
): Promise<WebhookHandlers> {
  let module: Record<string, unknown>;
  try {
    module = await importModule(subscriber);
  } catch (error) {
    if (error instanceof SubscriberModuleError) throw error;
    throw new SubscriberModuleError(
      `Subscriber ${subscriber.name}: cannot load ${subscriber.entry} (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
  const handlers = module.webhookHandlers;
  if (typeof handlers !== 'object' || handlers === null) {
    throw new SubscriberModuleError(
      `Subscriber ${subscriber.name}: ${subscriber.entry} must export webhookHandlers (from defineWebhookHandlers).`,
    );
  }
  return handlers as WebhookHandlers;
}

/** `LOCAL_CONSUMER`: a module of the project exporting `createConsumer(handlers, env)`. */
export interface LocalConsumerModule {
  /** As given, for the error message. */
  readonly path: string;
  readonly import: () => Promise<Record<string, unknown>>;
}

/**
 * The consumer over `handlers`, configured by `env` (one subscriber's variables on top of the process's AWS
 * endpoints). Imports the consumer modules only now: their SDK clients read the endpoints from the process
 * environment, which the local stack sets first.
 */
export async function createLocalConsumer(
  handlers: WebhookHandlers,
  env: NodeJS.ProcessEnv,
  consumerModule?: LocalConsumerModule,
): Promise<LocalConsumer> {
  if (consumerModule !== undefined) {
    const { createConsumer } = (await consumerModule.import()) as {
      createConsumer?: (handlers: WebhookHandlers, env: NodeJS.ProcessEnv) => LocalConsumer;
    };
    if (typeof createConsumer !== 'function') {
      throw new SubscriberModuleError(
        `LOCAL_CONSUMER ${consumerModule.path} must export createConsumer(handlers, env).`,
      );
    }
    return createConsumer(handlers, env);
  }
  const { createConsumerFromEnv } = await import('whatsapp-webhook-dedup/functions/consumer/create-consumer');
  return createConsumerFromEnv(handlers, env);
}

/** What a lane's poller invokes, as Lambda invokes the consumer function. */
export type LocalConsumer = (event: SQSEvent, context: Context) => Promise<unknown>;
