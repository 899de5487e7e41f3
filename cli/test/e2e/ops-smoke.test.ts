/**
 * `npm run ops -- smoke` against the local stack as `npm start` runs it (three subscribers: two that receive
 * `messages` in both lanes, one that does not): a passing run and its figures, then each way it fails, with
 * exit 1 and the reason in one line. Then on a stack of its own with subscribers limited to a phone number and
 * to a WABA: a body addressed to each, routed by the receiver, and each subscriber awaited for its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isSmokeTestWamid,
  SMOKE_TEST_PHONE_NUMBER_ID,
  SMOKE_TEST_WABA_ID,
} from '../../../contract/smoke-test.ts';
import {
  BRAND_WABA,
  TENANT_NUMBER,
} from '../../../test/support/local-subscribers/smoke-selection-subscribers.ts';
import { type OpsRun, opsInProcess } from '../../../test/support/ops-in-process.ts';
import { spawnTestStack } from '../../../test/support/test-local-stack.ts';
import { PAUSE_TEST_TIMEOUT_MS } from '../../../test/support/wait-for.ts';
import type { SpawnedLocalStack } from '../../local/stack/spawn-local-stack.ts';

const SECRET = 'ops-smoke-e2e-app-secret';

let stack: SpawnedLocalStack;

type Run = OpsRun;

interface SmokeResult {
  readonly ok: boolean;
  readonly webhookUrl: string;
  readonly keys: { readonly message: string; readonly status: string };
  readonly ack: { readonly status: number; readonly ms: number };
  readonly bodies: readonly {
    readonly phoneNumberId: string;
    readonly wabaId: string;
    readonly chosenFor?: string;
    readonly keys: { readonly message: string; readonly status: string };
    readonly subscribers: readonly string[];
  }[];
  readonly subscribers: readonly {
    readonly subscriber: string;
    readonly lane: string;
    readonly key: string;
    readonly status: string;
    readonly doneAfterMs?: number;
    readonly reason?: string;
  }[];
  readonly skippedSubscribers: readonly string[];
  readonly alarms: null;
}

/** `npm run ops -- --local <stack> ARGS` in this process, signing with `appSecret` as a user's shell would. */
function ops(appSecret: string, ...args: string[]): Promise<Run> {
  return opsInProcess(stack.url, args, { env: { ...process.env, WHATSAPP_APP_SECRETS: appSecret } });
}

