/**
 * The installed path (docs/decisions.md, "The installed path is its own CI step"), `npm run test:package` (a CI
 * step after `npm test`: installing a CDK app takes a minute of its own). `npm pack` this package; in a directory
 * outside the repository, install the tarball with its peers at the versions of this repository's
 * package-lock.json; write the README's stack and handler module verbatim; typecheck them and `cdk synth` them.
 * The template must bundle the user's handler into the subscriber's consumers (and not into the receiver),
 * cdk-nag's AwsSolutions pack must find nothing, and the user's bundles must stay as small as this repository's
 * own. The sizes go to lab/bench/results.json (`installedPackage`). Last, the installed bin starts the local stack
 * over the same subscriber, and a signed body sent with it (twice) is effected once.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractEventsOfFile } from '../../cli/keys/keys.ts';
import { LocalStackClient } from '../../cli/local/stack/local-stack-client.ts';
import { buildLambdaBundles } from '../../lab/bench/bundles/lambda-bundles.ts';
import { writeInstalledPackageResults } from '../../lab/bench/package/installed-package-results.ts';
import { lowestVersionsOf } from '../unit/house/node-engines.ts';
import {
  CLI_DIRECTORY,
  engineWarnings,
  installApp,
  installCli,
  installedPackages,
  type PackedPackage,
  packPackage,
  REPOSITORY_ROOT,
  run,
  type SynthesizedFunction,
  startInstalledLocalStack,
  synthesizedFunctions,
  validationViolations,
  writeApp,
} from './installed-app.ts';
import { readmeApp } from './readme-app.ts';

const STACK = 'SupportWebhook';
/** A string of the README's handler module that minification keeps (a log message). */
const HANDLER_MARKER = 'Support ticket opened';

const scratch = mkdtempSync(join(tmpdir(), 'installed-app-'));
const app = join(scratch, 'app');
const { files } = readmeApp();

/** The app's own configuration, as `cdk init` would leave it for an ESM TypeScript app run by tsx. */
const APP_CONFIGURATION = {
  'cdk.json': `${JSON.stringify({ app: 'npx tsx bin/app.ts' }, null, 2)}\n`,
  'tsconfig.json': `${JSON.stringify(
    {
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
      },
      include: ['bin', 'src', 'checks'],
    },
    null,
    2,
  )}\n`,
  // Not in the README: with skipLibCheck, a declaration that failed to resolve would silently be `any` and
  // the README's files would still compile. These lines compile only against the real types.
  'checks/types.ts': `import { Stack } from 'aws-cdk-lib';
import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
import { defineWebhookHandlers, RetryLater } from 'whatsapp-webhook-dedup/handlers';

// @ts-expect-error retentionDays is a number of days
new WhatsAppWebhookDedup(new Stack(), 'Typed', { retentionDays: 'eight' });
defineWebhookHandlers({
  onStatus({ ledger }) {
    const current: string = ledger.current;
    // @ts-expect-error afterSeconds is required
    throw new RetryLater({ reason: current });
  },
});
`,
};

/**
 * The README stack's subscriber as a module of its own, for `whatsapp-webhook-dedup start --subscribers`
 * (the local stack reads definitions from a module; the CDK app above keeps them inline).
 */
const LOCAL_SUBSCRIBERS = `import type { SubscriberDefinitions } from 'whatsapp-webhook-dedup';

export const subscribers: SubscriberDefinitions = {
  support: { entry: 'src/support-handlers.ts', fields: ['messages'] },
};
`;

/** A stack of the installed app whose queue breaks AwsSolutions-SQS3/SQS4: cdk-nag must refuse it. */
const NAG_CONTROL_APP = `import { App, Stack, Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';

const app = new App();
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
new Queue(new Stack(app, 'Control'), 'Bare', { enforceSSL: false });
`;

let packed: PackedPackage;
let packedCli: PackedPackage;
let functions: SynthesizedFunction[];
/** What `npm install whatsapp-webhook-dedup` (and the app's own packages) brought, before the CLI came. */
let withConstructOnly: string[];

