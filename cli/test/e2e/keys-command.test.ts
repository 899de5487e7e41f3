/**
 * `npm run keys -- FILE` as a user runs it: a child process (npm, then tsx) whose stdout is exactly the keys,
 * one per line, and whose stderr is empty: no Node.js or AWS SDK warning, nothing else (docs/design.md §6).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // The SDK's warning switch unset, as in a user's shell (vitest.config.ts sets it for the tests).
    const env = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: '' };
    execFile(command, args, { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm run keys -- FILE', () => {
  it.each(['message-text', 'multi-entry-multi-change'])(
    '%s: prints exactly the keys on stdout and nothing on stderr',
    async (name) => {
      const body = `test/fixtures/webhooks/${name}.json`;
      const expected = readFileSync(
        new URL(`../../../test/fixtures/webhooks/${name}.keys`, import.meta.url),
        'utf8',
      );

      // --silent: npm's own banner ("> whatsapp-webhook-dedup@… keys") would otherwise go to stdout.
      const result = await run('npm', ['run', '--silent', 'keys', '--', body]);

      expect(result).toEqual({ code: 0, stdout: expected, stderr: '' });
    },
  );
});
