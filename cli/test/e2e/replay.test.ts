/**
 * `npm run ops -- replay` against the local stack as `npm start` runs it, with two subscribers (bot: `messages`
 * only, crm: every field): deliveries in the archive replayed to crm are effected once each, a second replay
 * effects nothing and the consumer counts every key as a duplicate, `--rerun --yes` effects them once more, and
 * a replay stopped half way (`--max`) continues from its cursor without effecting anything twice. Then the
 * README's "Backfill a new subscriber" recipe, step by step.
 *
 * The archive is the stack's own: the deliveries are posted signed, as Meta sends them, and replayed once the
 * local archiver has written them (`/local/archive`). crm is a subscriber that never got them, as one added
 * after they arrived: its consumers are paused while they are posted, and its queues purged before it resumes,
 * so only bot effected them live.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PurgeQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type OpsRun, opsInProcess } from '../../../test/support/ops-in-process.ts';
import { spawnTestStack } from '../../../test/support/test-local-stack.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { keysOfBody } from '../../../test/support/webhooks/event-keys.ts';
import type { LocalInfo } from '../../local/local-stack-api.ts';
import type { ArchiveObjectListing } from '../../local/stack/local-archive.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import type { SpawnedLocalStack } from '../../local/stack/spawn-local-stack.ts';
import {
  envelope,
  inboundMessagesWithIds,
  messagesChange,
  statusesChange,
  wamidFactory,
} from '../../meta-traffic/webhook-bodies.ts';
import { defaultCursorDirectory } from '../../ops/replay/replay-cursor.ts';

const SECRET = 'replay-e2e-app-secret';
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const wamid = wamidFactory('replay');
let nextWamid = 0;

let stack: SpawnedLocalStack;
let client: LocalStackClient;
let info: LocalInfo;
let sqs: SQSClient;

type Run = OpsRun;

/** `npm run ops -- --local <stack> ARGS`, in this process (the stack runs in its own). */
async function ops(...args: string[]): Promise<Run> {
  return opsWith({}, ...args);
}

/** A child process's exit code and output. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: ROOT, env, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** `ops` with the wait between paced sends replaced (a test's interruption). */
function opsWith(
  dependencies: { readonly sleep?: (ms: number) => Promise<void> },
  ...args: string[]
): Promise<Run> {
  return opsInProcess(stack.url, args, dependencies);
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

/** `count` bodies, each an inbound message of its own customer and a status. */
function bodies(count: number): { bodies: string[]; keys: string[] } {
  const made = Array.from({ length: count }, () =>
    envelope([
      messagesChange(inboundMessagesWithIds([wamid(nextWamid++)])),
      statusesChange([
        { id: wamid(nextWamid++), status: 'delivered', timestamp: '1780000000', recipientId: '15551230000' },
      ]),
    ]),
  );
  return { bodies: made, keys: made.flatMap((body) => keysOfBody(body)) };
}

/** A group of deliveries and the range [since, until) that holds them and nothing else. */
interface Posted {
  readonly keys: string[];
  readonly range: readonly string[];
}
const posted = new Map<string, Posted>();

function group(name: string): Posted {
  const found = posted.get(name);
  if (found === undefined) throw new Error(`no group ${name}`);
  return found;
}

async function archivedDeliveries(): Promise<number> {
  const objects = (await (await fetch(`${stack.url}/local/archive`)).json()) as ArchiveObjectListing[];
  return objects.reduce((sum, object) => sum + object.deliveries, 0);
}

async function crmLanes(action: 'pause' | 'resume'): Promise<void> {
  const result = await ops(action, '--subscriber', 'crm');
  if (result.code !== 0) throw new Error(`${action} crm exited ${result.code}: ${result.stderr}`);
}

/** Each key's effects by `subscriber`, once the queues have drained (or at once, `drained` false). */
async function effects(subscriber: string, keys: readonly string[], drained = true): Promise<number[]> {
  if (!drained) {
    const view = (await client.effects()).subscribers[subscriber]?.effects ?? [];
    const now = new Map(view.map((effect) => [effect.key, effect.count]));
    return keys.map((key) => now.get(key) ?? 0);
  }
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
  stack = await spawnTestStack({
    env: {
      WHATSAPP_APP_SECRETS: SECRET,
      LOCAL_SUBSCRIBERS: 'test/support/local-subscribers/two-subscribers.ts',
      LOCAL_CONSUMER_TIMEOUT_SECONDS: '30',
    },
  });
  client = new LocalStackClient(stack.url);
  info = await client.info();
  sqs = new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    endpoint: info.sqsEndpoint,
  });

  // Every group of the tests below, posted while crm is paused; then crm's copies are purged, unrun.
  await crmLanes('pause');
  const archivedBefore = await archivedDeliveries();
  let total = 0;
  for (const [name, count] of [
    ['first', 4],
    ['second', 5],
    ['third', 4],
    ['killed', 6],
    ['backfill', 3],
  ] as const) {
    const group = bodies(count);
    const since = new Date().toISOString();
    for (const body of group.bodies) expect((await client.postWebhook(body, SECRET)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 5));
    posted.set(name, { keys: group.keys, range: ['--since', since, '--until', new Date().toISOString()] });
    total += count;
  }
  await waitFor(
    async () => (await archivedDeliveries()) - archivedBefore >= total,
    60_000,
    () => 'archived',
  );
  const allKeys = [...posted.values()].flatMap((group) => group.keys);
  await waitFor(
    async () => {
      const effects = (await client.effects()).subscribers.bot?.effects ?? [];
      const counts = new Map(effects.map((effect) => [effect.key, effect.count]));
      return allKeys.every((key) => counts.get(key) === 1);
    },
    60_000,
    () => 'bot effected every key',
  );
  const crm = info.subscribers.find((subscriber) => subscriber.name === 'crm');
  for (const queueUrl of [crm?.queueUrl, crm?.messageQueueUrl]) {
    await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
  }
  await crmLanes('resume');
  await client.drained();
}, 240_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  sqs?.destroy();
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
    const { keys, range: times } = group('first');
    const range = ['--subscriber', 'crm', ...times];

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
    // Replayed to crm only: bot, which effected them live, is not sent anything.
    expect(await effects('bot', keys)).toEqual(keys.map(() => 1));

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
    const { keys, range: times } = group('second');
    const range = ['--subscriber', 'crm', ...times];

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
    const { keys, range: times } = group('third');
    const range = ['--subscriber', 'crm', ...times, '--rate', '1/s'];
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