beforeAll(async () => {
  packed = await packPackage(scratch);
  packedCli = await packPackage(scratch, CLI_DIRECTORY);
  writeApp(app, {
    ...files,
    ...APP_CONFIGURATION,
    'checks/nag-control.ts': NAG_CONTROL_APP,
    'checks/subscribers.ts': LOCAL_SUBSCRIBERS,
  });
  copyFileSync(
    join(REPOSITORY_ROOT, 'test', 'fixtures', 'webhooks', 'message-text.json'),
    join(app, 'body.json'),
  );
  await installApp(app, packed.tarball);
  withConstructOnly = installedPackages(app);
  await installCli(app, packedCli.tarball);
}, 900_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the package, installed in a CDK app of its own', () => {
  it('ships compiled ESM with declarations only: no TypeScript source, no repository path', () => {
    // npm ships a LICENSE by itself whatever `files` says: here it must be there, MIT as package.json says.
    expect(packed.files).toContain('LICENSE');
    const shipped = packed.files.filter(
      (file) => file !== 'package.json' && file !== 'README.md' && file !== 'LICENSE',
    );
    expect(shipped.length).toBeGreaterThan(20);
    expect(shipped.filter((file) => !file.startsWith('dist/'))).toEqual([]);
    expect(shipped.filter((file) => /(?<!\.d)\.ts$/.test(file))).toEqual([]);
    expect(shipped).toEqual(
      expect.arrayContaining([
        'dist/lib/index.js',
        'dist/lib/index.d.ts',
        'dist/functions/handlers.js',
        'dist/functions/receiver.js',
        'dist/functions/consumer.js',
      ]),
    );
    expect(shipped.filter((file) => file.startsWith('dist/local/') || file.startsWith('dist/ops/'))).toEqual(
      [],
    );
  });

  it('brings in no emulator, dashboard library or patcher with the construct: the CLI brings them', () => {
    const tooling = [
      'fauxqs',
      'chart.js',
      'patch-package',
      '@aws-sdk/client-cloudformation',
      '@aws-sdk/client-lambda',
    ];
    expect(withConstructOnly.filter((name) => tooling.includes(name))).toEqual([]);
    expect(installedPackages(app)).toEqual(
      expect.arrayContaining(['fauxqs', 'chart.js', 'whatsapp-webhook-dedup-cli']),
    );
    expect(packedCli.files).toContain('LICENSE');
    const cliFiles = packedCli.files.filter(
      (file) => file !== 'package.json' && file !== 'README.md' && file !== 'LICENSE',
    );
    // Beside dist/, only the emulator patch the bin's local stack applies (cli/local/emulators/fauxqs-patch.ts).
    expect(cliFiles.filter((file) => !file.startsWith('dist/'))).toEqual(['patches/fauxqs+1.9.2.patch']);
    expect(cliFiles).toContain('dist/local/cli/main.js');
    expect(cliFiles.filter((file) => /(?<!\.d)\.ts$/.test(file))).toEqual([]);
  });

  it('installs with no engine warning on the lowest version of every Node line its engines name', async () => {
    const manifest = (directory: string) =>
      JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as {
        name: string;
        version: string;
        engines: { node: string };
      };
    for (const [tarball, directory] of [
      [packed.tarball, REPOSITORY_ROOT],
      [packedCli.tarball, CLI_DIRECTORY],
    ] as const) {
      for (const version of lowestVersionsOf(manifest(directory).engines.node)) {
        expect(await engineWarnings(scratch, tarball, version), `${tarball} on Node ${version}`).toEqual([]);
      }
    }
    // The same check sees a warning where there is one: the CLI's SQS emulator takes a library that needs 22.
    expect(await engineWarnings(scratch, packedCli.tarball, '20.19.0')).toEqual(
      expect.arrayContaining([
        `${manifest(CLI_DIRECTORY).name}@${manifest(CLI_DIRECTORY).version}`,
        expect.stringMatching(/^cookie@/),
      ]),
    );
  }, 600_000);

  it('typechecks the README stack and handler module against the installed declarations', async () => {
    await expect(run('npx', ['tsc', '-p', '.'], { cwd: app })).resolves.toBeDefined();
  }, 300_000);

  it('synthesises: the subscriber consumers bundle the user handler, cdk-nag finds nothing', async () => {
    await run('npx', ['cdk', 'synth', '--quiet'], { cwd: app });
    const cloudAssembly = join(app, 'cdk.out');
    expect(validationViolations(cloudAssembly)).toEqual([]);
    functions = synthesizedFunctions(cloudAssembly, STACK);
    const withHandler = functions.filter((fn) => fn.bundle.includes(HANDLER_MARKER)).map((fn) => fn.path);
    expect(withHandler.sort()).toEqual([
      `${STACK}/Webhook/SubscriberSupport/Consumer/Resource`,
      `${STACK}/Webhook/SubscriberSupport/MessageConsumer/Resource`,
    ]);
    expect(functions.map((fn) => fn.path)).toContain(`${STACK}/Webhook/Receiver/Resource`);
  }, 300_000);

  it("is checked by a live cdk-nag: the same app's plugin refuses a queue without TLS", async () => {
    await expect(
      run('npx', ['cdk', 'synth', '--quiet', '--app', 'npx tsx checks/nag-control.ts', '-o', 'control.out'], {
        cwd: app,
      }),
    ).rejects.toThrow(/AwsSolutions-SQS4/);
  }, 300_000);

  it("keeps the user's bundles as small as this repository's own, and records the sizes", async () => {
    const ours = Object.fromEntries(
      (await buildLambdaBundles(join(scratch, 'ours'))).map((bundle) => [bundle.name, bundle.bytes]),
    ) as Record<'receiver' | 'consumer', number>;
    const bytesOf = (suffix: string) => {
      const fn = functions.find((candidate) => candidate.path.endsWith(suffix));
      if (fn === undefined) throw new Error(`no function ${suffix}`);
      return fn.bundleBytes;
    };
    const user = {
      receiver: bytesOf('/Webhook/Receiver/Resource'),
      consumer: bytesOf('/SubscriberSupport/Consumer/Resource'),
    };
    // The compiled files bundle to what the sources do, give or take the handlers and tsc's output.
    expect(user.receiver).toBeLessThanOrEqual(ours.receiver * 1.05);
    expect(user.consumer).toBeLessThanOrEqual(ours.consumer * 1.05);
    // No aws-cdk-lib came along: it alone would be megabytes.
    expect(user.consumer).toBeLessThan(1_000_000);
    writeInstalledPackageResults({
      tarballBytes: packed.bytes,
      unpackedBytes: packed.unpackedBytes,
      files: packed.files.length,
      userBundleBytes: user,
      repositoryBundleBytes: ours,
    });
  }, 300_000);

  it('runs the local stack from the installed bin: a signed body sent twice is effected once', async () => {
    const extraction = extractEventsOfFile(join(app, 'body.json'));
    const keys = extraction.ok ? extraction.events.map((event) => event.key) : [];
    expect(keys).toHaveLength(1);
    const stack = await startInstalledLocalStack(app, ['--subscribers', 'checks/subscribers.ts']);
    try {
      const info = await new LocalStackClient(stack.url).info();
      expect(info.subscribers.map(({ name, entry }) => ({ name, entry }))).toEqual([
        { name: 'support', entry: 'src/support-handlers.ts' },
      ]);
      for (let sent = 0; sent < 2; sent += 1) {
        const { stdout } = await run(
          'npx',
          ['--no-install', 'whatsapp-webhook-dedup', 'send', 'body.json', '--url', `${stack.url}/webhook`],
          { cwd: app, timeoutMs: 60_000 },
        );
        expect(stdout).toMatch(/^200 OK/);
      }
      const counts = await new LocalStackClient(stack.url).effectCounts(keys, 30_000, 'support');
      expect(counts, stack.output()).toEqual({ [keys[0] as string]: 1 });
    } finally {
      await stack.stop();
    }
  }, 300_000);
});
