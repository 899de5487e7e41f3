/**
 * The fauxqs patch where a user's app installs this package (cli/local/emulators/fauxqs-patch.ts): fauxqs
 * hoisted to the app's node_modules, or nested under the package's own when the app has another version.
 * Each layout gets fauxqs 1.9.2 as published (the repository's patched copy with the patch reversed); the
 * hoisted one is then run: the emoji body and the FIFO group receive the patch exists for
 * (test/integration/emulators/sqs.test.ts and sqs-fifo-receive.test.ts), against an unpatched copy that
 * shows both deviations.
 */
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ensureFauxqsPatched,
  FAUXQS_VERSION,
  FauxqsPatchError,
} from '../../../cli/local/emulators/fauxqs-patch.ts';
import { TEST_CREDENTIALS, TEST_REGION } from '../../support/aws-clients.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PATCH = join(ROOT, 'cli', 'patches', `fauxqs+${FAUXQS_VERSION}.patch`);
// Inside the repository's node_modules, so that the copies' own dependencies (fastify, the SDK) resolve.
const BASE = join(ROOT, 'node_modules', '.cache', 'fauxqs-patch-test', randomUUID());
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops) await stop();
  rmSync(BASE, { recursive: true, force: true });
});

const patchPackage = createRequire(import.meta.url);
const { parsePatchFile } = patchPackage('patch-package/dist/patch/parse') as {
  parsePatchFile(text: string): unknown;
};
const { reversePatch } = patchPackage('patch-package/dist/patch/reverse') as {
  reversePatch(patch: unknown): unknown;
};
const { executeEffects } = patchPackage('patch-package/dist/patch/apply') as {
  executeEffects(patch: unknown, options: { dryRun: boolean; cwd: string; bestEffort: boolean }): void;
};

/** fauxqs 1.9.2 as published, into `nodeModules`/fauxqs. */
function installPublishedFauxqs(nodeModules: string): string {
  const directory = join(nodeModules, 'fauxqs');
  cpSync(join(ROOT, 'node_modules', 'fauxqs'), directory, { recursive: true });
  executeEffects(reversePatch(parsePatchFile(readFileSync(PATCH, 'utf8'))), {
    dryRun: false,
    cwd: dirname(nodeModules),
    bestEffort: false,
  });
  return directory;
}

function writePackage(directory: string, manifest: object): void {
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'package.json'), JSON.stringify(manifest));
}

/** An app with this package installed: returns where its compiled emulator modules would be. */
function appWithPackage(app: string): string {
  writePackage(app, { name: 'user-app', private: true });
  const installed = join(app, 'node_modules', 'whatsapp-webhook-dedup-cli');
  writePackage(installed, { name: 'whatsapp-webhook-dedup-cli', version: '0.1.0' });
  return join(installed, 'dist', 'local', 'emulators');
}

/** Starts the fauxqs of `directory` in this process; an SQS client on it. */
async function runFauxqs(directory: string): Promise<SQSClient> {
  const { startFauxqs } = (await import(pathToFileURL(join(directory, 'dist', 'app.js')).href)) as {
    startFauxqs(options: {
      port: number;
      logger: boolean;
    }): Promise<{ address: string; stop(): Promise<void> }>;
  };
  const server = await startFauxqs({ port: 0, logger: false });
  const sqs = new SQSClient({ endpoint: server.address, region: TEST_REGION, credentials: TEST_CREDENTIALS });
  stops.push(async () => {
    sqs.destroy();
    await server.stop();
  });
  return sqs;
}

/** What the patch changes: does an emoji body pass, and how many of a group's messages does one receive take? */
async function deviations(sqs: SQSClient) {
  const { QueueUrl: standard } = await sqs.send(new CreateQueueCommand({ QueueName: 'plain' }));
  const emoji = await sqs.send(new SendMessageCommand({ QueueUrl: standard, MessageBody: 'ok 👍' })).then(
    () => 'accepted',
    (error: Error) => error.name,
  );
  const { QueueUrl: fifo } = await sqs.send(
    new CreateQueueCommand({
      QueueName: 'lane.fifo',
      Attributes: {
        FifoQueue: 'true',
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
      },
    }),
  );
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: fifo,
      Entries: ['1', '2', '3'].map((body) => ({
        Id: `m${body}`,
        MessageBody: body,
        MessageGroupId: 'conversation',
        MessageDeduplicationId: `d${body}`,
      })),
    }),
  );
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: fifo, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
  );
  return { emoji, groupReceive: (Messages ?? []).map((message) => message.Body) };
}

describe('the fauxqs patch in a user’s app', () => {
  it('patches fauxqs hoisted to the app’s node_modules, once, and it then behaves as SQS', async () => {
    const from = appWithPackage(join(BASE, 'hoisted'));
    const fauxqs = installPublishedFauxqs(join(BASE, 'hoisted', 'node_modules'));
    const unpatched = installPublishedFauxqs(join(BASE, 'unpatched', 'node_modules'));

    expect(ensureFauxqsPatched({ from })).toEqual({ directory: fauxqs, outcome: 'applied' });
    expect(ensureFauxqsPatched({ from })).toEqual({ directory: fauxqs, outcome: 'already-applied' });

    expect(await deviations(await runFauxqs(unpatched))).toEqual({
      emoji: 'AWS.SimpleQueueService.InvalidMessageContents',
      groupReceive: ['1'],
    });
    expect(await deviations(await runFauxqs(fauxqs))).toEqual({
      emoji: 'accepted',
      groupReceive: ['1', '2', '3'],
    });
  });

  it('patches the package’s own nested fauxqs and leaves the app’s other version alone', () => {
    const app = join(BASE, 'nested');
    const from = appWithPackage(app);
    writePackage(join(app, 'node_modules', 'fauxqs'), { name: 'fauxqs', version: '2.4.1' });
    const nested = installPublishedFauxqs(
      join(app, 'node_modules', 'whatsapp-webhook-dedup-cli', 'node_modules'),
    );

    expect(ensureFauxqsPatched({ from })).toEqual({ directory: nested, outcome: 'applied' });
    expect(readFileSync(join(nested, 'dist', 'sqs', 'sqsTypes.js'), 'utf8')).toContain('\\u{10FFFF}]/u;');
    expect(readFileSync(join(app, 'node_modules', 'fauxqs', 'package.json'), 'utf8')).toBe(
      JSON.stringify({ name: 'fauxqs', version: '2.4.1' }),
    );
  });

  it('refuses another fauxqs version with one line naming the one it needs', () => {
    const app = join(BASE, 'other-version');
    const from = appWithPackage(app);
    writePackage(join(app, 'node_modules', 'fauxqs'), { name: 'fauxqs', version: '2.4.1' });

    expect(() => ensureFauxqsPatched({ from })).toThrow(FauxqsPatchError);
    expect(() => ensureFauxqsPatched({ from })).toThrow(
      /fauxqs 2\.4\.1 is installed .* needs fauxqs 1\.9\.2/,
    );
  });
});
