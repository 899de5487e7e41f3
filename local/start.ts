/**
 * npm start: the local stack (docs/local.md). Configuration from the environment: PORT,
 * WHATSAPP_APP_SECRETS (comma-separated), WHATSAPP_VERIFY_TOKEN, and LOCAL_* tuning variables.
 */
import './silence-sdk-node-version-warning.ts';
import { JavaNotFoundError } from './emulators/dynamodb-local.ts';
import { readLocalConfig } from './stack/local-config.ts';
import { type LocalStack, PortInUseError, startLocalStack } from './stack/local-stack.ts';
import { startBanner } from './stack/start-banner.ts';

async function main(): Promise<void> {
  const config = readLocalConfig();
  const startedAt = Date.now();
  console.error('Starting the local stack (DynamoDB Local, SQS emulator, receiver, consumer)…');
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
  stack = await startLocalStack({ config });
  if (stopping) {
    await stack.stop();
    return;
  }
  console.error(startBanner({ stack, config, startedInMs: Date.now() - startedAt }));
}

main().catch((error: unknown) => {
  if (error instanceof PortInUseError || error instanceof JavaNotFoundError) {
    console.error(`npm start: ${error.message}`);
  } else {
    console.error('npm start failed:', error);
  }
  process.exit(1);
});
