/**
 * The defaults the docs state are the code's: a default typed into a page drifts (docs/local.md once said
 * `LOCAL_MAX_CONCURRENCY` defaults to 5 while the stack ran 8). docs/local.md's configuration table whole, and
 * the defaults docs/deploy.md states in its prose.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PORT, DEV_APP_SECRET, DEV_VERIFY_TOKEN } from '../../../cli/local/local-stack-api.ts';
import { DEFAULT_LOCAL_HOST, LOCAL_ENV, readLocalConfig } from '../../../cli/local/stack/local-config.ts';
import { SUBSCRIBERS_MODULE } from '../../../cli/local/stack/local-subscribers.ts';
import { DEFAULT_ARCHIVE_RETENTION_DAYS } from '../../../contract/archive.ts';
import { ENV } from '../../../contract/environment.ts';
import {
  DEFAULT_SETTINGS,
  MAX_QUEUE_RETENTION_DAYS,
  MIN_QUEUE_RETENTION_DAYS,
} from '../../../contract/settings.ts';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const page = read('docs/local.md');

/** The configuration table: variable → its stated default, without backticks. */
function statedDefaults(): Map<string, string> {
  const section = page.slice(page.indexOf('### Configuration'));
  const start = section.indexOf('\n|');
  const table = section.slice(start + 1, section.indexOf('\n\n', start));
  const rows = table.split('\n').filter((line) => /^\| `[A-Z_]+`/.test(line));
  return new Map(
    rows.map((row) => {
      const [variable = '', stated = ''] = row
        .split('|')
        .slice(1, 3)
        .map((cell) => cell.trim());
      return [variable.replaceAll('`', ''), stated.replaceAll('`', '')];
    }),
  );
}

describe("docs/local.md's configuration table", () => {
  const stated = statedDefaults();
  const code: Record<string, string> = {
    PORT: String(DEFAULT_PORT),
    [LOCAL_ENV.host]: DEFAULT_LOCAL_HOST,
    [ENV.appSecrets]: DEV_APP_SECRET,
    [ENV.verifyToken]: DEV_VERIFY_TOKEN,
    [LOCAL_ENV.consumerTimeoutSeconds]: `${DEFAULT_SETTINGS.consumerTimeoutSeconds} (the stack's)`,
    [LOCAL_ENV.batchSize]: String(DEFAULT_SETTINGS.batchSize),
    [LOCAL_ENV.maxBatchingWindowSeconds]: String(DEFAULT_SETTINGS.maxBatchingWindowSeconds),
    [LOCAL_ENV.maxConcurrency]: String(DEFAULT_SETTINGS.maxConcurrency),
    [LOCAL_ENV.effectDelayMs]: String(readLocalConfig({}).effectDelayMs),
    [LOCAL_ENV.verbose]: readLocalConfig({}).verbose ? 'on' : 'off',
    [LOCAL_ENV.subscribers]: SUBSCRIBERS_MODULE,
  };

  it('lists every variable the code reads, and no other', () => {
    // LOCAL_CONSUMER swaps the consumer for the bench's pass-through floor: the lab's, not a user's.
    const read = [...Object.values(LOCAL_ENV), ENV.appSecrets, ENV.verifyToken].filter(
      (variable) => variable !== LOCAL_ENV.consumer,
    );
    expect([...stated.keys()].sort()).toEqual(read.sort());
    expect(Object.keys(code).sort()).toEqual(read.sort());
  });

  it.each(Object.entries(code))('states the default of %s as the code has it', (variable, value) => {
    expect(stated.get(variable)).toBe(value);
  });
});

describe("docs/deploy.md's stated defaults", () => {
  const deploy = read('docs/deploy.md').replace(/\s+/g, ' ');

  it("states the archive's retention, the queue retention's bounds and default as the code has them", () => {
    expect(deploy).toContain(
      `{ archive: { retentionDays: 90 } }); // default ${DEFAULT_ARCHIVE_RETENTION_DAYS}`,
    );
    expect(deploy).toContain(
      `\`queueRetentionDays\` below ${MIN_QUEUE_RETENTION_DAYS} (or above SQS's ${MAX_QUEUE_RETENTION_DAYS}; default ${DEFAULT_SETTINGS.queueRetentionDays})`,
    );
  });

  it("states the CDK app's default stack name, and the secret named after it, as bin/app.ts has them", () => {
    const stackName = /contextString\('stackName'\) \?\? '([^']+)'/.exec(read('bin/app.ts'))?.[1];
    expect(stackName).toBeDefined();
    expect(deploy).toContain(`another stack name (default \`${stackName}\`)`);
    expect(deploy).toContain(`(default \`${stackName}/Webhook\`)`);
  });
});
