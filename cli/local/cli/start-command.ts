/**
 * `start` (`npm start`, `whatsapp-webhook-dedup start`): the local stack over the subscribers of the
 * project in the working directory (docs/local.md). Options: `--subscribers PATH` (a module exporting
 * `subscribers`, default `LOCAL_SUBSCRIBERS`, else bin/subscribers.ts), `--host ADDRESS` (where the HTTP
 * server listens, default `LOCAL_HOST`, else 127.0.0.1: this machine only); the rest from the environment: PORT,
 * WHATSAPP_APP_SECRETS (comma-separated), WHATSAPP_VERIFY_TOKEN and the LOCAL_* tuning variables.
 * Resolves once the stack stopped (SIGINT, SIGTERM) with the exit code: 0, 1 when it could not start, 2 for
 * a usage error or a subscribers module that does not exist.
 */
import { parseArgs } from 'node:util';
import { UnsafeSettingsError } from 'whatsapp-webhook-dedup/contract/settings';
import { JavaNotFoundError } from '../emulators/dynamodb-local.ts';
import { ensureFauxqsPatched, FauxqsPatchError } from '../emulators/fauxqs-patch.ts';
import { SubscriberModuleError } from '../stack/consumer-runtime.ts';
import { LOCAL_ENV, readLocalConfig } from '../stack/local-config.ts';
import type { LocalStack } from '../stack/local-stack.ts';
import { loadLocalSubscribers, SubscribersModuleNotFoundError } from '../stack/local-subscribers.ts';
import { startBanner } from '../stack/start-banner.ts';

export interface StartOptions {
  /** How the user called it, for the one-line errors (`npm start`, `whatsapp-webhook-dedup start`). */
  readonly commandName: string;
  /** The start banner's send line. @default this repository's `npm run send` with a fixture */
  readonly sendCommand?: string;
}

const USAGE = (commandName: string) => `usage: ${commandName} [--subscribers PATH] [--host ADDRESS]`;

export async function runStart(args: readonly string[], options: StartOptions): Promise<number> {
  const { commandName } = options;
  let subscribersModule: string | undefined;
  let host: string | undefined;
  try {
    const { values } = parseArgs({
      args: [...args],
      options: {
        subscribers: { type: 'string' },
        host: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) {
      console.error(USAGE(commandName));
      return 0;
    }
    subscribersModule = values.subscribers;
    host = values.host;
  } catch (error) {
    console.error(
      `${commandName}: ${error instanceof Error ? error.message : String(error)}\n${USAGE(commandName)}`,
    );
    return 2;
  }
  try {
    return await startUntilStopped(subscribersModule, host, options.sendCommand);
  } catch (error) {
    if (error instanceof SubscribersModuleNotFoundError) {
      console.error(`${commandName}: ${error.message}`);
      return 2;
    }
    if (
      (error instanceof Error && (error.name === 'PortInUseError' || error.name === 'LocalHostError')) ||
      error instanceof FauxqsPatchError ||
      error instanceof JavaNotFoundError ||
      error instanceof UnsafeSettingsError ||
      error instanceof SubscriberModuleError
    ) {
      console.error(`${commandName}: ${error.message}`);
    } else {
      console.error(`${commandName} failed:`, error);
    }
    return 1;
  }
}

async function startUntilStopped(
  subscribersModule: string | undefined,
  host: string | undefined,
  sendCommand: string | undefined,
): Promise<number> {
  const config = readLocalConfig(
    host === undefined ? process.env : { ...process.env, [LOCAL_ENV.host]: host },
  );
  const subscribers = await loadLocalSubscribers({
    projectRoot: process.cwd(),
    module: subscribersModule,
    settings: config.settingsInput,
    env: process.env,
  });
  const patch = ensureFauxqsPatched();
  if (patch.outcome === 'applied')
    console.error(`Patched fauxqs at ${patch.directory} (docs/local.md, Emulator fidelity).`);
  // Only now: the stack imports fauxqs, which must be loaded patched.
  const { startLocalStack } = await import('../stack/local-stack.ts');
  const startedAt = Date.now();
  const consumers = subscribers.subscribers.length;
  console.error(
    `Starting the local stack (DynamoDB Local, SQS emulator, receiver, ${consumers === 1 ? 'consumer' : `${consumers} consumers`})…`,
  );
  let stopRequested: ((signal: string) => void) | undefined;
  const stopSignal = new Promise<string>((resolve) => {
    stopRequested = resolve;
  });
  const onSignal = (signal: string) => stopRequested?.(signal);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let stack: LocalStack | undefined;
  try {
    // A signal while starting ends the command at once: the caller exits, and the emulators' reapers stop
    // whatever had already started.
    const started = await Promise.race([
      startLocalStack({ config, subscribers }),
      stopSignal.then(() => undefined),
    ]);
    if (started === undefined) return 0;
    stack = started;
    console.error(
      startBanner({
        stack,
        config,
        startedInMs: Date.now() - startedAt,
        sendCommand,
      }),
    );
    const signal = await stopSignal;
    console.error(`\n${signal}: stopping the local stack…`);
    return 0;
  } finally {
    await stack?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
