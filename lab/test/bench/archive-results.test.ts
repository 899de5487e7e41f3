/** The archive part's summary: the CPU per delivery of the modelled pairs, beside their acknowledgement. */
import { describe, expect, it } from 'vitest';
import type { ReceiverArchiveResult } from '../../bench/receiver/worker.ts';
import { summarizeArchive } from '../../bench/results.ts';

const body = (samples: ReceiverArchiveResult['samples']): ReceiverArchiveResult => ({
  updates: 100,
  bodyBytes: 48_000,
  iterations: samples.cpu.offMs.length,
  offMs: 1,
  onMs: 1.2,
  archiveMessages: 1,
  samples,
});

describe('summarizeArchive', () => {
  it('summarises the CPU per delivery of the same pairs as the acknowledgement, by the per-pair ratios', () => {
    const [summary] = summarizeArchive([
      body({
        cpu: { offMs: [1, 1, 1], onMs: [1.2, 1.2, 1.2] },
        modelled: { offMs: [10, 10, 20], onMs: [10.5, 10.2, 20] },
        // Pair by pair 1.5, 1.1, 1.2: the median is 1.2, while the medians' ratio would be 2.4 / 2.
        modelledCpu: { offMs: [2, 1, 3], onMs: [3, 1.1, 3.6] },
      }),
    ]).bodies;
    expect(summary?.cpuPerDelivery).toMatchObject({ iterations: 3, offMs: 2, onMs: 3, pairedRatio: 1.2 });
    expect(summary?.modelled?.pairedRatio).toBeCloseTo(1.02, 6);
  });

  it('leaves the CPU per delivery out of runs that did not measure it', () => {
    const [summary] = summarizeArchive([body({ cpu: { offMs: [1], onMs: [1.2] } })]).bodies;
    expect(summary).not.toHaveProperty('cpuPerDelivery');
    expect(summary).not.toHaveProperty('modelled');
  });
});
