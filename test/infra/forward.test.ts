/**
 * Forward subscribers in the construct (docs/design.md, "Forwarding"): a subscriber defined by `forward`
 * gets this package's forwarding consumer, told where to send (`FORWARD`) and allowed to read only the secret
 * it signs with: the webhook secret by default (its first app secret signs), or the secret it names.
 * Definitions that cannot work are refused before anything is built.
 */
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { decodeForwardEnvironment, ENV } from '../../contract/environment.ts';
import { DEFAULT_FORWARD_TIMEOUT_SECONDS } from '../../contract/forwarding.ts';
import { UnsafeSettingsError } from '../../contract/settings.ts';
import { FORWARD_CONSUMER_ENTRY } from '../../lib/defaults.ts';
import { WhatsAppWebhookDedup } from '../../lib/whatsapp-webhook-dedup.ts';
import { actionsOf, statementsOfRole, synthStack } from '../support/synth-stack.ts';

const CHATWOOT = 'https://chat.example.com/webhooks/whatsapp/+15550001111';
const HOOKS = 'https://hooks.example.com/whatsapp';
const LEGACY = 'https://legacy.example.com/whatsapp';
const WIDE = 'https://wide.example.com/whatsapp';

const { template } = synthStack({
  pipeline: {
    subscribers: {
      bot: { entry: 'functions/examples/subscribers/bot.ts', fields: ['messages'] },
      chatwoot: { forward: { url: CHATWOOT } },
      hooks: {
        forward: { url: HOOKS, shape: 'event', secretName: 'hooks-signing', timeoutSeconds: 30 },
        fields: ['messages'],
      },
      legacy: {
        forward: { url: LEGACY, batch: true, headersSecretName: 'legacy-headers', maxInFlight: 9 },
      },
      wide: { forward: { url: WIDE, maxInFlight: 60 }, settings: { maxConcurrency: 10 } },
    },
  },
});

/** A template string value: an `Fn::Join` with each token written as «its JSON, single-quoted». */
function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  const [separator, parts] = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  return parts
    .map((part) => (typeof part === 'string' ? part : `«${JSON.stringify(part).replaceAll('"', "'")}»`))
    .join(separator);
}

/** The `FORWARD` variable of every consumer function whose logical id starts with `prefix`. */
function forwardOf(prefix: string) {
  const functions = template.findResources('AWS::Lambda::Function');
  return Object.entries(functions)
    .filter(([id]) => id.startsWith(prefix))
    .map(([id, fn]) => {
      const raw = fn.Properties.Environment.Variables[ENV.forward];
      return { id, forward: raw === undefined ? undefined : JSON.parse(joined(raw)) };
    });
}