describe('npm run ops -- replay, killed', () => {
  it('SIGKILLed after its first delivery, the same command continues from the cursor, nothing effected twice', async () => {
    const { keys, range: times } = group('killed');
    const args = [
      '--import',
      'tsx',
      'cli/ops/cli.ts',
      '--local',
      stack.url,
      '--subscriber',
      'crm',
      'replay',
      ...times,
    ];
    const env = { ...process.env };
    const cursors = defaultCursorDirectory(env);
    const cursorFiles = () =>
      existsSync(cursors) ? readdirSync(cursors).filter((f) => f.endsWith('.json')) : [];
    const earlierCursors = new Set(cursorFiles());
    // One delivery per 10 s leaves the kill a wide window after the first, even on a loaded machine.
    const child = spawn(process.execPath, [...args, '--rate', '0.1/s'], { cwd: ROOT, env, stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    // Killed once a delivery is effected and its cursor saved: the consumer can effect a delivery before the
    // replay, awaiting the send's answer, saves its cursor.
    await waitFor(
      async () =>
        (await effects('crm', keys, false)).some((count) => count > 0) &&
        cursorFiles().some((file) => !earlierCursors.has(file)),
      60_000,
      () => 'the first replayed delivery effected, its cursor saved',
    );
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const partly = await effects('crm', keys);
    expect(partly.filter((count) => count === 1).length).toBeLessThan(keys.length);

    const resumed = await run(process.execPath, [...args, '--json'], env);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/^continuing the replay begun \S+ after \S+ \(cursor /m);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ complete: true, deliveries: { read: 6 } });
    expect(await effects('crm', keys)).toEqual(keys.map(() => 1));
  }, 120_000);
});

describe('README: Backfill a new subscriber', () => {
  it('replays the last day to a subscriber that never had it: dry run, replay, what it lacked effected once', async () => {
    const { keys } = group('backfill');
    const earlier = ['first', 'second', 'third', 'killed'].flatMap((name) => group(name).keys);
    const effectedBefore = await effects('crm', earlier);

    const dry = await ops('--subscriber', 'crm', 'replay', '--since', '-1d', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/dry run, nothing sent or forgotten/);
    const total = keys.length + earlier.length;
    expect(dry.stdout).toMatch(
      new RegExp(
        `^keys +${total}: ${earlier.length} done before .* ${keys.length} not done \\(would be effected now\\)$`,
        'm',
      ),
    );

    const backfill = await ops('--subscriber', 'crm', 'replay', '--since', '-1d');
    expect(backfill.code).toBe(0);
    expect(backfill.stdout).toMatch(/: complete$/m);
    expect(await effects('crm', keys)).toEqual(keys.map(() => 1));
    // What crm had already done (the earlier replays) ran no more.
    expect(await effects('crm', earlier)).toEqual(effectedBefore);
    expect(await effects('bot', keys)).toEqual(keys.map(() => 1));
  });
});
