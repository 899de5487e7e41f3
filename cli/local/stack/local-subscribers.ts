/**
 * Which subscribers the local stack runs, from the project in the working directory: those of its subscribers
 * module, the one its CDK app gives the construct (`--subscribers PATH`, else `LOCAL_SUBSCRIBERS`, else
 * bin/subscribers.ts, each a path from the project root), with each subscriber's `entry` a path from the
 * project root too, as the construct reads it. The project's modules are compiled as the Lambda bundles are
 * (project-modules.ts). No definitions (`undefined`) means the single default subscriber: this package's
 * `functions/consumer.ts` over its `functions/webhook-handlers.ts`, with unprefixed keys, as the construct
 * deploys it without `subscribers`.
 */

import { forwardHeadersProblem, type ResolvedForward } from 'whatsapp-webhook-dedup/contract/forwarding';
import type { PipelineSettingsInput } from 'whatsapp-webhook-dedup/contract/settings';
import {
  DEFAULT_SUBSCRIBER_NAME,
  type ResolvedSubscriber,
  resolveSubscribers,
  type SubscriberDefinitions,
} from 'whatsapp-webhook-dedup/contract/subscribers';
import { forwardWebhookHandlers } from 'whatsapp-webhook-dedup/functions/forward/forward-handlers';
import { forwardTarget } from 'whatsapp-webhook-dedup/functions/forward/forwarder';
import { SubscriberModuleError } from './consumer-runtime.ts';
import { LOCAL_ENV, readLocalConfig } from './local-config.ts';
import { ProjectModuleNotFoundError, type ProjectModules, projectModules } from './project-modules.ts';

/** Where the CDK app and the local stack read the subscribers from, by default, from the project root. */
export const SUBSCRIBERS_MODULE = 'bin/subscribers.ts';
/** The default subscriber's entry, as the construct's default consumer (this package's own module). */
export const DEFAULT_SUBSCRIBER_ENTRY = 'functions/consumer.ts';

export interface LocalSubscribers {
  /** The module the definitions came from, as given (from the project root). */
  readonly source: string;
  readonly subscribers: readonly ResolvedSubscriber[];
  /** The subscriber's module (its `webhookHandlers`): a project entry compiled, or the package's default. */
  importModule(
    subscriber: Pick<ResolvedSubscriber, 'name' | 'entry' | 'forward'>,
  ): Promise<Record<string, unknown>>;
  /** Compiles and imports another module of the project (`LOCAL_CONSUMER`). */
  importProjectModule(path: string): Promise<Record<string, unknown>>;
}

/** The subscribers module does not exist: a usage error (exit code 2), not a failed start. */
export class SubscribersModuleNotFoundError extends SubscriberModuleError {
  constructor(source: string, projectRoot: string) {
    super(
      `No subscribers module at ${source} (from ${projectRoot}): pass --subscribers PATH, the module exporting the subscribers your CDK app gives the construct.`,
    );
    this.name = 'SubscribersModuleNotFoundError';
  }
}

/**
 * Loads and resolves the subscribers. A missing module throws `SubscribersModuleNotFoundError`, a bad one
 * `SubscriberModuleError`, unsafe definitions `UnsafeSettingsError`, each with one line saying what to change.
 */