describe('a forward subscriber', () => {
  it("runs this package's forwarding consumer in each of its lanes, a code subscriber its own entry", () => {
    expect(FORWARD_CONSUMER_ENTRY).toMatch(/functions\/forward-consumer\.ts$/);
    const chatwoot = forwardOf('WebhookSubscriberChatwoot');
    expect(chatwoot.map(({ id }) => id).sort()).toEqual([
      expect.stringMatching(/^WebhookSubscriberChatwootConsumer[0-9A-F]{8}$/),
      expect.stringMatching(/^WebhookSubscriberChatwootMessageConsumer[0-9A-F]{8}$/),
    ]);
    expect(forwardOf('WebhookSubscriberBot').every(({ forward }) => forward === undefined)).toBe(true);
  });

  it('is told its destination, shape and timeout, and signs with the first app secret by default', () => {
    for (const { forward } of forwardOf('WebhookSubscriberChatwoot')) {
      expect(forward).toMatchObject({
        url: CHATWOOT,
        shape: 'meta',
        timeoutSeconds: DEFAULT_FORWARD_TIMEOUT_SECONDS,
      });
      expect(forward.secret.appSecret).toBe(true);
      expect(JSON.stringify(forward.secret.secretId)).toContain('WebhookWebhookSecret');
    }
    const [{ forward } = { forward: undefined }] = forwardOf('WebhookSubscriberHooks');
    expect(forward).toMatchObject({
      url: HOOKS,
      shape: 'event',
      timeoutSeconds: 30,
      secret: { appSecret: false },
    });
    expect(JSON.stringify(forward.secret.secretId)).toContain(':secret:hooks-signing');
  });

  it('reads only the secret it signs with', () => {
    const reads = (role: string) =>
      statementsOfRole(template, role)
        .filter((statement) => actionsOf(statement).includes('secretsmanager:GetSecretValue'))
        .map((statement) => JSON.stringify(statement.Resource));
    const chatwoot = reads('WebhookSubscriberChatwootConsumerRole');
    expect(chatwoot.some((resource) => resource.includes('WebhookWebhookSecret'))).toBe(true);
    expect(chatwoot.some((resource) => resource.includes('hooks-signing'))).toBe(false);
    const hooks = reads('WebhookSubscriberHooksConsumerRole');
    expect(hooks.some((resource) => resource.includes('hooks-signing'))).toBe(true);
    expect(hooks.some((resource) => resource.includes('WebhookWebhookSecret'))).toBe(false);
    expect(reads('WebhookSubscriberBotConsumerRole').some((r) => r.includes('WebhookWebhookSecret'))).toBe(
      false,
    );
  });

  it('writes a value the forwarding consumer reads back', () => {
    const [{ forward } = { forward: undefined }] = forwardOf('WebhookSubscriberChatwoot');
    expect(decodeForwardEnvironment(JSON.stringify(forward))).toEqual(forward);
    expect(() => decodeForwardEnvironment('{"url":"https://x"}')).toThrow(/not a forward destination/);
  });

  it('keeps the template free of the URL anywhere but its consumers', () => {
    const mentions = JSON.stringify(template.toJSON()).split(CHATWOOT).length - 1;
    expect(mentions).toBe(2);
    expect(forwardOf('WebhookSubscriberChatwoot').map(({ forward }) => forward.url)).toEqual([
      CHATWOOT,
      CHATWOOT,
    ]);
  });
});

/** The `ScalingConfig.MaximumConcurrency` of the event source mapping of the function `functionId`. */
function maximumConcurrencyOf(functionId: string): number | undefined {
  const mapping = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).find(
    (resource) => resource.Properties.FunctionName?.Ref === functionId,
  );
  return mapping?.Properties.ScalingConfig?.MaximumConcurrency;
}

/** Each consumer of the subscriber whose construct id starts with `prefix`: its lane, cap and per-invocation bound. */
function lanesOf(prefix: string) {
  return forwardOf(prefix)
    .map(({ id, forward }) => ({
      lane: id.includes('MessageConsumer') ? 'message' : 'status',
      maxConcurrency: maximumConcurrencyOf(id),
      postsInFlight: forward.postsInFlight,
    }))
    .sort((a, b) => a.lane.localeCompare(b.lane));
}

describe('a forward subscriber with batch and headers', () => {
  it('is told to batch, and where its headers are, in each lane; the others are not', () => {
    for (const { forward } of forwardOf('WebhookSubscriberLegacy')) {
      expect(forward.batch).toBe(true);
      expect(JSON.stringify(forward.headers.secretId)).toContain(':secret:legacy-headers');
      expect(decodeForwardEnvironment(JSON.stringify(forward))).toEqual(forward);
    }
    for (const { forward } of forwardOf('WebhookSubscriberChatwoot')) {
      expect(forward.batch).toBeUndefined();
      expect(forward.headers).toBeUndefined();
      expect(forward.postsInFlight).toBeUndefined();
    }
  });

  it('lets only its own consumers read its headers secret, and never holds the headers in clear', () => {
    const readsHeaders = (role: string) =>
      statementsOfRole(template, role)
        .filter((statement) => actionsOf(statement).includes('secretsmanager:GetSecretValue'))
        .some((statement) => JSON.stringify(statement.Resource).includes('legacy-headers'));
    expect(readsHeaders('WebhookSubscriberLegacyConsumerRole')).toBe(true);
    expect(readsHeaders('WebhookSubscriberLegacyMessageConsumerRole')).toBe(true);
    for (const other of ['Chatwoot', 'Hooks', 'Bot', 'Wide']) {
      expect(readsHeaders(`WebhookSubscriber${other}ConsumerRole`), other).toBe(false);
    }
    // It still signs with the app secret: its own secret is for headers only.
    const [{ forward } = { forward: undefined }] = forwardOf('WebhookSubscriberLegacy');
    expect(forward.secret.appSecret).toBe(true);
  });
});

