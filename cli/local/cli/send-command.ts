/**
 * `send` (`npm run send`, `whatsapp-webhook-dedup send`) FILE [--url URL] [--secret S]: signs FILE's exact
 * bytes with the app secret and POSTs them to the webhook; prints the answer's status. The secret is --secret,
 * else the first of WHATSAPP_APP_SECRETS, else the local stack's development default. Exit code 0 for a 2xx
 * answer, 1 for a body the receiver quarantined (said in a second line) or any other answer, 2 for a usage
 * error; in this repository the usage lists the sample bodies.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ENV } from 'whatsapp-webhook-dedup/contract/environment';
import { quarantineReasonOf } from 'whatsapp-webhook-dedup/contract/receiver-answers';
import { DEFAULT_PORT } from '../local-stack-api.ts';
import { SEND_SAMPLES } from '../sender/send-samples.ts';
import { sendWebhook } from '../sender/send-webhook.ts';
import { DEV_APP_SECRET } from '../stack/local-config.ts';

/** How this repository's script runs it; the bin passes its own (`whatsapp-webhook-dedup send`). */
export const SEND_PROGRAM = 'npm run send --';

/** This repository's sample bodies, for its usage text (an installed package has none). */
function samples(): string {
  const present = SEND_SAMPLES.filter(({ file }) => existsSync(file));
  if (present.length === 0) return '';
  const width = Math.max(...present.map(({ file }) => file.length));
  return `\nsamples:\n${present.map(({ file, what }) => `  ${file.padEnd(width)}  ${what}`).join('\n')}`;
}

/** `program` is how it was invoked, for the usage line. */
export async function runSend(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  program: string = SEND_PROGRAM,
): Promise<number> {
  try {
    return await send(args, env, program);
  } catch (error) {
    const reason =
      error instanceof Error
        ? error.cause instanceof Error
          ? error.cause.message
          : error.message
        : String(error);
    console.error(`send failed: ${reason}`);
    return 1;
  }
}

async function send(args: readonly string[], env: NodeJS.ProcessEnv, program: string): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      url: { type: 'string', default: `http://localhost:${env.PORT || DEFAULT_PORT}/webhook` },
      secret: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals.length !== 1) {
    console.error(
      `usage: ${program} FILE [--url URL] [--secret S]${program === SEND_PROGRAM ? samples() : ''}`,
    );
    return values.help ? 0 : 2;
  }
  const file = positionals[0] as string;
  const secret = values.secret ?? env[ENV.appSecrets]?.split(',')[0]?.trim() ?? DEV_APP_SECRET;
  const body = await readFile(file);
  const result = await sendWebhook(body, { url: values.url, appSecret: secret || DEV_APP_SECRET });
  const excerpt = result.body.length > 200 ? `${result.body.slice(0, 200)}…` : result.body;
  console.log(
    `${result.status} ${result.statusText} (${body.length} bytes, ${Math.round(result.durationMs)} ms)${excerpt ? ` ${excerpt}` : ''}`,
  );
  const quarantined = quarantineReasonOf(result.body);
  if (quarantined !== undefined) {
    console.log(
      `The receiver kept this body in the quarantine queue (${quarantined}): Meta would get its 200, and no ` +
        'handler runs. See it with: npm run ops -- quarantine list',
    );
    return 1;
  }
  return result.status >= 200 && result.status < 300 ? 0 : 1;
}
