import { describe, expect, it } from 'vitest';
import {
  parseCapacitySimulationArguments,
  runCapacitySimulation,
} from '../../capacity-simulation/capacity-simulation-command.ts';
import { FULL_RUN_HEAP_MB, fullRunHeapAdvice } from '../../capacity-simulation/run-scale.ts';
import { SCENARIO_NAMES } from '../../capacity-simulation/scenarios.ts';

async function run(...argv: string[]) {
  let stderr = '';
  const code = await runCapacitySimulation(argv, {
    stdout: { write: () => undefined },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stderr };
}

describe('npm run capacity-simulation', () => {
  it('reads a scenario, all of them, --short, --seed, --json and --record', () => {
    expect(parseCapacitySimulationArguments(['outage'])).toEqual({
      scenarios: ['outage'],
      short: false,
      seed: 1,
      json: false,
      record: false,
    });
    expect(parseCapacitySimulationArguments(['all', '--short', '--seed', '7', '--json', '--record'])).toEqual(
      {
        scenarios: [...SCENARIO_NAMES],
        short: true,
        seed: 7,
        json: true,
        record: true,
      },
    );
    expect(parseCapacitySimulationArguments(['--help'])).toBe('help');
  });

  it('refuses no scenario, an unknown one, two, a planner option and a bad seed (exit 2, one line)', async () => {
    for (const argv of [
      [],
      ['exam-day'],
      ['steady', 'outage'],
      ['steady', '--messages-per-second', '1000'],
      ['steady', '--seed', 'x'],
    ]) {
      const { code, stderr } = await run(...argv);
      expect(code).toBe(2);
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });

  it("says nothing on Node's default heap of a 16 GB machine, tells a full run on a smaller one how to give it room, and a short run nothing", () => {
    const megabytes = (mb: number) => mb * 2 ** 20;
    expect(fullRunHeapAdvice(false, megabytes(4144))).toBeUndefined();
    expect(fullRunHeapAdvice(false, megabytes(FULL_RUN_HEAP_MB))).toBeUndefined();
    expect(fullRunHeapAdvice(false, megabytes(1024))).toMatch(
      new RegExp(
        `^This Node's heap is 1024 MB; .*NODE_OPTIONS=--max-old-space-size=${FULL_RUN_HEAP_MB} npm run capacity-simulation`,
      ),
    );
    expect(fullRunHeapAdvice(true, megabytes(1024))).toBeUndefined();
  });
});
