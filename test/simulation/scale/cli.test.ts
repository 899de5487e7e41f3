import { describe, expect, it } from 'vitest';
import { parseCapacityArguments, runCapacity } from '../../../ops/capacity/run-capacity.ts';
import { FULL_RUN_HEAP_MB, fullRunHeapAdvice } from './run-scale.ts';
import { SCENARIO_NAMES } from './scenarios.ts';

async function run(...argv: string[]) {
  let stderr = '';
  const code = await runCapacity(argv, {
    stdout: { write: () => undefined },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stderr };
}

describe('npm run capacity -- --simulate', () => {
  it('reads a scenario, all of them, --short, --seed and --write-docs', () => {
    expect(parseCapacityArguments(['--simulate', 'outage'])).toEqual({
      kind: 'simulate',
      scenarios: ['outage'],
      short: false,
      seed: 1,
      json: false,
      writeDocs: false,
    });
    expect(
      parseCapacityArguments(['--simulate', 'all', '--short', '--seed', '7', '--json', '--write-docs']),
    ).toEqual({
      kind: 'simulate',
      scenarios: [...SCENARIO_NAMES],
      short: true,
      seed: 7,
      json: true,
      writeDocs: true,
    });
  });

  it('leaves --write-docs alone the planner page', () => {
    expect(parseCapacityArguments(['--write-docs'])).toEqual({ kind: 'write-docs' });
  });

  it('refuses an unknown scenario, a planner option beside it, and --short or --seed without it (exit 2)', async () => {
    for (const argv of [
      ['--simulate', 'exam-day'],
      ['--simulate', 'steady', '--messages-per-second', '1000'],
      ['--short'],
      ['--messages-per-second', '1000', '--seed', '3'],
    ]) {
      const { code, stderr } = await run(...argv);
      expect(code).toBe(2);
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });

  it('tells a full run on a smaller heap than the recorded ones how to give it room, and a short run nothing', () => {
    const megabytes = (mb: number) => mb * 2 ** 20;
    expect(fullRunHeapAdvice(false, megabytes(4144))).toMatch(
      new RegExp(
        `^This Node's heap is 4144 MB; .*NODE_OPTIONS=--max-old-space-size=${FULL_RUN_HEAP_MB} npm run capacity`,
      ),
    );
    expect(fullRunHeapAdvice(true, megabytes(4144))).toBeUndefined();
    expect(fullRunHeapAdvice(false, megabytes(FULL_RUN_HEAP_MB))).toBeUndefined();
  });
});
