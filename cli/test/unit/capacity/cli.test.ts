import { describe, expect, it } from 'vitest';
import {
  CONSUMER_CPU_MS_PER_RECORD,
  DEFAULT_CLAIM_WRITE_MS,
  DEFAULT_RECEIVER_MS,
  peakTraffic,
  receiverReservedConcurrencyFor,
  slowestOf,
} from '../../../../contract/capacity.ts';
import { DEFAULT_THROTTLING_RATE_LIMIT } from '../../../../lib/defaults.ts';
import { runCapacity } from '../../../capacity/run-capacity.ts';

async function run(...argv: string[]) {
  return runOn({ isTTY: false }, ...argv);
}

async function runOn(terminal: { isTTY: boolean }, ...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCapacity(argv, {
    stdout: { write: (text: string) => (stdout += text), isTTY: terminal.isTTY },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

const ESCAPE = String.fromCharCode(27);

describe('npm run capacity', () => {
  it('exits 1 at two numbers at the top tier on the defaults (sized for one), naming the throttle that fails', async () => {
    const { code, stdout, stderr } = await run('--messages-per-second', '1000', '--numbers', '2');
    expect(code).toBe(1);
    expect(stderr).toBe('');
    expect(stdout).toContain(`- throttlingRateLimit ${DEFAULT_THROTTLING_RATE_LIMIT} < 8000 POSTs/s`);
    expect(stdout).toContain('Cannot carry this peak:');
    expect(stdout).toMatch(/^ 1 {2}HTTP API route throttle, rate +4,000 POSTs\/s +8,000 POSTs\/s {2}NO$/m);
  });

  it("plans the function URL door with --endpoint: the receiver's reservation, no route and no API quota", async () => {
    const peak = { messagesPerSecond: 1000, numbers: 2 };
    const reserved = receiverReservedConcurrencyFor(peakTraffic(peak).postsPerSecond, DEFAULT_RECEIVER_MS);
    const sizedForOne = receiverReservedConcurrencyFor(
      peakTraffic({ messagesPerSecond: 1000 }).postsPerSecond,
      DEFAULT_RECEIVER_MS,
    );
    const { code, stdout } = await run(
      '--messages-per-second',
      '1000',
      '--numbers',
      '2',
      '--endpoint',
      'function-url',
    );
    expect(code).toBe(1);
    expect(stdout.replace(/\s+/g, ' ')).toContain(
      "through the receiver's function URL (its reserved concurrency throttles)",
    );
    expect(stdout).toContain(`- receiverReservedConcurrency ${sizedForOne} < ${reserved} executions`);
    expect(stdout).toContain(`receiverReservedConcurrency ${reserved.toLocaleString('en-US')}`);
    expect(stdout).not.toMatch(/HTTP API route throttle|API Gateway, account|throttlingRateLimit/);

    const json = JSON.parse(
      (await run('--messages-per-second', '80', '--endpoint', 'function-url', '--json')).stdout,
    );
    expect(json.endpoint).toBe('function-url');
    expect(json.sizing.receiverReservedConcurrency).toBe(
      receiverReservedConcurrencyFor(
        peakTraffic({ messagesPerSecond: 80 }).postsPerSecond,
        DEFAULT_RECEIVER_MS,
      ),
    );
    expect(json.limits.map((limit: { setting: string }) => limit.setting)).toContain(
      'receiverReservedConcurrency',
    );
  });

  it('exits 0 when every limit carries the peak', async () => {
    const { code, stdout } = await run('--messages-per-second', '1');
    expect(code).toBe(0);
    expect(stdout).toContain('Every limit carries this peak.');
  });

  it('prints text for a terminal: no markdown, every line within 100 columns, colour only on a TTY', async () => {
    for (const argv of [
      ['--messages-per-second', '80'],
      ['--messages-per-second', '1000', '--numbers', '4'],
      ['--messages-per-second', '80', '--subscribers', '3', '--handler-ms', '2000'],
    ]) {
      const { stdout } = await run(...argv);
      const lines = stdout.trimEnd().split('\n');
      expect(lines.filter((line) => [...line].length > 100)).toEqual([]);
      expect(stdout).not.toMatch(/\*\*|^\|/m);
      expect(stdout).not.toContain(ESCAPE);
    }
    const { stdout } = await run('--messages-per-second', '80');
    // Why a limit can need far more than the peak's mean, said where the figure is.
    expect(stdout).toMatch(/Claim table, warm write throughput +13,791 WU\/s +13,791 WU\/s {2}yes/);
    expect(stdout).toContain("the peak's mean is 880 WU/s");
    expect(stdout).toContain('when they drain a backlog at full concurrency');
    const previous = process.env.NO_COLOR;
    delete process.env.NO_COLOR;
    try {
      expect((await runOn({ isTTY: true }, '--messages-per-second', '80')).stdout).toContain(ESCAPE);
    } finally {
      if (previous !== undefined) process.env.NO_COLOR = previous;
    }
  });

  it('prints the markdown docs/capacity.md holds with --markdown', async () => {
    const { code, stdout } = await run('--messages-per-second', '1', '--markdown');
    expect(code).toBe(0);
    expect(stdout).toContain('**Every limit carries this peak.**');
    expect(stdout).toMatch(/^\| +# \| limit/m);
  });

  it('prints JSON with the traffic, the limits, the lanes, the cost and the problems', async () => {
    const { code, stdout } = await run('--messages-per-second', '1000', '--numbers', '2', '--json');
    expect(code).toBe(1);
    const report = JSON.parse(stdout);
    expect(report.traffic).toMatchObject({ numbers: 2, postsPerSecond: 2 * (3 * 1000 + 1000) });
    expect(Object.keys(report)).toEqual(
      expect.arrayContaining([
        'peak',
        'traffic',
        'assumptions',
        'limits',
        'lanes',
        'cost',
        'problems',
        'carries',
      ]),
    );
    expect(report.carries).toBe(false);
    for (const limit of report.limits) {
      expect(limit).toEqual(
        expect.objectContaining({
          name: expect.any(String),
          setting: expect.any(String),
          allows: expect.any(Number),
          carries: expect.any(Boolean),
        }),
      );
    }
    expect(report.lanes.map((lane: { lane: string }) => lane.lane)).toEqual(['message', 'status']);
    // A lane that cannot keep up has no steady wait: null in JSON, and a growing backlog.
    const message = report.lanes[0];
    expect(message.p99WaitSeconds).toBeNull();
    expect(message.backlogGrowthPerSecond).toBeGreaterThan(0);
    expect(report.cost.perMonth).toBeGreaterThan(report.cost.perHour.total);
    expect(report.problems.length).toBe(
      report.limits.filter((limit: { carries: boolean }) => !limit.carries).length,
    );
  });

  it('takes handler times per lane and copies of the default subscriber', async () => {
    const { stdout } = await run(
      '--messages-per-second',
      '10',
      '--handler-ms',
      'message=100,status=20',
      '--subscribers',
      '3',
      '--json',
    );
    const report = JSON.parse(stdout);
    expect(report.lanes).toHaveLength(6);
    const [message, status] = report.lanes;
    const invocation = (fill: number, writes: number, handler: number) =>
      (fill * CONSUMER_CPU_MS_PER_RECORD + writes * DEFAULT_CLAIM_WRITE_MS + handler * slowestOf(fill)) /
      1000;
    expect(message.batchSeconds).toBeCloseTo(invocation(message.batchFill, 2, 100), 12);
    // The default handlers have onStatus: claim, ledger write, completion.
    expect(status.batchSeconds).toBeCloseTo(invocation(status.batchFill, 3, 20), 12);
  });

  it("reads a subscribers module and each entry's handlers", async () => {
    const { stdout } = await run(
      '--messages-per-second',
      '10',
      '--subscribers',
      'cli/test/unit/capacity/fixtures/two-subscribers.ts',
      '--json',
    );
    const report = JSON.parse(stdout);
    const lanes = report.lanes.map((lane: { subscriber: string; lane: string; ordered: boolean }) => [
      lane.subscriber,
      lane.lane,
      lane.ordered,
    ]);
    expect(lanes).toEqual([
      ['bot', 'message', true],
      ['bot', 'status', false],
      ['crm', 'message', false],
      ['crm', 'status', false],
    ]);
    // bot has no onStatus: one claim per status; crm's has one: three writes.
    expect(report.lanes[1].claimWriteUnitsPerSecond).toBe(30);
    expect(report.lanes[3].claimWriteUnitsPerSecond).toBe(90);
    expect(report.lanes[3].maxConcurrency).toBe(2);
  });

  it.each([
    [[], '--messages-per-second N is required.'],
    [['--messages-per-second', 'fast'], '--messages-per-second is "fast": use a number >= 0.'],
    [['--messages-per-second', '10', '--numbers', '0'], '--numbers is "0": use a whole number >= 1.'],
    [['--messages-per-second', '10', '--handler-ms', 'reply=5'], '--handler-ms "reply=5": use milliseconds'],
    [['--messages-per-second', '10', '--subscribers', 'no/such.ts'], '--subscribers "no/such.ts"'],
    [['--messages-per-second', '10', '--bogus'], "Unknown option '--bogus'"],
    [
      ['--messages-per-second', '10', '--endpoint', 'rest-api'],
      '--endpoint "rest-api": use http-api or function-url.',
    ],
    [['--simulate', 'steady'], "Unknown option '--simulate'"],
  ])('exits 2 with one line for %j', async (argv, message) => {
    const { code, stdout, stderr } = await run(...argv);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(message);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
