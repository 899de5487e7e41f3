/**
 * `npm run ops -- replay` against the local stack as `npm start` runs it, with two subscribers (bot: `messages`
 * only, crm: every field): deliveries in the archive replayed to crm are effected once each, a second replay
 * effects nothing and the consumer counts every key as a duplicate, `--rerun --yes` effects them once more, and
 * a replay stopped half way (`--max`) continues from its cursor without effecting anything twice. Then the
 * README's "Backfill a new subscriber" recipe, step by step.
 *
 * The archive: until the local stack archives what it receives, `archiveAsTheArchiverWould` writes the
 * deliveries into the stack's fauxqs S3 itself, in contract/archive.ts's format, and ops is given that bucket
 * (`withTestArchive`).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ArchiveRecord } from '../../contract/archive.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import { type SpawnedLocalStack, spawnLocalStack } from '../../local/stack/spawn-local-stack.ts';
import { runOps } from '../../ops/run-ops.ts';
import { resolveLocalTarget } from '../../ops/target/local-target.ts';
import type { LocalInfo } from '../../tools/local-stack-api.ts';
import {
  acceptedRecord,
  createBucket,
  createEmulatorS3Client,
  writeArchiveObjectForTest,
} from '../support/archive-objects.ts';
import { keysOfBody } from '../support/webhooks/event-keys.ts';
import {
  envelope,
  inboundMessagesWithIds,
  messagesChange,
  statusesChange,
  wamidFactory,
} from '../support/webhooks/webhook-bodies.ts';

const BUCKET = 'whatsapp-webhook-dedup-archive-e2e';
const wamid = wamidFactory('replay');
let nextWamid = 0;

let stack: SpawnedLocalStack;
let client: LocalStackClient;
let info: LocalInfo;
let s3: S3Client;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `npm run ops -- --local <stack> ARGS`, in this process (the stack runs in its own). */
async function ops(...args: string[]): Promise<Run> {
  return opsWith({}, ...args);
}

/** `ops` with the wait between paced sends replaced (a test's interruption). */
async function opsWith(
  dependencies: { readonly sleep?: (ms: number) => Promise<void> },
  ...args: string[]
): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runOps(
    ['--local', stack.url, ...args],
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    },
    { resolveTarget: withTestArchive, ...dependencies },
  );
  return { code, stdout, stderr };
}

/** The local target with the bucket this file archives into (until the local stack names its own). */
async function withTestArchive(): Promise<Awaited<ReturnType<typeof resolveLocalTarget>>> {
  const target = await resolveLocalTarget(stack.url);
  if (target.archive !== undefined) return target;
  return {
    ...target,
    // fauxqs keeps no lifecycle rules: the default retention applies, as on a local stack's own archive.
    archive: { bucketName: BUCKET, s3, retentionDays: async () => undefined },
  };
}

interface ReplayJson {
  readonly complete: boolean;
  readonly deliveries: { read: number; sent: number; quarantined: number; notForSubscriber: number };
  readonly keys: { total: number; done: number; inFlight: number; notDone: number; forgotten: number };
}

