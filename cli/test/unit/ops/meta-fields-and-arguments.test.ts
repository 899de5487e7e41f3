import { describe, expect, it } from 'vitest';
import { GRAPH_API_VERSION } from '../../../../contract/meta-graph-api.ts';
import { WHATSAPP_WEBHOOK_FIELDS, wantedWebhookFields } from '../../../../contract/meta-webhook-fields.ts';
import { KNOWN_FIELDS } from '../../../../functions/events/field-rules.ts';
import { parseOpsArguments } from '../../../ops/arguments.ts';
import { UsageError } from '../../../ops/errors.ts';

const TOKEN_ENV = { META_ACCESS_TOKEN: 'a-token' };

function usageError(args: string[], env: NodeJS.ProcessEnv = TOKEN_ENV): string {
  try {
    parseOpsArguments(args, env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`${args.join(' ')} parsed`);
}

describe('the webhook fields Meta offers', () => {
  it('are the fields docs/design.md §1 derives keys for, no more, no less', () => {
    expect([...WHATSAPP_WEBHOOK_FIELDS].sort()).toEqual([...KNOWN_FIELDS].sort());
  });

  it('the union of what subscribers want, every field for one without a filter', () => {
    expect(wantedWebhookFields([['messages'], ['messages', 'account_update']])).toEqual([
      'account_update',
      'messages',
    ]);
    expect(wantedWebhookFields([['messages'], undefined])).toEqual([...WHATSAPP_WEBHOOK_FIELDS].sort());
  });
});

describe('meta and smoke arguments', () => {
  it('meta subscribe: the stack, app, WABAs, fields, override; the token by where it is, never its value', () => {
    const parsed = parseOpsArguments(
      [
        '--stack',
        'prod',
        'meta',
        'subscribe',
        '--app-id',
        '123',
        '--waba',
        '456',
        '--waba',
        '789',
        '--fields',
        'messages,account_update',
        '--override',
      ],
      TOKEN_ENV,
    );
    expect(parsed).toMatchObject({
      help: false,
      command: {
        name: 'meta-subscribe',
        stackName: 'prod',
        appId: '123',
        wabaIds: ['456', '789'],
        fields: ['account_update', 'messages'],
        override: true,
        token: { kind: 'environment', variable: 'META_ACCESS_TOKEN' },
        graph: { baseUrl: 'https://graph.facebook.com', version: GRAPH_API_VERSION },
      },
    });
    expect(JSON.stringify(parsed)).not.toContain('a-token');
  });

  it('meta status with a token secret, another Graph URL and version', () => {
    expect(
      parseOpsArguments(
        [
          '--stack',
          'prod',
          'meta',
          'status',
          '--app-id',
          '123',
          '--token-secret',
          'meta/token',
          '--graph-version',
          'v25.0',
        ],
        {
          META_GRAPH_URL: 'http://127.0.0.1:9999/ignored',
        },
      ),
    ).toMatchObject({
      command: {
        name: 'meta-status',
        fields: undefined,
        override: false,
        token: { kind: 'secret', secretName: 'meta/token' },
        graph: { baseUrl: 'http://127.0.0.1:9999', version: 'v25.0' },
      },
    });
  });

  it('smoke: the target and the timeout', () => {
    expect(parseOpsArguments(['smoke'], {})).toMatchObject({
      command: { name: 'smoke', target: { kind: 'local', url: 'http://localhost:3000' }, timeoutMs: 60_000 },
    });
    expect(parseOpsArguments(['--stack', 'prod', 'smoke', '--timeout', '2.5'], {})).toMatchObject({
      command: { name: 'smoke', target: { kind: 'stack', stackName: 'prod' }, timeoutMs: 2500 },
    });
  });

  it.each([
    [['meta', 'status', '--app-id', '1'], /meta needs --stack NAME/],
    [['--stack', 's', 'meta', 'status'], /meta needs --app-id ID/],
    [['--stack', 's', 'meta', 'status', '--app-id', '1/../me'], /--app-id needs a numeric id/],
    [['--stack', 's', 'meta', 'subscribe', '--app-id', '1', '--waba', 'x'], /--waba needs a numeric id/],
    [
      ['--stack', 's', 'meta', 'subscribe', '--app-id', '1', '--fields', 'messages,statuses'],
      /statuses is not a whatsapp_business_account webhook field/,
    ],
    [
      ['--stack', 's', 'meta', 'status', '--app-id', '1', '--override'],
      /meta status takes no --override option/,
    ],
    [
      ['--stack', 's', 'meta', 'status', '--app-id', '1', '--graph-version', '26'],
      /looks like v26\.0, got "26"/,
    ],
    [['--stack', 's', 'meta', 'drop'], /meta needs one of subscribe, status, not "drop"/],
    [['smoke', '--timeout', '0'], /--timeout needs seconds/],
    [['smoke', 'now'], /smoke takes no operand/],
  ])('%j: %s', (args, pattern) => {
    expect(usageError(args)).toMatch(pattern);
  });

  const statusWithGraphUrl = (graphUrl: string) => ({ ...TOKEN_ENV, META_GRAPH_URL: graphUrl });
  const metaStatus = ['--stack', 's', 'meta', 'status', '--app-id', '1'];

  it.each([
    'http://graph.facebook.com',
    'http://graph.example.com:8080/v26.0',
    'http://10.0.0.5:9999',
    'http://127.0.0.1.nip.io:9999',
    'http://[::ffff:127.0.0.1]:9999',
    'ftp://127.0.0.1/',
  ])('refuses META_GRAPH_URL=%s: the token must not travel in clear', (graphUrl) => {
    expect(usageError(metaStatus, statusWithGraphUrl(graphUrl))).toMatch(
      /^META_GRAPH_URL needs an https URL \(http only to this machine: localhost, 127\.0\.0\.0\/8, \[::1\]\)/,
    );
  });

  it.each([
    ['https://graph.example.com:8443/x', 'https://graph.example.com:8443'],
    ['http://localhost:9999', 'http://localhost:9999'],
    ['http://127.0.0.1:9999', 'http://127.0.0.1:9999'],
    ['http://127.8.9.10:9999', 'http://127.8.9.10:9999'],
    ['http://[::1]:9999', 'http://[::1]:9999'],
  ])('accepts META_GRAPH_URL=%s', (graphUrl, baseUrl) => {
    expect(parseOpsArguments(metaStatus, statusWithGraphUrl(graphUrl))).toMatchObject({
      command: { graph: { baseUrl } },
    });
  });

  it('refuses meta without a token, saying where to put one', () => {
    expect(usageError(['--stack', 's', 'meta', 'status', '--app-id', '1'], {})).toMatch(
      /set META_ACCESS_TOKEN \(APP_ID\|APP_SECRET, or a system user token\) or name a Secrets Manager secret with --token-secret NAME/,
    );
  });
});
