/**
 * `ops --stack NAME` on a machine not set up for AWS yet, with the real SDK: no region, then no credentials.
 * Each is one line saying what to set, not the SDK's words.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runOps } from '../../../ops/run-ops.ts';

const AWS_VARIABLES = [
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_PROFILE',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_CONFIG_FILE',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_EC2_METADATA_DISABLED',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
];
let saved: Record<string, string | undefined>;

beforeEach(() => {
  saved = Object.fromEntries(AWS_VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of AWS_VARIABLES) delete process.env[name];
  process.env.AWS_CONFIG_FILE = '/nonexistent/aws-config';
  process.env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent/aws-credentials';
  // No instance metadata here: without this the SDK would wait for it before giving up.
  process.env.AWS_EC2_METADATA_DISABLED = 'true';
});

afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function ops(args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await runOps(args, {
    stdout: { write: () => true },
    stderr: {
      write: (text: string) => {
        stderr += text;
        return true;
      },
    },
  });
  return { code, stderr };
}

describe('ops against a deployed stack, before AWS is set up', () => {
  it('says to set a region', async () => {
    const { code, stderr } = await ops(['--stack', 'whatsapp-webhook-dedup', 'dlq', 'stats']);
    expect(code).toBe(1);
    expect(stderr).toBe(
      'ops: no AWS region: set AWS_REGION (e.g. AWS_REGION=eu-west-1), or AWS_PROFILE to a profile with a region\n',
    );
  });

  it('says to set credentials', async () => {
    process.env.AWS_REGION = 'eu-west-1';
    const { code, stderr } = await ops(['--stack', 'whatsapp-webhook-dedup', 'dlq', 'stats']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^ops: no AWS credentials: set AWS_PROFILE to a configured profile .*\n$/);
  });
});
