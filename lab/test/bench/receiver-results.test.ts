/**
 * The receiver part's summary (lab/bench/results.json's `receiver`), its line in the printed report, its section of
 * docs/benchmarks.md, and the side-by-side timing its fan-out ratio rests on. (No timing here.)
 */
import { describe, expect, it } from 'vitest';
import { times } from '../../../cli/tools/markdown-table.ts';
import { receiverFanOutSection } from '../../bench/markdown/benchmarks-page.ts';
import type { ReceiverBenchOutput, ReceiverBodyResult } from '../../bench/receiver/worker.ts';
import { formatReport } from '../../bench/report.ts';
import { summarizeReceiver } from '../../bench/results.ts';
import { timeSideBySide } from '../../bench/support/side-by-side.ts';

const body = (updates: number, msPerDelivery: number, floorMs: number): ReceiverBodyResult => ({
  updates,
  bodyBytes: updates * 480,
  iterations: 1000,
  queueMessages: 1,
  msPerDelivery,
  floorMs,
  ratio: msPerDelivery / floorMs,
  handlerMinMs: msPerDelivery * 0.9,
  floorMinMs: floorMs * 0.9,
});

const output: ReceiverBenchOutput = {
  bodies: [body(1, 0.123456789, 0.01), body(100, 3.1, 0.6)],
  fanOut: {
    updates: 100,
    subscribers: 3,
    bodyBytes: 48_000,
    iterations: 1000,
    queueMessages: 3,
    msPerDelivery: 4.12716,
    oneSubscriberMs: 3.2,
    floorMs: 0.64,
    handlerMinMs: 3.9,
    oneSubscriberMinMs: 3.0,
  },
};

describe('summarizeReceiver', () => {
  it('keeps the one-subscriber bodies as before, rounded', () => {
    const summary = summarizeReceiver(output);
    expect(summary.bodies.map((b) => b.updates)).toEqual([1, 100]);
    expect(summary.bodies[0]).toMatchObject({ msPerDelivery: 0.1235, floorMs: 0.01, ratio: 12.35 });
    expect(summary.bodies[1]).toMatchObject({ msPerDeliveryMin: 2.79, floorMsMin: 0.54 });
  });

  it('reports the fan-out against one subscriber and against the floor, from the medians of one run', () => {
    const fanOut = summarizeReceiver(output).fanOut;
    expect(fanOut).toEqual({
      updates: 100,
      subscribers: 3,
      bodyBytes: 48_000,
      iterations: 1000,
      queueMessages: 3,
      msPerDelivery: 4.1272,
      oneSubscriberMs: 3.2,
      floorMs: 0.64,
      // 4.12716 / 3.2 and / 0.64, from the unrounded medians.
      ratioToOneSubscriber: 1.29,
      ratio: 6.45,
      msPerDeliveryMin: 3.9,
      oneSubscriberMsMin: 3,
    });
  });

  it('leaves fanOut out when the run had no fan-out case', () => {
    expect(summarizeReceiver({ bodies: output.bodies })).not.toHaveProperty('fanOut');
  });
});

describe("the fan-out's report line and benchmarks.md section", () => {
  const receiver = summarizeReceiver(output);

  it('prints the ratio to one subscriber in the report', () => {
    const report = formatReport({ receiver, goals: {}, machine: {}, run: {} });
    expect(report).toContain(
      '100 updates to 3 subscriber queues: 4.127 ms per delivery, ×1.29 the same body to one',
    );
  });

  it('tabulates one and three subscribers with their ratios', () => {
    const section = receiverFanOutSection(receiver.fanOut).join('\n');
    expect(section).toContain('3 subscriber queues');
    expect(section).toMatch(/\| 1 +\| +1 \| +3\.200 \| +×1\.00 \| +×5\.00 \|/);
    expect(section).toMatch(/\| 3 +\| +3 \| +4\.127 \| +\*\*×1\.29\*\* \| +×6\.45 \|/);
    expect(section).toContain(times(receiver.fanOut?.ratioToOneSubscriber ?? Number.NaN));
  });

  it('says so when the results predate subscribers', () => {
    const section = receiverFanOutSection(undefined).join('\n');
    expect(section).toContain('not measured in this run');
    expect(section).not.toMatch(/×\d/);
  });
});

describe('timeSideBySide', () => {
  it('rotates the order each iteration, gives each timer its own input and drops the warm-up', async () => {
    const calls: string[] = [];
    let input = 0;
    const timer = (name: string) => async (value: number) => {
      calls.push(`${name}${value}`);
      return value;
    };
    const samples = await timeSideBySide([timer('a'), timer('b'), timer('c')], () => input++, 1, 3);
    expect(calls).toEqual(['a0', 'b1', 'c2', 'b3', 'c4', 'a5', 'c6', 'a7', 'b8', 'a9', 'b10', 'c11']);
    // Iteration 0 is the warm-up: inputs 0–2 are not among the samples.
    expect(samples).toEqual([
      [5, 7, 9],
      [3, 8, 10],
      [4, 6, 11],
    ]);
  });
});
