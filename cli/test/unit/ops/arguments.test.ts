import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OPS_USAGE, parseOpsArguments, type TargetChoice } from '../../../ops/arguments.ts';
import { UsageError } from '../../../ops/errors.ts';
import { runOps } from '../../../ops/run-ops.ts';

const KEY = 'msg:wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=';
const fixture = (name: string) =>
  fileURLToPath(new URL(`../../../../test/fixtures/webhooks/${name}`, import.meta.url));
const TEXT_BODY = fixture('message-text.json');

function parse(args: string[], env: NodeJS.ProcessEnv = {}) {
  return parseOpsArguments(args, env);
}

describe('ops arguments', () => {
  it.each([
    [['key', KEY], { name: 'key', key: KEY }],
    [['keys', '--file', TEXT_BODY], { name: 'keys', file: TEXT_BODY, events: [{ field: 'messages' }] }],
    [['keys', TEXT_BODY], { name: 'keys', file: TEXT_BODY, events: [{ field: 'messages' }] }],
    [['forget', KEY, '--yes'], { name: 'forget', key: KEY, force: false }],
    [['forget', '--force', KEY, '--yes'], { name: 'forget', key: KEY, force: true }],
    [['pause'], { name: 'pause' }],
    [['resume'], { name: 'resume' }],
    [['pause', '--lane', 'message'], { name: 'pause', lane: 'message' }],
    [['resume', '--lane', 'status'], { name: 'resume', lane: 'status' }],
    [['dlq', 'stats', '--lane', 'message'], { name: 'dlq-stats', lane: 'message' }],
    [['dlq', 'peek', '--lane', 'status', '-n', '2'], { name: 'dlq-peek', lane: 'status', limit: 2 }],
    [['dlq', 'redrive', '--lane', 'message'], { name: 'dlq-redrive', lane: 'message', max: undefined }],
    [['dlq', 'stats'], { name: 'dlq-stats' }],
    [['dlq', 'peek'], { name: 'dlq-peek', limit: 10 }],
    [['dlq', 'peek', '-n', '3'], { name: 'dlq-peek', limit: 3 }],
    [['dlq', 'redrive'], { name: 'dlq-redrive', max: undefined }],
    [['dlq', 'redrive', '--max', '50'], { name: 'dlq-redrive', max: 50 }],
    [['quarantine', 'list'], { name: 'quarantine-list' }],
    [['quarantine', 'show', 'abc'], { name: 'quarantine-show', id: 'abc' }],
    [['quarantine', 'requeue', 'abc'], { name: 'quarantine-requeue', id: 'abc' }],
    [['quarantine', 'requeue', '--all'], { name: 'quarantine-requeue', id: undefined }],
  ])('%j is %j', (args, command) => {
    expect(parse(args)).toMatchObject({ help: false, command });
  });

  it('targets the local stack on PORT, or 3000, unless told otherwise', () => {
    expect(parse(['pause'])).toMatchObject({ target: { kind: 'local', url: 'http://localhost:3000' } });
    expect(parse(['pause'], { PORT: '4100' })).toMatchObject({
      target: { kind: 'local', url: 'http://localhost:4100' },
    });
    expect(parse(['--local', 'http://127.0.0.1:9/x', 'pause'])).toMatchObject({
      target: { kind: 'local', url: 'http://127.0.0.1:9' },
    });
    expect(parse(['pause', '--stack', 'prod', '--subscriber', 'bot', '--json'])).toMatchObject({
      target: { kind: 'stack', stackName: 'prod' },
      subscriber: 'bot',
      json: true,
    });
  });

  it.each([
    [[], 'no command given'],
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['dlq'], 'dlq needs one of stats, peek, redrive'],
    [['dlq', 'purge'], 'dlq needs one of stats, peek, redrive, not "purge"'],
    [['quarantine', 'drop', 'x'], 'quarantine needs one of list, show, requeue, not "drop"'],
    [['key'], 'key needs EVENT_KEY'],
    [['key', KEY, KEY], 'key takes one EVENT_KEY, got 2 operands'],
    [['key', 'hello'], 'unknown event key "hello"'],
    [['key', 'msg:'], 'unknown event key "msg:"'],
    [['key', 'st:wamid.X'], 'status key "st:wamid.X" must look like st:<wamid>:<status>'],
    [['key', KEY, '--yes'], 'key takes no --yes option'],
    [['keys'], 'keys needs BODY.json (or --file BODY.json)'],
    [['keys', TEXT_BODY, '--file', TEXT_BODY], 'keys takes one BODY.json, as an operand or as --file'],
    [['keys', '--file', '/no/such/body.json'], 'cannot read /no/such/body.json'],
    [['keys', '--file', fixture('not-whatsapp-envelope.json')], 'holds no events'],
    [['forget', KEY], 'add --yes to confirm'],
    [['pause', 'now'], 'pause takes no operand, got "now"'],
    [['dlq', 'peek', '-n', '0'], '-n needs a whole number of at least 1, got "0"'],
    [['dlq', 'peek', '-n', '2.5'], '-n needs a whole number of at least 1, got "2.5"'],
    [['dlq', 'redrive', '--max', 'all'], '--max needs a whole number of at least 1, got "all"'],
    [['dlq', 'stats', '-n', '3'], 'dlq stats takes no -n option'],
    [['pause', '--lane', 'chat'], '--lane needs message or status, got "chat"'],
    [['key', KEY, '--lane', 'message'], 'key takes no --lane option'],
    [['quarantine', 'requeue'], 'quarantine requeue needs one ID, or --all'],
    [['quarantine', 'requeue', 'x', '--all'], 'quarantine requeue takes an ID or --all, not both'],
    [['pause', '--local', 'http://x', '--stack', 'prod'], 'give --local URL or --stack NAME, not both'],
    [['pause', '--local', 'ftp://x'], '--local needs an http(s) URL'],
    [['pause', '--stack', ' '], '--stack needs a value'],
    [['pause', '--colour'], "Unknown option '--colour'"],
    [['pause', '--stack'], "Option '--stack <value>' argument missing"],
  ])('refuses %j: %s', (args, message) => {
    expect(() => parse(args)).toThrow(UsageError);
    expect(() => parse(args)).toThrow(message);
  });

  it('prints the usage for --help and exits 0; a usage error is one line on stderr and exit 2', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const streams = {
      stdout: { write: (t: string) => out.push(t) },
      stderr: { write: (t: string) => err.push(t) },
    };
    const unreachable = () => Promise.reject(new Error('no target may be resolved'));

    expect(await runOps(['--help'], streams, { resolveTarget: unreachable })).toBe(0);
    expect(out.join('')).toBe(`${OPS_USAGE}\n`);
    expect(await runOps(['dlq', 'peek', '-n', 'x'], streams, { resolveTarget: unreachable })).toBe(2);
    expect(err).toEqual(['ops: -n needs a whole number of at least 1, got "x"\n']);
  });
});

