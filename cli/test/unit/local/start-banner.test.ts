import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runSend } from '../../../local/cli/send-command.ts';
import { SEND_SAMPLES } from '../../../local/sender/send-samples.ts';
import { readLocalConfig } from '../../../local/stack/local-config.ts';
import type { LocalStack } from '../../../local/stack/local-stack.ts';
import { startBanner } from '../../../local/stack/start-banner.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const stack = {
  url: 'http://localhost:3000',
  port: 3000,
  info: {
    dynamodbEndpoint: 'http://127.0.0.1:1',
    sqsEndpoint: 'http://127.0.0.1:2',
    tableName: 'claims',
    quarantineQueueUrl: 'http://127.0.0.1:2/q',
    subscribersSource: 'bin/subscribers.ts',
    subscribers: [],
  },
} as unknown as LocalStack;

afterEach(() => vi.restoreAllMocks());

describe('the send samples', () => {
  it('are bodies of this repository, a username customer without a phone number among them', () => {
    for (const { file } of SEND_SAMPLES) expect(existsSync(`${ROOT}${file}`), file).toBe(true);
    expect(SEND_SAMPLES.map(({ file }) => file)).toContain(
      'test/fixtures/webhooks/message-text-username.json',
    );
  });

  it("are offered by npm start's banner: a phone-number customer and a username one", () => {
    const banner = startBanner({ stack, config: readLocalConfig({}), startedInMs: 1_000 });
    const sends = banner.split('\n').filter((line) => line.includes('npm run send'));
    expect(sends).toEqual([
      '  npm run send -- test/fixtures/webhooks/message-text.json    # a customer with a phone number',
      '  npm run send -- test/fixtures/webhooks/message-text-username.json    # a customer with a username and no phone number (BSUID only)',
    ]);
  });

  it("are not offered by an installed package's banner, which has no fixtures", () => {
    const banner = startBanner({
      stack,
      config: readLocalConfig({}),
      startedInMs: 1_000,
      sendCommand: 'npx whatsapp-webhook-dedup send BODY.json',
    });
    expect(banner).toContain('  npx whatsapp-webhook-dedup send BODY.json\n');
    expect(banner).not.toContain('fixtures');
  });

  it("are listed by npm run send's usage", async () => {
    const printed: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => printed.push(args.join(' ')));
    expect(await runSend([])).toBe(2);
    for (const { file } of SEND_SAMPLES) expect(printed.join('\n')).toContain(file);
    printed.length = 0;
    expect(await runSend([], {}, 'whatsapp-webhook-dedup send')).toBe(2);
    expect(printed.join('\n')).not.toContain('fixtures');
  });
});

describe("the banner's subscriber lines", () => {
  const subscriber = {
    name: 'brazil',
    entry: 'src/brazil.ts',
    fields: ['messages'],
    numbers: null,
    wabas: null,
    keyNamespace: 'brazil',
    handlers: ['onMessage'],
    queueUrl: 'http://127.0.0.1:2/brazil',
    dlqUrl: 'http://127.0.0.1:2/brazil-dlq',
    settings: readLocalConfig({}).settings,
  };
  const headOf = (info: object) =>
    startBanner({
      stack: { ...stack, info: { ...stack.info, subscribers: [{ ...subscriber, ...info }] } } as LocalStack,
      config: readLocalConfig({}),
      startedInMs: 1_000,
    })
      .split('\n')
      .find((line) => line.startsWith('    brazil  '));

  it('name the numbers and accounts a subscriber is limited to, and nothing when it is not', () => {
    expect(headOf({})).toBe('    brazil  src/brazil.ts (onMessage), fields messages, keys brazil#…');
    expect(headOf({ numbers: ['201', '202'], wabas: ['100'] })).toBe(
      '    brazil  src/brazil.ts (onMessage), fields messages, numbers 201, 202, wabas 100, keys brazil#…',
    );
  });
});
