/**
 * `meta subscribe` and `meta status` against a local server answering as Meta's Graph API documentation shows
 * (fake-graph-api.ts), with a webhook whose GET handshake is the receiver's own code: the requests (method,
 * path, form fields, where the token goes), what status reports, each error's one-line explanation, and that
 * the token never appears in any output.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WHATSAPP_WEBHOOK_FIELDS } from '../../../../contract/meta-webhook-fields.ts';
import { answerVerificationHandshake } from '../../../../functions/receiver/verification-handshake.ts';
import { parseOpsArguments } from '../../../ops/arguments.ts';
import type { CommandContext } from '../../../ops/commands/command-context.ts';
import { metaStatusCommand, metaSubscribeCommand } from '../../../ops/commands/meta.ts';
import { OpsError } from '../../../ops/errors.ts';
import { GraphClient } from '../../../ops/meta/graph-client.ts';
import { GraphApiError } from '../../../ops/meta/graph-errors.ts';
import type { MetaOptions } from '../../../ops/meta/meta-arguments.ts';
import { Output } from '../../../ops/output.ts';
import type { Deployment } from '../../../ops/target/deployment.ts';
import type { OpsTarget, SubscriberTarget } from '../../../ops/target/ops-target.ts';
import { FakeGraphApi } from './fake-graph-api.ts';

const TOKEN = '1234567890|app-secret-value-never-printed';
const WEAK_TOKEN = 'EAAG-system-user-token-without-waba-permission';
const APP_ID = '1234567890';
const WABA_ID = '102290129340398';
const VERIFY_TOKEN = 'stack-verify-token';

let graph: FakeGraphApi;
let webhook: Server;
/** The verify token the webhook answers with: the stack's, unless a test changes it. */
let webhookVerifyToken = VERIFY_TOKEN;
let webhookUrl: string;