/** A TCP port on the loopback that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function captured() {
  const err: string[] = [];
  const streams = { stdout: { write: (_: string) => true }, stderr: { write: (t: string) => err.push(t) } };
  return { streams, err };
}

describe('ops checks every argument before it reaches the target', () => {
  it('names a reversed replay range, exit 2, when no stack answers', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const reversed = captured();
    const code = await runOps(
      ['--local', url, 'replay', '--since', '2026-12-02', '--until', '2026-12-01'],
      reversed.streams,
    );
    expect({ code, stderr: reversed.err }).toEqual({
      code: 2,
      stderr: [
        'ops: --since (2026-12-02T00:00:00.000Z) must be before --until (2026-12-01T00:00:00.000Z): the range is empty\n',
      ],
    });
    // The same command in order does reach for the stack, and finds none there.
    const inOrder = captured();
    expect(
      await runOps(
        ['--local', url, 'replay', '--since', '2026-12-01', '--until', '2026-12-02'],
        inOrder.streams,
      ),
    ).toBe(1);
    expect(inOrder.err.join('')).toMatch(
      /^ops: no local stack answers at http:\/\/127\.0\.0\.1:\d+: start it/,
    );
  });

  it.each([
    [['replay', '--since', '2026-12-02', '--until', '2026-12-01'], /the range is empty/],
    [['--stack', 'prod', 'replay', '--since', '-1h', '--until', '-2h'], /the range is empty/],
    [['replay', '--since', '-1d', '--fields', 'chats'], /unknown webhook field chats/],
    [['keys', '--file', '/no/such/body.json'], /^cannot read \/no\/such\/body\.json/],
    [['--stack', 'prod', 'keys', '--file', fixture('not-whatsapp-envelope.json')], /holds no events/],
    [['forget', KEY], /add --yes to confirm/],
    [['smoke', '--timeout', '0'], /--timeout needs seconds/],
    [
      ['--stack', 'prod', 'meta', 'status', '--app-id', '1'],
      /META_GRAPH_URL needs an https URL/,
      { META_ACCESS_TOKEN: 't', META_GRAPH_URL: 'http://graph.example.com' },
    ],
  ] as [string[], RegExp, NodeJS.ProcessEnv?][])(
    '%j: exit 2 and the problem, with no target resolved',
    async (args, message, env = {}) => {
      const reached: TargetChoice[] = [];
      const { streams, err } = captured();
      const code = await runOps(args, streams, {
        env,
        resolveTarget: (choice) => {
          reached.push(choice);
          return Promise.reject(new Error('no target may be resolved'));
        },
      });
      expect(reached).toEqual([]);
      expect(code).toBe(2);
      expect(err).toHaveLength(1);
      expect(err[0]?.replace(/^ops: /, '')).toMatch(message);
    },
  );
});
