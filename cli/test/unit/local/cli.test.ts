/**
 * The bin's dispatch and how `start` finds a project's subscribers: the module named by --subscribers (else
 * LOCAL_SUBSCRIBERS, else bin/subscribers.ts) and the entries, both from the project root, compiled by esbuild.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { BIN_USAGE, dispatchCommand } from '../../../local/cli/dispatch.ts';
import { runStart } from '../../../local/cli/start-command.ts';
import {
  loadLocalSubscribers,
  SubscribersModuleNotFoundError,
} from '../../../local/stack/local-subscribers.ts';
import { ProjectModuleError } from '../../../local/stack/project-modules.ts';

const project = mkdtempSync(join(tmpdir(), 'cli-project-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

function write(path: string, text: string): string {
  const absolute = join(project, path);
  mkdirSync(join(absolute, '..'), { recursive: true });
  writeFileSync(absolute, text);
  return absolute;
}

/** The lines `start` printed with console.error, and its exit code. */
async function start(args: readonly string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => {
    lines.push(...parts.map(String).join(' ').split('\n'));
  });
  const code = await runStart(args, { commandName: 'whatsapp-webhook-dedup start' });
  return { code, lines };
}

describe('the bin', () => {
  it('lists its five commands, and refuses another one with exit code 2', async () => {
    const written: string[] = [];
    const stderr = { write: (text: string) => written.push(text) };
    expect(await dispatchCommand(['deploy'], stderr)).toBe(2);
    expect(written.join('')).toMatch(/^whatsapp-webhook-dedup: unknown command deploy\n/);
    expect(
      BIN_USAGE.split('\n')
        .slice(1)
        .map((line) => line.trim().split(' ')[0]),
    ).toEqual(['start', 'send', 'outage-drill', 'keys', 'ops']);
    expect(await dispatchCommand(['--help'], stderr)).toBe(0);
  });
});

describe('each command’s usage names the way it was invoked', () => {
  /** Everything a command wrote to stdout, stderr and console.error while it ran, and its exit code. */
  async function captured(run: () => Promise<number> | number): Promise<{ code: number; text: string }> {
    const parts: string[] = [];
    const capture = (chunk: unknown) => {
      parts.push(String(chunk));
      return true;
    };
    vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => capture(`${args.join(' ')}\n`));
    try {
      return { code: await run(), text: parts.join('') };
    } finally {
      vi.restoreAllMocks();
    }
  }

  const CASES = [
    {
      command: 'outage-drill',
      args: ['--help'],
      code: 0,
      usage: 'npm run outage-drill -- [options]',
      bin: 'outage-drill [options]',
    },
    { command: 'keys', args: [], code: 2, usage: 'usage: npm run keys -- FILE', bin: 'keys FILE' },
    { command: 'send', args: [], code: 2, usage: 'usage: npm run send -- FILE', bin: 'send FILE' },
    {
      command: 'ops',
      args: ['--help'],
      code: 0,
      usage: 'usage: npm run ops -- [--local URL',
      bin: 'ops [--local URL',
    },
  ] as const;

  it.each(CASES)(
    '$command: `whatsapp-webhook-dedup $command` from the bin',
    async ({ command, args, code, bin }) => {
      const result = await captured(() => dispatchCommand([command, ...args]));

      expect(result.code).toBe(code);
      expect(result.text).toContain(`whatsapp-webhook-dedup ${bin}`);
      expect(result.text).not.toContain('npm run');
    },
  );

  it.each(CASES)(
    '$command: `npm run $command --` from the npm script',
    async ({ command, args, code, usage }) => {
      const run = {
        'outage-drill': async () =>
          (await import('../../../outage-drill/outage-drill.ts')).runOutageDrill(args),
        keys: async () => (await import('../../../keys/keys.ts')).runKeysCli(args, process),
        send: async () => (await import('../../../local/cli/send-command.ts')).runSend(args),
        ops: async () => (await import('../../../ops/run-ops.ts')).runOps(args, process),
      }[command];
      const result = await captured(run);

      expect(result.code).toBe(code);
      expect(result.text).toContain(usage);
      expect(result.text).not.toContain('whatsapp-webhook-dedup');
    },
  );

  it('ops names the bin in its hints to --help too', async () => {
    const result = await captured(() => dispatchCommand(['ops']));

    expect(result).toEqual({
      code: 2,
      text: 'ops: no command given (whatsapp-webhook-dedup ops --help lists them)\n',
    });
  });
});

