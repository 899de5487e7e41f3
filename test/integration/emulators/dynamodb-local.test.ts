/**
 * The DynamoDB Local launcher: first-use installation (verified, safe across processes), start on a chosen
 * port, stop that really ends the JVM, and the error a machine without Java gets.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import getPort from 'get-port';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_DYNAMODB_LOCAL_DIRECTORY,
  ensureDynamoDbLocal,
  JavaNotFoundError,
  startDynamoDbLocal,
} from '../../../cli/local/emulators/dynamodb-local.ts';
import { createDynamoDbClient, TEST_CREDENTIALS, TEST_REGION } from '../../support/aws-clients.ts';

const execFileAsync = promisify(execFile);
const LAUNCHER = fileURLToPath(new URL('../../../cli/local/emulators/dynamodb-local.ts', import.meta.url));
const scratch: string[] = [];

afterAll(async () => {
  await Promise.all(scratch.map((directory) => rm(directory, { recursive: true, force: true })));
});

describe('DynamoDB Local launcher', () => {
  it('the shared instance from the global setup answers DynamoDB requests', async () => {
    const client = createDynamoDbClient();
    try {
      const { TableNames } = await client.send(new ListTablesCommand({}));
      expect(Array.isArray(TableNames)).toBe(true);
    } finally {
      client.destroy();
    }
  });

  it('is installed in the cache folder, and ensuring it again reuses that copy', async () => {
    const installation = await ensureDynamoDbLocal();
    expect(installation.directory).toBe(DEFAULT_DYNAMODB_LOCAL_DIRECTORY);
    expect(existsSync(installation.jarPath)).toBe(true);
    expect(existsSync(installation.libraryPath)).toBe(true);
    expect(await ensureDynamoDbLocal()).toBe(installation);
  });

  it('installs safely when two processes fetch it into an empty folder at the same time', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'ddb-local-'));
    scratch.push(parent);
    const directory = join(parent, 'dynamodb-local', '1.25.1');
    const script = `const m = await import(${JSON.stringify(LAUNCHER)}); const i = await m.ensureDynamoDbLocal({ directory: process.env.TARGET }); console.log(i.jarPath);`;
    const installInChild = () =>
      execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env: { ...process.env, TARGET: directory },
      });

    const [first, second] = await Promise.all([installInChild(), installInChild()]);

    expect(first.stdout.trim()).toBe(join(directory, 'DynamoDBLocal.jar'));
    expect(second.stdout.trim()).toBe(first.stdout.trim());
    expect(existsSync(join(directory, 'DynamoDBLocal.jar'))).toBe(true);
    // Nothing half-extracted is left beside it.
    expect(await readdir(join(parent, 'dynamodb-local'))).toEqual(['1.25.1']);
  }, 180_000);

  it('starts on a requested port, and stop() ends the JVM so the port no longer answers', async () => {
    const port = await getPort();
    const emulator = await startDynamoDbLocal({ port });
    const client = new DynamoDBClient({
      endpoint: emulator.endpoint,
      region: TEST_REGION,
      credentials: TEST_CREDENTIALS,
      maxAttempts: 1,
    });
    try {
      expect(emulator.endpoint).toBe(`http://127.0.0.1:${port}`);
      await expect(client.send(new ListTablesCommand({}))).resolves.toMatchObject({ TableNames: [] });

      await emulator.stop();
      await emulator.stop();

      await expect(fetch(emulator.endpoint)).rejects.toThrow();
    } finally {
      client.destroy();
      await emulator.stop();
    }
  }, 120_000);

  it('names the package to install when Java is missing', async () => {
    const start = startDynamoDbLocal({ javaCommand: '/nonexistent/bin/java' });

    await expect(start).rejects.toBeInstanceOf(JavaNotFoundError);
    await expect(start).rejects.toThrow(/install a JRE \(apt-get install -y default-jre-headless\)/);
  });
});