async function replayJson(...args: string[]): Promise<ReplayJson> {
  const result = await ops('--json', 'replay', ...args);
  if (result.code !== 0) throw new Error(`replay ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as ReplayJson;
}

/** Writes the deliveries to the archive as the archiver does: one object per batch, lines by arrival. */
async function archiveAsTheArchiverWould(records: readonly ArchiveRecord[], batchId: string): Promise<void> {
  await writeArchiveObjectForTest(s3, BUCKET, records, batchId);
}

/** `count` deliveries, each an inbound message of its own customer and a status, `minutesAgo` before now. */
function deliveries(
  label: string,
  count: number,
  minutesAgo: number,
): { records: ArchiveRecord[]; keys: string[] } {
  const start = Date.now() - minutesAgo * 60_000;
  const records = Array.from({ length: count }, (_, i) =>
    acceptedRecord(
      `${label}-${i}`,
      start + i * 1000,
      envelope([
        messagesChange(inboundMessagesWithIds([wamid(nextWamid++)])),
        statusesChange([
          {
            id: wamid(nextWamid++),
            status: 'delivered',
            timestamp: '1780000000',
            recipientId: '15551230000',
          },
        ]),
      ]),
      ['bot'],
    ),
  );
  return { records, keys: records.flatMap((record) => keysOfBody(record.body)) };
}

async function effects(subscriber: string, keys: readonly string[]): Promise<number[]> {
  const counts = await client.effectCounts(keys, 90_000, subscriber);
  return keys.map((key) => counts[key] ?? 0);
}

async function duplicatesSeen(subscriber: string): Promise<number> {
  const { subscribers } = await client.stats();
  return Object.values(subscribers[subscriber]?.totals.byField ?? {}).reduce(
    (sum, counts) => sum + counts.duplicate,
    0,
  );
}

beforeAll(async () => {
  vi.stubEnv('XDG_CACHE_HOME', mkdtempSync(join(tmpdir(), 'replay-e2e-cache-')));
  stack = await spawnLocalStack({
    env: {
      LOCAL_SUBSCRIBERS: 'test/support/local-subscribers/two-subscribers.ts',
      LOCAL_CONSUMER_TIMEOUT_SECONDS: '30',
    },
  });
  client = new LocalStackClient(stack.url);
  info = await client.info();
  s3 = createEmulatorS3Client(info.sqsEndpoint);
  await createBucket(s3, BUCKET);
}, 180_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  s3?.destroy();
  await stack?.stop();
});

describe('npm run ops -- replay, against the local stack', () => {
  it('refuses bad input in one line with exit 2', async () => {
    const refused = async (pattern: RegExp, ...args: string[]) => {
      const result = await ops('replay', ...args);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^ops: [^\n]+\n$/);
      expect(result.stderr).toMatch(pattern);
      expect(result.code).toBe(2);
    };
    await refused(/no subscriber "erp"/, '--subscriber', 'erp', '--since', '-1h');
    await refused(/must be before --until/, '--subscriber', 'crm', '--since', '-1h', '--until', '-2h');
    await refused(/outside the archive's retention of 30 days/, '--subscriber', 'crm', '--since', '-31d');
    await refused(/--since needs an ISO-8601 time/, '--subscriber', 'crm', '--since', 'yesterday');
    await refused(/add --yes to confirm/, '--subscriber', 'crm', '--since', '-1h', '--rerun');
    await refused(
      /subscriber bot does not receive calls/,
      '--subscriber',
      'bot',
      '--since',
      '-1h',
      '--fields',
      'calls',
    );
  });

  it('effects each event once for the subscriber replayed to, then zero times (duplicates), then once more with --rerun', async () => {
    const { records, keys } = deliveries('first', 4, 50);
    await archiveAsTheArchiverWould(records, 'first');
    const range = ['--subscriber', 'crm', '--since', '-55m', '--until', '-40m'];

    const dry = await replayJson(...range, '--dry-run');
    expect(dry.deliveries).toEqual({ read: 4, sent: 0, quarantined: 0, notForSubscriber: 0 });
    expect(dry.keys).toMatchObject({ total: 8, done: 0, notDone: 8 });
    expect(await effects('crm', keys)).toEqual(keys.map(() => 0));

    const first = await replayJson(...range);
    expect(first).toMatchObject({
      complete: true,
      deliveries: { read: 4, sent: 4 },
      keys: { total: 8, notDone: 8 },
    });
    expect(await effects('crm', keys)).toEqual(keys.map(() => 1));
    // Replayed to crm only: bot, which the archive says received them, is not sent anything.
    expect(await effects('bot', keys)).toEqual(keys.map(() => 0));

    const duplicatesBefore = await duplicatesSeen('crm');
    const second = await replayJson(...range);
    expect(second).toMatchObject({ deliveries: { sent: 4 }, keys: { total: 8, done: 8, notDone: 0 } });
    expect(await effects('crm', keys)).toEqual(keys.map(() => 1));
    expect((await duplicatesSeen('crm')) - duplicatesBefore).toBe(8);

    const rerun = await ops('--json', 'replay', ...range, '--rerun', '--yes');
    expect(rerun.code).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ keys: { total: 8, forgotten: 8, done: 0 } });
    const forgetLines = rerun.stderr.split('\n').filter((line) => line.includes('"message":"ops forget"'));
    expect(forgetLines).toHaveLength(8);
    expect(JSON.parse(forgetLines[0] as string)).toMatchObject({
      by: 'replay --rerun',
      subscriber: 'crm',
      previousStatus: 'done',
    });
    expect(await effects('crm', keys)).toEqual(keys.map(() => 2));
  });

  it('continues an interrupted replay from its cursor without effecting anything twice', async () => {
    const { records, keys } = deliveries('second', 5, 30);
    await archiveAsTheArchiverWould(records.slice(0, 3), 'second-a');
    await archiveAsTheArchiverWould(records.slice(3), 'second-b');
    const range = ['--subscriber', 'crm', '--since', '-35m', '--until', '-20m'];

    const stopped = await ops('replay', ...range, '--max', '2');
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(/stopped after --max 2: run the same command again to continue/);
    expect(stopped.stderr).toMatch(/^replay \d+ % \(ETA [^)]+\): /m);
    expect(await effects('crm', keys)).toEqual([1, 1, 1, 1, 0, 0, 0, 0, 0, 0]);

    const resumed = await ops('--json', 'replay', ...range);
    expect(resumed.stderr).toMatch(/^continuing the replay begun \S+ after \S+ \(cursor /m);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      complete: true,
      deliveries: { read: 5, sent: 5 },
      keys: { total: 10, notDone: 10 },
    });
    expect(await effects('crm', keys)).toEqual(keys.map(() => 1));

    // Complete: the cursor is gone, so the same command replays the whole range again (all duplicates).
    expect((await replayJson(...range)).keys).toMatchObject({ total: 10, done: 10 });
    expect(await effects('crm', keys)).toEqual(keys.map(() => 1));
  });
});

describe('npm run ops -- replay, interrupted', () => {
  it('dies between two sends, and the same command continues after the last delivery sent, nothing effected twice', async () => {
    const { records, keys } = deliveries('third', 4, 15);
    await archiveAsTheArchiverWould(records, 'third');
    const range = ['--subscriber', 'crm', '--since', '-16m', '--until', '-10m', '--rate', '1/s'];
    let waits = 0;
    // The pacer waits before every send but the first (a send takes well under the second it paces to): the
    // second wait, before the third send, is where the process dies.
    const dyingAfterTwoSends = async (ms: number) => {
      waits++;
      if (waits === 2) throw new Error('interrupted');
      await new Promise((resolve) => setTimeout(resolve, ms));
    };

    const died = await opsWith({ sleep: dyingAfterTwoSends }, 'replay', ...range);
    expect(died.code).toBe(1);
    expect(died.stderr).toMatch(/^ops: Error: interrupted$/m);
    expect(await effects('crm', keys)).toEqual([1, 1, 1, 1, 0, 0, 0, 0]);

    const resumed = await ops('--json', 'replay', ...range);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/^continuing the replay begun \S+ after \S+ \(cursor /m);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ complete: true, deliveries: { read: 4, sent: 4 } });
    expect(await effects('crm', keys)).toEqual(keys.map(() => 1));
  });
});

describe('README: Backfill a new subscriber', () => {
  it('replays the last days to a subscriber that never had them: dry run, replay, each event effected once', async () => {
    const { records, keys } = deliveries('backfill', 3, 24 * 60);
    await archiveAsTheArchiverWould(records, 'backfill');

    const dry = await ops('replay', '--subscriber', 'crm', '--since', '-2d', '--until', '-23h', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/dry run, nothing sent or forgotten/);
    expect(dry.stdout).toMatch(/^keys +6: 0 done before .* 6 not done \(would be effected now\)$/m);

    const backfill = await ops(
      'replay',
      '--subscriber',
      'crm',
      '--since',
      '-2d',
      '--until',
      '-23h',
      '--rate',
      '20/s',
    );
    expect(backfill.code).toBe(0);
    expect(backfill.stdout).toMatch(/: complete$/m);
    expect(await effects('crm', keys)).toEqual(keys.map(() => 1));
  });
});