beforeAll(async () => {
  webhook = createServer((request, response) => {
    const query = Object.fromEntries(new URL(request.url ?? '/', 'http://x').searchParams);
    const answer = answerVerificationHandshake(query, webhookVerifyToken);
    response.writeHead(answer.statusCode, { 'content-type': 'text/plain' }).end(answer.body);
  });
  webhook.listen(0, '127.0.0.1');
  await once(webhook, 'listening');
  webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/webhook`;
});

afterAll(async () => {
  webhook.close();
  await once(webhook, 'close');
});

beforeEach(async () => {
  webhookVerifyToken = VERIFY_TOKEN;
  graph = await FakeGraphApi.start({
    token: TOKEN,
    tokenWithoutWabaPermission: WEAK_TOKEN,
    appIds: [APP_ID],
    wabaIds: [WABA_ID],
  });
});

afterEach(async () => {
  await graph.stop();
});

function subscriber(name: string, fields: readonly string[] | undefined): SubscriberTarget {
  return { name, fields, numbers: undefined, wabas: undefined, keyNamespace: name, lanes: [] };
}

const BOT_AND_CRM = [subscriber('bot', ['messages']), subscriber('crm', ['messages', 'account_update'])];

function run(subscribers: readonly SubscriberTarget[] = BOT_AND_CRM, json = false) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const context: CommandContext = {
    target: { subscribers } as unknown as OpsTarget,
    output: new Output(
      { stdout: { write: (t: string) => stdout.push(t) }, stderr: { write: (t: string) => stderr.push(t) } },
      json,
    ),
    clock: Date.now,
    sleep: async () => {},
    env: {},
    subscriber: () => {
      throw new Error('meta works on every subscriber');
    },
  };
  const deployment: Deployment = {
    description: 'stack prod',
    webhookUrl,
    webhookSecrets: async () => ({ appSecrets: ['meta-app-secret'], verifyToken: VERIFY_TOKEN }),
    alarmStates: undefined,
    accessTokenFromSecret: async (name) =>
      name === 'meta/token' ? TOKEN : Promise.reject(new Error('no secret')),
    close() {},
  };
  const dependencies = { resolveDeployment: async () => deployment, env: { META_ACCESS_TOKEN: TOKEN } };
  return {
    stdout,
    stderr,
    subscribe: (args: string[] = [], env: NodeJS.ProcessEnv = {}) =>
      metaSubscribeCommand(context, options('subscribe', args, env), {
        ...dependencies,
        env: { META_ACCESS_TOKEN: TOKEN, ...env },
      }),
    status: (args: string[] = [], env: NodeJS.ProcessEnv = {}) =>
      metaStatusCommand(context, options('status', args, env), {
        ...dependencies,
        env: { META_ACCESS_TOKEN: TOKEN, ...env },
      }),
    output: () => stdout.join('') + stderr.join(''),
  };
}

function options(verb: 'subscribe' | 'status', args: string[], env: NodeJS.ProcessEnv): MetaOptions {
  const parsed = parseOpsArguments(['--stack', 'prod', 'meta', verb, '--app-id', APP_ID, ...args], {
    META_ACCESS_TOKEN: TOKEN,
    META_GRAPH_URL: graph.url,
    ...env,
  });
  if (parsed.help || (parsed.command.name !== 'meta-subscribe' && parsed.command.name !== 'meta-status')) {
    throw new Error('not a meta command');
  }
  return parsed.command;
}

async function failure(promise: Promise<void>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpsError);
  return (error as OpsError).message;
}

describe('meta subscribe', () => {
  it('subscribes the app with the stack URL, verify token and the union of the fields, token in the header', async () => {
    const { subscribe, stdout, output } = run();
    await subscribe(['--waba', WABA_ID]);

    expect(graph.requests.map(({ method, path }) => `${method} ${path}`)).toEqual([
      `POST /v26.0/${APP_ID}/subscriptions`,
      `POST /v26.0/${WABA_ID}/subscribed_apps`,
    ]);
    const [app, waba] = graph.requests;
    expect(app?.form).toEqual({
      object: 'whatsapp_business_account',
      callback_url: webhookUrl,
      verify_token: VERIFY_TOKEN,
      fields: 'account_update,messages',
    });
    expect(waba?.form).toEqual({});
    for (const request of graph.requests) {
      expect(request.authorization).toBe(`Bearer ${TOKEN}`);
      expect(request.query).toEqual({});
      expect(Object.keys(request.form)).not.toContain('access_token');
    }
    expect(stdout.join('')).toMatch(/^fields +account_update, messages$/m);
    expect(output()).not.toContain(TOKEN);
    expect(output()).not.toContain(VERIFY_TOKEN);
  });

  it('a subscriber without a field filter means every field Meta offers', async () => {
    await run([subscriber('bot', ['messages']), subscriber('all', undefined)]).subscribe();

    expect(graph.requests[0]?.form.fields?.split(',')).toEqual([...WHATSAPP_WEBHOOK_FIELDS].sort());
  });

  it('refuses a subscriber field Meta does not offer, before calling Meta', async () => {
    const message = await failure(run([subscriber('bot', ['messages', 'statuses'])]).subscribe());

    expect(message).toMatch(/the subscribers want statuses, which Meta does not offer/);
    expect(graph.requests).toEqual([]);
  });

  it('--override sets the stack as the WABA callback, with the verify token; --fields replaces the union', async () => {
    const { subscribe, stderr } = run();
    await subscribe(['--waba', WABA_ID, '--override', '--fields', 'messages']);

    expect(graph.requests[0]?.form.fields).toBe('messages');
    expect(graph.requests[1]?.form).toEqual({
      override_callback_uri: webhookUrl,
      verify_token: VERIFY_TOKEN,
    });
    expect(stderr.join('')).toMatch(/--fields leaves out fields the subscribers want: account_update/);
    expect(graph.subscribedApps.get(WABA_ID)?.[0]?.override_callback_uri).toBe(webhookUrl);
  });

  it('calls the Graph version given (--graph-version, META_GRAPH_VERSION), the pinned one otherwise', async () => {
    await run().subscribe(['--graph-version', 'v25.0']);
    await run().subscribe([], { META_GRAPH_VERSION: 'v24.0' });

    expect(graph.requests.map((request) => request.path)).toEqual([
      `/v25.0/${APP_ID}/subscriptions`,
      `/v24.0/${APP_ID}/subscriptions`,
    ]);
  });

  it('reads the token from a Secrets Manager secret with --token-secret', async () => {
    await run().subscribe(['--token-secret', 'meta/token'], { META_ACCESS_TOKEN: '' });

    expect(graph.requests[0]?.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('says the stack must answer the handshake first when Meta’s verification GET fails, with a curl to check it', async () => {
    webhookVerifyToken = 'a-different-token';
    const { subscribe } = run();
    const message = await failure(subscribe(['--waba', WABA_ID]));

    expect(message).toMatch(/Meta's verification GET to the callback URL failed/);
    expect(message).toMatch(/HTTP Status Code = 403/);
    expect(message).toMatch(/the stack must answer the handshake first/);
    expect(message).toContain(
      `curl -s "${webhookUrl}?hub.mode=subscribe&hub.verify_token=$VERIFY_TOKEN&hub.challenge=42"`,
    );
    expect(message).not.toContain(VERIFY_TOKEN);
    expect(graph.requests).toHaveLength(1);
  });
});

describe('meta status', () => {
  it('matches the stack after subscribe', async () => {
    await run().subscribe(['--waba', WABA_ID]);
    const { status, stdout } = run(BOT_AND_CRM, true);
    await status(['--waba', WABA_ID]);

    expect(graph.requests.slice(2).map(({ method, path }) => `${method} ${path}`)).toEqual([
      `GET /v26.0/${APP_ID}/subscriptions`,
      `GET /v26.0/${WABA_ID}/subscribed_apps`,
    ]);
    expect(JSON.parse(stdout.join(''))).toMatchObject({ ok: true, findings: [] });
  });

  it('names every difference: URL, missing and extra fields, a WABA not subscribed, an override elsewhere', async () => {
    graph.appSubscriptions.set(APP_ID, [
      {
        object: 'whatsapp_business_account',
        callback_url: 'https://old.example.com/webhook',
        active: true,
        fields: [
          { name: 'messages', version: 'v26.0' },
          { name: 'security', version: 'v26.0' },
        ],
      },
    ]);
    graph.subscribedApps.set('555', [
      {
        whatsapp_business_api_data: {
          id: APP_ID,
          link: 'https://www.facebook.com/games/?app_id=1',
          name: 'Test app',
        },
        override_callback_uri: 'https://elsewhere.example.com/hook',
      },
    ]);
    const { status, stdout } = run();
    const message = await failure(status(['--waba', WABA_ID, '--waba', '555']));

    expect(message).toMatch(/^5 difference\(s\) between Meta's subscriptions and the stack: /);
    const text = stdout.join('');
    expect(text).toContain(
      `the app's callback URL is https://old.example.com/webhook, not the stack's ${webhookUrl}`,
    );
    expect(text).toContain('fields the subscribers want but the app is not subscribed to: account_update');
    expect(text).toContain(
      'fields the app is subscribed to but no subscriber wants (delivered, acknowledged, unused): security',
    );
    expect(text).toContain(`WABA ${WABA_ID} has not subscribed the app`);
    expect(text).toContain('WABA 555 overrides the callback with https://elsewhere.example.com/hook');
  });

  it('says when the app has no subscription at all', async () => {
    const message = await failure(run().status());

    expect(message).toMatch(/the app has no whatsapp_business_account subscription/);
  });
});

describe('Graph errors, one line each, never the token', () => {
  it('an invalid or expired token (OAuthException 190)', async () => {
    const { status, output } = run();
    const message = await failure(status([], { META_ACCESS_TOKEN: 'expired-token-value' }));

    expect(message).toMatch(
      /^GET \/v26\.0\/1234567890\/subscriptions: the access token is invalid or expired \(OAuthException 190\)/,
    );
    expect(message).not.toContain('\n');
    expect(message).not.toContain('expired-token-value');
    expect(output()).not.toContain('expired-token-value');
  });

  it('a missing permission (code 200)', async () => {
    const { subscribe, output } = run();
    const message = await failure(subscribe(['--waba', WABA_ID], { META_ACCESS_TOKEN: WEAK_TOKEN }));

    expect(message).toMatch(
      new RegExp(`^POST /v26\\.0/${WABA_ID}/subscribed_apps: a permission is missing \\(code 200\\)`),
    );
    expect(message).toContain('whatsapp_business_management');
    expect(message).not.toContain(WEAK_TOKEN);
    expect(output()).not.toContain(WEAK_TOKEN);
  });

  it('an unknown app or WABA (code 100, subcode 33)', async () => {
    const unknownApp = await failure(run().status(['--app-id', '999']));
    const unknownWaba = await failure(run().status(['--waba', '777']));

    expect(unknownApp).toMatch(
      /^GET \/v26\.0\/999\/subscriptions: unknown app 999: no such id, or the token cannot see it/,
    );
    expect(unknownWaba).toMatch(/^GET \/v26\.0\/777\/subscribed_apps: unknown WABA 777/);
  });

  it('a token echoed in an error message is redacted', async () => {
    // Meta's 190 message does not quote the token; a proxy or a future message that did is redacted all the same.
    const echo = createServer((_request, response) => {
      response.writeHead(400, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: { message: `Malformed access token ${TOKEN}`, type: 'OAuthException', code: 190 },
        }),
      );
    });
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    try {
      const client = new GraphClient({
        baseUrl: `http://127.0.0.1:${(echo.address() as AddressInfo).port}`,
        version: 'v26.0',
        accessToken: TOKEN,
      });
      const error = await client.get('app 1', '/1/subscriptions').catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(GraphApiError);
      expect((error as Error).message).toContain('Malformed access token [token]');
      expect((error as Error).message).not.toContain(TOKEN);
    } finally {
      echo.close();
    }
  });
});
