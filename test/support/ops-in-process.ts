/**
 * `npm run ops -- --local <url> ARGS` run in the test's own process: the command's exit code and what it wrote.
 * Starting the CLI under tsx costs about two seconds a run, and the end-to-end files run dozens; each file
 * keeps one run through npm to show the real process (its exit code, no SDK warning).
 */
import { type OpsDependencies, resolveTarget, runOps } from '../../cli/ops/run-ops.ts';

export interface OpsRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function opsInProcess(
  stackUrl: string,
  args: readonly string[],
  dependencies: Omit<OpsDependencies, 'resolveTarget'> = {},
): Promise<OpsRun> {
  let stdout = '';
  let stderr = '';
  const code = await runOps(
    ['--local', stackUrl, ...args],
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    },
    { resolveTarget, ...dependencies },
  );
  return { code, stdout, stderr };
}