describe('a forward subscriber with maxInFlight', () => {
  it("caps each lane's MaximumConcurrency at its share, the message lane taking the odd one", () => {
    expect(lanesOf('WebhookSubscriberLegacy')).toEqual([
      { lane: 'message', maxConcurrency: 5, postsInFlight: 1 },
      { lane: 'status', maxConcurrency: 4, postsInFlight: 1 },
    ]);
  });

  it('bounds the POSTs of one invocation by what the share leaves each concurrent invocation', () => {
    expect(lanesOf('WebhookSubscriberWide')).toEqual([
      { lane: 'message', maxConcurrency: 10, postsInFlight: 3 },
      { lane: 'status', maxConcurrency: 10, postsInFlight: 3 },
    ]);
  });

  it('keeps concurrency × POSTs per invocation within maxInFlight over both lanes', () => {
    for (const [prefix, maxInFlight] of [
      ['WebhookSubscriberLegacy', 9],
      ['WebhookSubscriberWide', 60],
    ] as const) {
      const total = lanesOf(prefix).reduce(
        (sum, { maxConcurrency, postsInFlight }) => sum + (maxConcurrency ?? Number.NaN) * postsInFlight,
        0,
      );
      expect(total).toBeLessThanOrEqual(maxInFlight);
    }
  });

  it('leaves the lanes of a subscriber without it as the planner sized them', () => {
    const [chatwoot] = lanesOf('WebhookSubscriberChatwoot');
    expect(chatwoot?.maxConcurrency).toBeGreaterThan(5);
  });
});

describe('forward definitions that cannot work', () => {
  const build = (
    subscribers: NonNullable<ConstructorParameters<typeof WhatsAppWebhookDedup>[2]>['subscribers'],
  ) => new WhatsAppWebhookDedup(new Stack(new App(), 'Refused'), 'Webhook', { subscribers });

  it.each([
    [{ forward: { url: 'http://chat.example.com/hook' } }, /forward\.url must be https/],
    [{ forward: { url: 'http://127.0.0.1:9000/hook' } }, /forward\.url must be https/],
    [{ forward: { url: 'not a url' } }, /is not a URL/],
    [{ forward: { url: HOOKS, shape: 'event' as const } }, /secretName is required with shape "event"/],
    [{ forward: { url: HOOKS, timeoutSeconds: 0 } }, /timeoutSeconds is 0/],
    [
      { forward: { url: HOOKS, shape: 'event' as const, secretName: 'hooks', batch: true } },
      /forward\.batch needs shape "meta"/,
    ],
    [
      { forward: { url: HOOKS, headersSecretName: '' } },
      /headersSecretName must name a Secrets Manager secret/,
    ],
    [
      { forward: { url: HOOKS, maxInFlight: 3 } },
      /forward\.maxInFlight is 3: the minimum with a message lane and a status lane is 4/,
    ],
    [
      { forward: { url: HOOKS, maxInFlight: 1 }, fields: ['account_update'] },
      /forward\.maxInFlight is 1: use a whole number, at least 2 per lane/,
    ],
    [{ entry: 'functions/consumer.ts', forward: { url: HOOKS } }, /entry .* or forward .*, not both/],
    [{ fields: ['messages'] }, /entry is required/],
  ])('%j is refused', (definition, message) => {
    expect(() => build({ crm: definition })).toThrow(UnsafeSettingsError);
    expect(() => build({ crm: definition })).toThrow(message);
  });
});
