/**
 * Subscriber modules (fanout: `entry` exports `webhookHandlers` and `handler`) can be imported with no
 * environment at all: the local stack imports them for their handlers, and Lambda builds the consumer on
 * the first invocation.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLambdaContext } from '../../../cli/local/lambda-context.ts';
import { ENV, MissingConfigurationError } from '../../../contract/environment.ts';
import type { MessageContext, StatusContext } from '../../../functions/consumer/handler-api.ts';
import { EFFECTS_JOURNAL_VARIABLE } from '../../../functions/examples/subscribers/local-journal.ts';

const MODULES = [
  '../../../functions/consumer.ts',
  '../../../functions/examples/subscribers/bot.ts',
  '../../../functions/examples/subscribers/crm.ts',
  '../../../functions/examples/subscribers/turn-bot.ts',
] as const;

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});

function noConsumerEnvironment(): void {
  for (const name of [ENV.claimTableName, ENV.quarantineQueueUrl, ENV.deliveryQueueUrl]) {
    vi.stubEnv(name, '');
  }
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'SILENT');
}

const context = () =>
  createLambdaContext({ functionName: 'consumer', region: 'eu-west-1', deadlineMs: Date.now() + 30_000 });

describe.each(MODULES)('%s', (path) => {
  it('imports without an environment, and its first invocation names the missing variable', async () => {
    noConsumerEnvironment();
    const module = (await import(path)) as {
      webhookHandlers: object;
      handler: (event: unknown, context: unknown) => Promise<unknown>;
    };

    expect(typeof module.webhookHandlers).toBe('object');
    await expect(module.handler({ Records: [] }, context())).rejects.toThrow(MissingConfigurationError);
    await expect(module.handler({ Records: [] }, context())).rejects.toThrow(ENV.claimTableName);
  });
});

describe('the examples import the package as an app does', () => {
  const EXAMPLES = 'functions/examples';
  const files = readdirSync(EXAMPLES, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(EXAMPLES, file));

  /** What an example may import: the package's handler entry, a file of its own folder, a node built-in. */
  function allowed(specifier: string): boolean {
    if (specifier === 'whatsapp-webhook-dedup/handlers') return true;
    if (specifier.startsWith('./')) return true;
    // The examples' root folder, from a subscriber module: `../crm-ticket-handlers.ts`, never `../../…`.
    if (/^\.\.\/[^./][^/]*$/.test(specifier)) return true;
    const name = specifier.replace(/^node:/, '');
    return specifier.startsWith('node:') && builtinModules.includes(name);
  }

  it.each(files)(
    '%s imports only whatsapp-webhook-dedup/handlers, its own files and node built-ins',
    (file) => {
      const specifiers = [
        ...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\b[^;]*?from\s+'([^']+)'/gms),
      ].map((match) => match[1] as string);
      expect(specifiers.length).toBeGreaterThan(0);
      expect(specifiers.filter((specifier) => !allowed(specifier))).toEqual([]);
    },
  );

  it('the check refuses a repository-internal module', () => {
    expect(allowed('../../../contract/environment.ts')).toBe(false);
    expect(allowed('../../consumer/handler-api.ts')).toBe(false);
    expect(allowed('whatsapp-webhook-dedup')).toBe(false);
    expect(allowed('node:fs')).toBe(true);
  });

  it('the journal variable the examples read is the one the local stack sets', () => {
    expect(EFFECTS_JOURNAL_VARIABLE).toBe(ENV.effectsJournal);
  });
});

describe('example subscribers in the local stack', () => {
  let directory: string | undefined;
  afterEach(() => {
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
    directory = undefined;
  });

  function localJournal(): string {
    directory = mkdtempSync(join(tmpdir(), 'subscriber-modules-'));
    const journal = join(directory, 'effects.journal');
    vi.stubEnv(ENV.effectsJournal, journal);
    return journal;
  }

  const logger = { debug() {}, info() {}, warn() {}, error() {} };

  it('bot handles messages only, and journals each one', async () => {
    const journal = localJournal();
    const { webhookHandlers } = await import('../../../functions/examples/subscribers/bot.ts');

    expect(Object.keys(webhookHandlers)).toEqual(['onMessage']);
    webhookHandlers.onMessage({ key: 'msg:wamid.A', logger } as unknown as MessageContext);
    expect(readFileSync(journal, 'utf8')).toBe('msg:wamid.A\n');
  });

  it('crm journals instead of calling a CRM the local stack does not have', async () => {
    const journal = localJournal();
    const fetch = vi.fn();
    vi.stubGlobal('fetch', fetch);
    const { webhookHandlers } = await import('../../../functions/examples/subscribers/crm.ts');

    await webhookHandlers.onMessage({ key: 'msg:wamid.B', logger } as unknown as MessageContext);
    await webhookHandlers.onStatus({ key: 'st:wamid.B:read', logger } as unknown as StatusContext);

    expect(fetch).not.toHaveBeenCalled();
    expect(readFileSync(journal, 'utf8')).toBe('msg:wamid.B\nst:wamid.B:read\n');
  });

  it('crm opens a ticket through the CRM when deployed (no journal)', async () => {
    vi.stubEnv(ENV.effectsJournal, '');
    const fetch = vi.fn(
      async (_url: string, _init: { headers: Record<string, string> }) => new Response('{}', { status: 201 }),
    );
    vi.stubGlobal('fetch', fetch);
    const { webhookHandlers } = await import('../../../functions/examples/subscribers/crm.ts');

    await webhookHandlers.onMessage({
      key: 'msg:wamid.C',
      logger,
      payload: { id: 'wamid.C', from: '1', type: 'text' },
      event: { entryId: 'waba' },
    } as unknown as MessageContext);

    expect(fetch).toHaveBeenCalledTimes(1);
    expect(fetch.mock.calls[0]?.[1].headers['idempotency-key']).toBe('msg:wamid.C');
  });
});