export async function loadLocalSubscribers(options: {
  /** The directory the module and the entries are paths from: the user's project. */
  readonly projectRoot: string;
  /** `--subscribers`; unset: `LOCAL_SUBSCRIBERS`, else bin/subscribers.ts. */
  readonly module?: string | undefined;
  readonly settings: PipelineSettingsInput;
  readonly env?: NodeJS.ProcessEnv;
}): Promise<LocalSubscribers> {
  const source = options.module || options.env?.[LOCAL_ENV.subscribers] || SUBSCRIBERS_MODULE;
  const modules = projectModules(options.projectRoot);
  const module = await importSubscribersModule(modules, source);
  if (!('subscribers' in module)) {
    throw new SubscriberModuleError(
      `${source} must export subscribers (SubscriberDefinitions, or undefined for the default subscriber).`,
    );
  }
  const definitions = module.subscribers;
  if (definitions !== undefined && (typeof definitions !== 'object' || definitions === null)) {
    throw new SubscriberModuleError(`${source}: subscribers must be an object of name → definition.`);
  }
  const packageDefault = definitions === undefined;
  return {
    source,
    subscribers: resolveLocalSubscribers(definitions as SubscriberDefinitions | undefined, options.settings),
    importModule: async (subscriber) => {
      if (subscriber.forward !== undefined) {
        const env = options.env ?? process.env;
        const secret = localForwardSecret(subscriber.name, subscriber.forward, env);
        const headers = localForwardHeaders(subscriber.name, subscriber.forward, env);
        // Both lanes run in this process and share these handlers: the subscriber's whole maxInFlight bounds
        // them together, as in AWS each invocation's part of its lane's share does.
        return {
          webhookHandlers: forwardWebhookHandlers(forwardTarget(subscriber.forward, secret, headers), {
            batch: subscriber.forward.batch,
            maxInFlight: subscriber.forward.maxInFlight,
          }),
        };
      }
      return packageDefault || subscriber.entry === undefined
        ? (import('whatsapp-webhook-dedup/functions/consumer') as Promise<Record<string, unknown>>)
        : modules.import(subscriber.entry);
    },
    importProjectModule: (path) => modules.import(path),
  };
}

/**
 * What a forward subscriber signs with locally: the environment variable its `secretName` names (the secret's
 * value, which Secrets Manager holds in AWS), else the local stack's first app secret, as in AWS.
 */
export function localForwardSecret(name: string, forward: ResolvedForward, env: NodeJS.ProcessEnv): string {
  if (forward.secretName === undefined) return readLocalConfig(env).appSecrets[0] as string;
  const value = env[forward.secretName];
  if (value === undefined || value === '') {
    throw new SubscriberModuleError(
      `Subscriber ${name}: set the environment variable ${forward.secretName} to the value of its secret ${forward.secretName}, which the local stack reads instead of Secrets Manager.`,
    );
  }
  return value;
}

/**
 * The headers a forward subscriber adds locally: the JSON object in the environment variable its
 * `headersSecretName` names (the secret's value, which Secrets Manager holds in AWS), checked as the consumer
 * checks the secret's; `undefined` without `headersSecretName`.
 */
export function localForwardHeaders(
  name: string,
  forward: ResolvedForward,
  env: NodeJS.ProcessEnv,
): Readonly<Record<string, string>> | undefined {
  const variable = forward.headersSecretName;
  if (variable === undefined) return undefined;
  const raw = env[variable];
  if (raw === undefined || raw === '') {
    throw new SubscriberModuleError(
      `Subscriber ${name}: set the environment variable ${variable} to the value of its headers secret ${variable} (a JSON object of header name → value), which the local stack reads instead of Secrets Manager.`,
    );
  }
  let headers: unknown;
  try {
    headers = JSON.parse(raw);
  } catch {
    throw new SubscriberModuleError(`Subscriber ${name}: ${variable} holds no JSON object of headers.`);
  }
  const problem = forwardHeadersProblem(headers);
  if (problem !== undefined) throw new SubscriberModuleError(`Subscriber ${name}: ${variable}: ${problem}`);
  return headers as Record<string, string>;
}

async function importSubscribersModule(modules: ProjectModules, source: string) {
  try {
    return await modules.import(source);
  } catch (error) {
    if (error instanceof ProjectModuleNotFoundError) {
      throw new SubscribersModuleNotFoundError(source, modules.projectRoot);
    }
    throw new SubscriberModuleError(
      `Cannot load the subscribers from ${source} (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
}

/** The definitions resolved over the local pipeline settings; `undefined` → the one default subscriber. */
export function resolveLocalSubscribers(
  definitions: SubscriberDefinitions | undefined,
  settings: PipelineSettingsInput,
): ResolvedSubscriber[] {
  return resolveSubscribers(
    definitions ?? { [DEFAULT_SUBSCRIBER_NAME]: { entry: DEFAULT_SUBSCRIBER_ENTRY, keyNamespace: '' } },
    settings,
    undefined,
    { forwardLoopbackHttp: true },
  );
}
