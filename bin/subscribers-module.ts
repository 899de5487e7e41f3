/**
 * Which subscribers the CDK app deploys: those of `bin/subscribers.ts`, or of the module `-c subscribers=PATH`
 * names (a path from the app's directory), the same module `whatsapp-webhook-dedup start --subscribers PATH`
 * runs locally.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SubscriberDefinitions } from 'whatsapp-webhook-dedup';

export async function loadSubscribers(
  modulePath: string | undefined,
): Promise<SubscriberDefinitions | undefined> {
  if (modulePath === undefined) return (await import('./subscribers.ts')).subscribers;
  const file = resolve(modulePath);
  if (!existsSync(file)) throw new Error(`-c subscribers=${modulePath}: no such module (${file}).`);
  const module = (await import(pathToFileURL(file).href)) as { subscribers?: SubscriberDefinitions };
  if (!('subscribers' in module))
    throw new Error(`-c subscribers=${modulePath}: the module exports no subscribers.`);
  return module.subscribers;
}