describe('start, finding the subscribers', () => {
  it('ends with one line and exit code 2 when the subscribers module does not exist', async () => {
    const missing = join(project, 'infra', 'nowhere.ts');
    const { code, lines } = await start(['--subscribers', missing]);
    expect(code).toBe(2);
    expect(lines).toEqual([
      `whatsapp-webhook-dedup start: No subscribers module at ${missing} (from ${process.cwd()}): pass --subscribers PATH, the module exporting the subscribers your CDK app gives the construct.`,
    ]);
  });

  it('ends with one line and exit code 1 when the module exports no subscribers', async () => {
    const module = write('infra/no-subscribers.ts', 'export const handlers: string[] = [];\n');
    const { code, lines } = await start(['--subscribers', module]);
    expect(code).toBe(1);
    expect(lines).toEqual([
      `whatsapp-webhook-dedup start: ${module} must export subscribers (SubscriberDefinitions, or undefined for the default subscriber).`,
    ]);
  });

  it('refuses an unknown option with its usage and exit code 2', async () => {
    const { code, lines } = await start(['--subscriber', 'x.ts']);
    expect(code).toBe(2);
    expect(lines.at(-1)).toBe('usage: whatsapp-webhook-dedup start [--subscribers PATH] [--host ADDRESS]');
  });

  it('takes --host ADDRESS, and refuses it without one', async () => {
    const { code, lines } = await start(['--host']);
    expect(code).toBe(2);
    expect(lines[0]).toMatch(/^whatsapp-webhook-dedup start: Option '--host <value>' argument missing/);
    expect(lines.at(-1)).toBe('usage: whatsapp-webhook-dedup start [--subscribers PATH] [--host ADDRESS]');
  });

  it('reads bin/subscribers.ts of the project by default, and says so when there is none', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'cli-empty-'));
    try {
      await expect(loadLocalSubscribers({ projectRoot: empty, settings: {} })).rejects.toThrow(
        new SubscribersModuleNotFoundError('bin/subscribers.ts', empty),
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('compiles the module and the entries from the project root, --subscribers over LOCAL_SUBSCRIBERS', async () => {
    write(
      'config/subscribers.ts',
      `enum Lane { Orders = 'orders' }
export const subscribers = { [Lane.Orders]: { entry: 'handlers/orders.ts', fields: ['messages'] } };
`,
    );
    write(
      'handlers/orders.ts',
      `const seen: string[] = [];
// CommonJS in the project's code works as in the Lambda bundle, whose banner defines require.
const { posix } = require('node:path');
export const webhookHandlers = { onMessage: ({ key }: { key: string }) => void seen.push(posix.basename(key)), seen };
`,
    );
    const loaded = await loadLocalSubscribers({
      projectRoot: project,
      module: 'config/subscribers.ts',
      settings: {},
      env: { LOCAL_SUBSCRIBERS: 'elsewhere.ts' },
    });
    expect(loaded.source).toBe('config/subscribers.ts');
    expect(loaded.subscribers.map(({ name, entry }) => [name, entry])).toEqual([
      ['orders', 'handlers/orders.ts'],
    ]);
    const module = await loaded.importModule(loaded.subscribers[0] as never);
    const handlers = module.webhookHandlers as { onMessage(context: { key: string }): void; seen: string[] };
    handlers.onMessage({ key: 'keys/msg:a' });
    expect(handlers.seen).toEqual(['msg:a']);
  });

  it('names the file and line of an entry that does not compile', async () => {
    write(
      'broken/subscribers.ts',
      "export const subscribers = { broken: { entry: 'broken/handlers.ts' } };\n",
    );
    write('broken/handlers.ts', 'export const webhookHandlers = {\n  onMessage(: string) {}\n};\n');
    const loaded = await loadLocalSubscribers({
      projectRoot: project,
      module: 'broken/subscribers.ts',
      settings: {},
    });
    await expect(
      loaded.importModule({ name: 'broken', entry: 'broken/handlers.ts', forward: undefined }),
    ).rejects.toThrow(/^broken\/handlers\.ts:2: /);
    await expect(
      loaded.importModule({ name: 'broken', entry: 'broken/handlers.ts', forward: undefined }),
    ).rejects.toThrow(ProjectModuleError);
  });
});
