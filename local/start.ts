/**
 * npm start: the local stack (docs/local.md). Configuration from the environment: PORT,
 * WHATSAPP_APP_SECRETS (comma-separated), WHATSAPP_VERIFY_TOKEN, LOCAL_SUBSCRIBERS (a module exporting
 * `subscribers`, instead of bin/subscribers.ts), and LOCAL_* tuning variables.
 */
import './silence-sdk-node-version-warning.ts';
import { fileURLToPath } from 'node:url';
import { UnsafeSettingsError } from '../contract/settings.ts';
import { JavaNotFoundError } from './emulators/dynamodb-local.ts';
import { SubscriberModuleError } from './stack/consumer-runtime.ts';
import { readLocalConfig } from './stack/local-config.ts';
import { type LocalStack, PortInUseError, startLocalStack } from './stack/local-stack.ts';
import { loadLocalSubscribers } from './stack/local-subscribers.ts';
import { startBanner } from './stack/start-banner.ts';

async function main(): Promise<void> {
  const config = readLocalConfig();
  const subscribers = await loadLocalSubscribers({
    root: fileURLToPath(new URL('../', import.meta.url)),
    settings: config.settingsInput,
    env: process.env,
  });
  const startedAt = Date.now();
  const consumers = subscribers.subscribers.length;
  console.error(
    `Starting the local stack (DynamoDB Local, SQS emulator, receiver, ${consumers === 1 ? 'consumer' : `${consumers} consumers`})…`,
  );
  let stack: LocalStack | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`\n${signal}: stopping the local stack…`);
    await stack?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  stack = await startLocalStack({ config, subscribers });
  if (stopping) {
    await stack.stop();
    return;
  }
  console.error(startBanner({ stack, config, startedInMs: Date.now() - startedAt }));
}

main().catch((error: unknown) => {
  if (
    error instanceof PortInUseError ||
    error instanceof JavaNotFoundError ||
    error instanceof UnsafeSettingsError ||
    error instanceof SubscriberModuleError
  ) {
    console.error(`npm start: ${error.message}`);
  } else {
    console.error('npm start failed:', error);
  }
  process.exit(1);
});