async function setFaults(faults: object): Promise<void> {
  const response = await fetch(`${stack.url}/local/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(faults),
  });
  expect(response.status).toBe(200);
}

/** Failure: stderr's last line is the reason (`ops: …`), the exit code 1. */
function expectFailure(result: Run, pattern: RegExp): void {
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines.at(-1)).toMatch(/^ops: /);
  expect(lines.at(-1)).toMatch(pattern);
}

/** A local stack of `subscribers` for the describe block it is called in, stopped after it. */
function localStackOf(subscribers: string): void {
  beforeAll(async () => {
    stack = await spawnTestStack({
      env: { WHATSAPP_APP_SECRETS: SECRET, LOCAL_SUBSCRIBERS: subscribers },
    });
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
  });
}

describe('npm run ops -- smoke, against the local stack', () => {
  localStackOf('test/support/local-subscribers/smoke-subscribers.ts');

  it('sends a signed test body, waits for every lane of every subscriber, and reports the times', async () => {
    const result = await ops(SECRET, '--json', 'smoke', '--timeout', '60');

    expect(result.stderr).not.toMatch(/^ops: /m);
    expect(result.code).toBe(0);
    const smoke = JSON.parse(result.stdout) as SmokeResult;
    expect(smoke.ok).toBe(true);
    expect(smoke.webhookUrl).toBe(`${stack.url}/webhook`);
    // No subscriber is limited to numbers or wabas: one body, of the smoke test's own ids.
    expect(smoke.bodies).toMatchObject([
      { phoneNumberId: SMOKE_TEST_PHONE_NUMBER_ID, wabaId: SMOKE_TEST_WABA_ID, keys: smoke.keys },
    ]);
    expect(isSmokeTestWamid(smoke.keys.message.slice('msg:'.length))).toBe(true);
    expect(smoke.ack.status).toBe(200);
    expect(smoke.ack.ms).toBeGreaterThan(0);
    expect(
      smoke.subscribers.map(({ subscriber, lane, key, status }) => [subscriber, lane, key, status]),
    ).toEqual([
      ['bot', 'message', smoke.keys.message, 'done'],
      ['bot', 'status', smoke.keys.status, 'done'],
      ['crm', 'message', smoke.keys.message, 'done'],
      ['crm', 'status', smoke.keys.status, 'done'],
    ]);
    for (const outcome of smoke.subscribers) expect(outcome.doneAfterMs).toBeGreaterThanOrEqual(0);
    expect(smoke.skippedSubscribers).toEqual(['templates']);
    expect(smoke.alarms).toBeNull();
    // What the claims say, read as an operator would.
    const claim = await ops(SECRET, '--json', 'key', smoke.keys.status, '--subscriber', 'crm');
    expect(JSON.parse(claim.stdout)).toMatchObject({ found: true, claim: { status: 'done' } });
  });

  it('prints the ack time, each lane, and that the local stack has no alarms', async () => {
    const result = await ops(SECRET, 'smoke');

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ack +200 in \d+ ms$/m);
    for (const lane of ['bot message', 'bot status', 'crm message', 'crm status']) {
      expect(result.stdout).toMatch(new RegExp(`^  ${lane} +\\d+ ms$`, 'm'));
    }
    expect(result.stdout).toMatch(/^not receiving messages, skipped: templates$/m);
    expect(result.stdout).toMatch(/^alarms: none \(the local stack has no CloudWatch alarms\)$/m);
  });

  it('fails with the reason when the app secret is wrong (401), printing no result', async () => {
    const result = await ops('not-the-stack-secret', 'smoke', '--timeout', '5');

    expectFailure(result, /refused the signature \(401\).*app secret/);
    expect(result.stdout).toBe('');
  });

  it('fails with the reason when the receiver answers 5xx', async () => {
    await setFaults({ webhook: { mode: 'error' } });
    try {
      expectFailure(
        await ops(SECRET, 'smoke', '--timeout', '5'),
        /answered 503: the receiver could not enqueue/,
      );
    } finally {
      await setFaults({ webhook: { mode: 'up' } });
    }
  });

  it(
    'fails naming the subscriber whose claims are not done in time (a paused consumer)',
    async () => {
      const paused = await ops(SECRET, '--subscriber', 'bot', 'pause');
      expect(paused.code).toBe(0);
      try {
        // Long enough for crm to be done on a loaded machine; bot, paused, never claims.
        const result = await ops(SECRET, '--json', 'smoke', '--timeout', '6');

        expectFailure(
          result,
          /2 of 4 claims not done after 6 s; bot \(message lane, msg:wamid\.SMOKE_TEST\.[^)]+\): never claimed/,
        );
        const smoke = JSON.parse(result.stdout) as SmokeResult;
        expect(smoke.ok).toBe(false);
        expect(
          smoke.subscribers.filter((outcome) => outcome.status !== 'done').map((o) => o.subscriber),
        ).toEqual(['bot', 'bot']);
        expect(
          smoke.subscribers.filter((outcome) => outcome.subscriber === 'crm').map((o) => o.status),
        ).toEqual(['done', 'done']);
      } finally {
        expect((await ops(SECRET, '--subscriber', 'bot', 'resume')).code).toBe(0);
      }
    },
    PAUSE_TEST_TIMEOUT_MS,
  );

  it('fails saying the claims are still in flight when the handlers outlast the timeout', async () => {
    // Every local handler now takes 8 s: the claims are taken, their leases running, when ops gives up.
    await setFaults({ effect: { delayMs: 8000, distribution: 'fixed' } });
    try {
      // Claimed within 4 s, done only after 8 s: room for a loaded machine either way.
      const result = await ops(SECRET, '--json', 'smoke', '--timeout', '4');

      expectFailure(
        result,
        /4 of 4 claims not done after 4 s; bot \(message lane, [^)]+\): claim still in flight/,
      );
      const smoke = JSON.parse(result.stdout) as SmokeResult;
      expect(new Set(smoke.subscribers.map((outcome) => outcome.status))).toEqual(new Set(['in-flight']));
    } finally {
      await setFaults({ effect: { delayMs: 0, distribution: 'fixed' } });
    }
  });
});

describe('npm run ops -- smoke, with subscribers limited to a phone number and to a WABA', () => {
  localStackOf('test/support/local-subscribers/smoke-selection-subscribers.ts');

  it('addresses a body to the number and one to the WABA, and each subscriber claims the bodies routed to it', async () => {
    const result = await ops(SECRET, '--json', 'smoke', '--timeout', '60');

    expect(result.stderr).not.toMatch(/^ops: /m);
    expect(result.code).toBe(0);
    const smoke = JSON.parse(result.stdout) as SmokeResult;
    expect(smoke.ok).toBe(true);
    const [toNumber, toWaba] = smoke.bodies;
    expect(smoke.bodies).toMatchObject([
      {
        phoneNumberId: TENANT_NUMBER,
        wabaId: SMOKE_TEST_WABA_ID,
        chosenFor: 'tenant',
        subscribers: ['crm', 'tenant'],
      },
      {
        phoneNumberId: SMOKE_TEST_PHONE_NUMBER_ID,
        wabaId: BRAND_WABA,
        chosenFor: 'brand',
        subscribers: ['crm', 'brand'],
      },
    ]);
    if (toNumber === undefined || toWaba === undefined) throw new Error('two bodies expected');
    for (const { keys } of smoke.bodies)
      expect(isSmokeTestWamid(keys.message.slice('msg:'.length))).toBe(true);
    // crm, without a limit, gets both bodies; tenant and brand the one addressed to them.
    expect(
      smoke.subscribers.map(({ subscriber, lane, key, status }) => [subscriber, lane, key, status]),
    ).toEqual([
      ['crm', 'message', toNumber.keys.message, 'done'],
      ['crm', 'status', toNumber.keys.status, 'done'],
      ['crm', 'message', toWaba.keys.message, 'done'],
      ['crm', 'status', toWaba.keys.status, 'done'],
      ['tenant', 'message', toNumber.keys.message, 'done'],
      ['tenant', 'status', toNumber.keys.status, 'done'],
      ['brand', 'message', toWaba.keys.message, 'done'],
      ['brand', 'status', toWaba.keys.status, 'done'],
    ]);

    // The receiver routed the WABA's body away from tenant: it has no claim of it, and key says why it may not.
    const other = await ops(SECRET, '--json', '--subscriber', 'tenant', 'key', toWaba.keys.message);
    expect(other.code).toBe(3);
    expect(JSON.parse(other.stdout)).toMatchObject({
      found: false,
      meaning: `never seen, or expired after the retention, or an event outside the subscriber's numbers ${TENANT_NUMBER} (the key does not say whose it is)`,
    });
    // A key naming another WABA: brand, limited to its WABA, never claims it.
    const key = 'account_update:102290129340777:1750000000:VERIFIED_ACCOUNT:-';
    const refused = await ops(SECRET, '--subscriber', 'brand', 'key', key);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe(
      `ops: subscriber brand receives only the events of its wabas ${BRAND_WABA}, and ${key} is of WABA 102290129340777, so it never claims it`,
    );
  });

  it('prints each body’s address and each subscriber’s lanes per body', async () => {
    const result = await ops(SECRET, 'smoke');

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(
        `^body 1 +phone number ${TENANT_NUMBER} \\(for tenant\\): msg:wamid\\.SMOKE_TEST\\.[^,]+, st:[^;]+; ack 200 in \\d+ ms$`,
        'm',
      ),
    );
    expect(result.stdout).toMatch(new RegExp(`^body 2 +WABA ${BRAND_WABA} \\(for brand\\): `, 'm'));
    for (const lane of [
      'crm message (body 1)',
      'crm message (body 2)',
      'tenant message (body 1)',
      'tenant status (body 1)',
      'brand message (body 2)',
    ]) {
      expect(result.stdout).toMatch(new RegExp(`^  ${lane.replace(/[()]/g, '\\$&')} +\\d+ ms$`, 'm'));
    }
  });
});
