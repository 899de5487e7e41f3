/**
 * The defaults docs/forwarding.md states are the code's: the shape, the timeout and its bound, what a refusal
 * keeps out of the logs, and where the local stack reads the secret; and decisions.md's forwarding records.
 */
import { describe, expect, it } from 'vitest';
import { ENV } from '../../../contract/environment.ts';
import {
  DEFAULT_FORWARD_TIMEOUT_SECONDS,
  FORWARD_SHAPES,
  MAX_FORWARD_TIMEOUT_SECONDS,
  resolveForward,
} from '../../../contract/forwarding.ts';
import { KEPT_ANSWER_BYTES } from '../../../functions/forward/forwarder.ts';
import { SECRETS_MAX_AGE_SECONDS } from '../../../functions/receiver/webhook-secrets.ts';
import { prose } from './stated-defaults-support.ts';

const page = prose('docs/forwarding.md');

describe("docs/forwarding.md's stated defaults", () => {
  const resolved = resolveForward({ url: 'https://example.com/hook' }, { loopbackHttp: false });

  it('states the default shape and the shapes there are', () => {
    expect(typeof resolved === 'string' ? resolved : resolved.shape).toBe('meta');
    expect(FORWARD_SHAPES).toEqual(['meta', 'event']);
    expect(page).toContain('| `shape` | `meta` (the default) or `event`, below |');
  });

  it('states the timeout default and bound', () => {
    expect(typeof resolved === 'string' ? resolved : resolved.timeoutSeconds).toBe(
      DEFAULT_FORWARD_TIMEOUT_SECONDS,
    );
    expect(page).toContain(
      `abandoned and retried; default ${DEFAULT_FORWARD_TIMEOUT_SECONDS}, at most ${MAX_FORWARD_TIMEOUT_SECONDS} |`,
    );
  });

  it("names the local stack's app secret variable", () => {
    expect(page).toContain(`signs with the local app secret (\`${ENV.appSecrets}\`, the first)`);
  });
});

describe("docs/decisions.md's forwarding records", () => {
  const decisions = prose('docs/decisions.md');

  it('state the secret cache and the kept answer as the code has them', () => {
    expect(decisions).toContain(`cached for ${SECRETS_MAX_AGE_SECONDS / 60} minutes like the receiver's`);
    expect(decisions).toContain(`the first ${KEPT_ANSWER_BYTES} bytes of the answer kept on the error only`);
  });
});
