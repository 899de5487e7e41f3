/**
 * Which subscribers `npm start` runs: those of `bin/subscribers.ts`, the configuration the CDK app deploys,
 * or those of the module named by `LOCAL_SUBSCRIBERS` (to try another set without editing it). No definitions
 * (`undefined`) means the single default subscriber: `functions/consumer.ts` over the handlers of
 * `functions/webhook-handlers.ts`, with unprefixed keys, as the CDK stack deploys it.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PipelineSettingsInput } from '../../contract/settings.ts';
import {
  DEFAULT_SUBSCRIBER_NAME,
  type ResolvedSubscriber,
  resolveSubscribers,
  type SubscriberDefinitions,
} from '../../contract/subscribers.ts';
import { SubscriberModuleError } from './consumer-runtime.ts';
import { LOCAL_ENV } from './local-config.ts';

/** Where the CDK app and the local stack read the subscribers from, relative to the project root. */
export const SUBSCRIBERS_MODULE = 'bin/subscribers.ts';
/** The default subscriber's entry, as the CDK construct's default consumer. */
export const DEFAULT_SUBSCRIBER_ENTRY = 'functions/consumer.ts';

export interface LocalSubscribers {
  /** The module the definitions came from (project-relative, or as given in `LOCAL_SUBSCRIBERS`). */
  readonly source: string;
  readonly subscribers: readonly ResolvedSubscriber[];
}

/**
 * Loads and resolves the subscribers. A bad module or unsafe definitions throw `SubscriberModuleError` or
 * `UnsafeSettingsError` with one line saying what to change.
 */
export async function loadLocalSubscribers(options: {
  readonly root: string;
  readonly settings: PipelineSettingsInput;
  readonly env?: NodeJS.ProcessEnv;
}): Promise<LocalSubscribers> {
  const override = options.env?.[LOCAL_ENV.subscribers] ?? '';
  const source = override === '' ? SUBSCRIBERS_MODULE : override;
  const path = resolve(override === '' ? options.root : process.cwd(), source);
  let module: { subscribers?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as typeof module;
  } catch (error) {
    throw new SubscriberModuleError(
      `Cannot load the subscribers from ${source} (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
  if (!('subscribers' in module)) {
    throw new SubscriberModuleError(
      `${source} must export subscribers (SubscriberDefinitions, or undefined for the default subscriber).`,
    );
  }
  const definitions = module.subscribers;
  if (definitions !== undefined && (typeof definitions !== 'object' || definitions === null)) {
    throw new SubscriberModuleError(`${source}: subscribers must be an object of name → definition.`);
  }
  return {
    source,
    subscribers: resolveLocalSubscribers(definitions as SubscriberDefinitions | undefined, options.settings),
  };
}

/** The definitions resolved over the local pipeline settings; `undefined` → the one default subscriber. */
export function resolveLocalSubscribers(
  definitions: SubscriberDefinitions | undefined,
  settings: PipelineSettingsInput,
): ResolvedSubscriber[] {
  return resolveSubscribers(
    definitions ?? { [DEFAULT_SUBSCRIBER_NAME]: { entry: DEFAULT_SUBSCRIBER_ENTRY, keyNamespace: '' } },
    settings,
  );
}
