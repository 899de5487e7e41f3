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

const { template } = synthStack({
  pipeline: {
    subscribers: {
      bot: { entry: 'functions/examples/subscribers/bot.ts', fields: ['messages'] },
      chatwoot: { forward: { url: CHATWOOT } },
      hooks: {
        forward: { url: HOOKS, shape: 'event', secretName: 'hooks-signing', timeoutSeconds: 30 },
        fields: ['messages'],
      },
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
    [{ entry: 'functions/consumer.ts', forward: { url: HOOKS } }, /entry .* or forward .*, not both/],
    [{ fields: ['messages'] }, /entry is required/],
  ])('%j is refused', (definition, message) => {
    expect(() => build({ crm: definition })).toThrow(UnsafeSettingsError);
    expect(() => build({ crm: definition })).toThrow(message);
  });
});
