/**
 * The package's bin for a user's app (docs/local.md, "Running the local stack for your own app"):
 * `whatsapp-webhook-dedup start --subscribers infra/subscribers.ts` in a project of its own, outside this
 * repository, whose subscriber is TypeScript importing the package by name; `whatsapp-webhook-dedup send`
 * posts a signed body; the project's handler defers it once with the package's RetryLater (the class the
 * local consumer checks, not a bundled copy), then effects it once, and /local/effects shows it once.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractEventsOfFile } from '../../keys/keys.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import { type SpawnedLocalStack, spawnLocalStack } from '../../local/stack/spawn-local-stack.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'cli', 'local', 'cli', 'main.ts');
const BODY = join(ROOT, 'test', 'fixtures', 'webhooks', 'message-text.json');
const project = mkdtempSync(join(tmpdir(), 'user-app-'));
const handlerEffects = join(project, 'handler-effects.log');
let stack: SpawnedLocalStack;

/** A CDK app's layout: its subscribers module where its app imports it from, its handlers in src/. */
function writeProject(): void {
  // The app's dependencies: this repository's (the package's own are among them); the package itself is
  // resolved to its sources by the app's tsconfig paths, as this repository's example app does.
  symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        paths: {
          'whatsapp-webhook-dedup': [join(ROOT, 'lib', 'index.ts')],
          'whatsapp-webhook-dedup/handlers': [join(ROOT, 'functions', 'handlers.ts')],
          // The CLI's imports of the construct, as installed it finds them in node_modules.
          'whatsapp-webhook-dedup/*': [join(ROOT, '*.ts')],
        },
      },
    }),
  );
  mkdirSync(join(project, 'infra'));
  writeFileSync(
    join(project, 'infra', 'subscribers.ts'),
    `import type { SubscriberDefinitions } from 'whatsapp-webhook-dedup';
export const subscribers = {
  orders: { entry: 'src/orders.ts', fields: ['messages'] },
} satisfies SubscriberDefinitions;
`,
  );
  mkdirSync(join(project, 'src'));
  writeFileSync(
    join(project, 'src', 'orders.ts'),
    `import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import {
  createConsumerFromEnv,
  defineWebhookHandlers,
  type MessageContext,
  RetryLater,
} from 'whatsapp-webhook-dedup/handlers';

const journal = process.env.HANDLER_EFFECTS as string;

/** Defers each order once (the package's RetryLater), then records it. */
function recordOrder({ key }: MessageContext): void {
  const seen = existsSync(journal) ? readFileSync(journal, 'utf8').split('\\n') : [];
  if (!seen.includes(\`deferred \${key}\`)) {
    appendFileSync(journal, \`deferred \${key}\\n\`);
    throw new RetryLater({ afterSeconds: 0, reason: 'e2e' });
  }
  appendFileSync(journal, \`\${key}\\n\`);
}

export const webhookHandlers = defineWebhookHandlers({ onMessage: recordOrder });
export const handler = createConsumerFromEnv(webhookHandlers);
`,
  );
}

beforeAll(async () => {
  writeProject();
  stack = await spawnLocalStack({
    cwd: project,
    args: ['--subscribers', 'infra/subscribers.ts'],
    env: { HANDLER_EFFECTS: handlerEffects },
  });
});

afterAll(async () => {
  await stack?.stop();
  rmSync(project, { recursive: true, force: true });
});

function runCli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', CLI, ...args],
      { cwd: project, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('whatsapp-webhook-dedup start and send, in a user’s project', () => {
  it('runs the project’s subscriber from its own configuration', async () => {
    const info = await new LocalStackClient(stack.url).info();
    expect(info.subscribers.map(({ name, entry, fields }) => ({ name, entry, fields }))).toEqual([
      { name: 'orders', entry: 'src/orders.ts', fields: ['messages'] },
    ]);
  });

  it('effects a signed body sent with the CLI once, through the project’s handler and its RetryLater', async () => {
    const extraction = extractEventsOfFile(BODY);
    const keys = extraction.ok ? extraction.events.map((event) => event.key) : [];
    expect(keys).toHaveLength(1);

    const sent = await runCli(['send', BODY, '--url', `${stack.url}/webhook`]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/^200 OK/);

    const client = new LocalStackClient(stack.url);
    expect(await client.effectCounts(keys, 20_000, 'orders')).toEqual({ [keys[0] as string]: 1 });
    expect(readFileSync(handlerEffects, 'utf8')).toBe(`deferred ${keys[0]}\n${keys[0]}\n`);
    // The handler's RetryLater is the consumer's own class: a deferral, not a handler error.
    const totals = (await client.stats()).subscribers.orders?.totals;
    expect(totals?.counters['RetriesDeferred/message']).toBe(1);
    expect(totals?.byField.message?.handlerErrors).toBe(0);
  });
});
