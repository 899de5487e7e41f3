/**
 * npm run send -- FILE [--url URL] [--secret S]
 *
 * Signs FILE's exact bytes with the app secret and POSTs them to the webhook; prints the answer's status.
 * The secret is --secret, else the first of WHATSAPP_APP_SECRETS, else the local stack's development default.
 * Exit code 0 for a 2xx answer, 1 otherwise.
 */
import './silence-sdk-node-version-warning.ts';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ENV } from '../contract/environment.ts';
import { sendWebhook } from './sender/send-webhook.ts';
import { DEFAULT_PORT, DEV_APP_SECRET } from './stack/local-config.ts';

const USAGE = 'usage: npm run send -- FILE [--url URL] [--secret S]';

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string', default: `http://localhost:${process.env.PORT || DEFAULT_PORT}/webhook` },
      secret: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals.length !== 1) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const file = positionals[0] as string;
  const secret = values.secret ?? process.env[ENV.appSecrets]?.split(',')[0]?.trim() ?? DEV_APP_SECRET;
  const body = await readFile(file);
  const result = await sendWebhook(body, { url: values.url, appSecret: secret || DEV_APP_SECRET });
  const excerpt = result.body.length > 200 ? `${result.body.slice(0, 200)}…` : result.body;
  console.log(
    `${result.status} ${result.statusText} (${body.length} bytes, ${Math.round(result.durationMs)} ms)${excerpt ? ` ${excerpt}` : ''}`,
  );
  return result.status >= 200 && result.status < 300 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const reason =
      error instanceof Error
        ? error.cause instanceof Error
          ? error.cause.message
          : error.message
        : String(error);
    console.error(`send failed: ${reason}`);
    process.exit(1);
  },
);
