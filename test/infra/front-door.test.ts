/**
 * The two front doors (docs/design.md §4, docs/decisions.md "Front door"): with `endpoint: 'function-url'` the
 * receiver's own URL, public (auth type NONE: the HMAC authenticates), its reserved concurrency the throttle
 * sized by the planner, no HTTP API, stage or access log, the alarms and dashboard on Lambda's URL metrics, and
 * the `WebhookUrl` output on the URL; each door's throttle props refused with the other door.
 */
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RECEIVER_MS, peakTraffic, receiverReservedConcurrencyFor } from '../../contract/capacity.ts';
import { UnsafeSettingsError } from '../../contract/settings.ts';
import { STACK_OUTPUT } from '../../contract/stack-outputs.ts';
import type { WhatsAppWebhookDedupStack } from '../../lib/whatsapp-webhook-dedup-stack.ts';
import { logicalIdStartingWith, SYNTH_TIMEOUT_MS, synthStack } from '../support/synth-stack.ts';
import { plannedSizing } from './sizing.ts';

let template: Template;
let stack: WhatsAppWebhookDedupStack;
let receiverId: string;

beforeAll(() => {
  ({ template, stack } = synthStack({ pipeline: { endpoint: 'function-url' } }));
  receiverId = logicalIdStartingWith(template, 'AWS::Lambda::Function', 'WebhookReceiver');
}, SYNTH_TIMEOUT_MS);

function dashboardText(t: Template): string {
  const [dashboard] = Object.values(t.findResources('AWS::CloudWatch::Dashboard'));
  const parts = dashboard?.Properties.DashboardBody['Fn::Join'][1] as unknown[];
  return parts.map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join('');
}

describe('endpoint: function-url', () => {
  it('puts a public function URL on the receiver, and no HTTP API, stage, route or access log', () => {
    template.resourceCountIs('AWS::Lambda::Url', 1);
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      TargetFunctionArn: { 'Fn::GetAtt': [receiverId, 'Arn'] },
    });
    const [url] = Object.values(template.findResources('AWS::Lambda::Url'));
    expect(url?.Properties).not.toHaveProperty('Cors');
    expect(url?.Properties.InvokeMode).toBe('BUFFERED');
    for (const type of [
      'AWS::ApiGatewayV2::Api',
      'AWS::ApiGatewayV2::Stage',
      'AWS::ApiGatewayV2::Route',
      'AWS::ApiGatewayV2::Integration',
    ]) {
      template.resourceCountIs(type, 0);
    }
    expect(
      Object.keys(template.findResources('AWS::Logs::LogGroup')).filter((id) => id.includes('ApiAccessLog')),
    ).toEqual([]);
    expect(stack.pipeline.httpApi).toBeUndefined();
    expect(stack.pipeline.functionUrl).toBeDefined();
  });

  it('lets anyone invoke the receiver through its URL only', () => {
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission')).filter(
      (permission) =>
        JSON.stringify(permission.Properties.FunctionName).includes(receiverId) &&
        permission.Properties.Principal === '*',
    );
    expect(permissions.map((permission) => permission.Properties.Action).sort()).toEqual([
      'lambda:InvokeFunction',
      'lambda:InvokeFunctionUrl',
    ]);
    for (const permission of permissions) {
      expect(
        permission.Properties.FunctionUrlAuthType === 'NONE' ||
          permission.Properties.InvokedViaFunctionUrl === true,
      ).toBe(true);
    }
  });

  it("reserves the receiver's concurrency the planner sizes for the default peak", () => {
    const reserved = plannedSizing().receiverReservedConcurrency;
    expect(reserved).toBeGreaterThan(0);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('receiver'),
      ReservedConcurrentExecutions: reserved,
    });
    // The consumers draw on the unreserved pool, bounded by their event sources' maxConcurrency.
    const reservedFunctions = Object.values(template.findResources('AWS::Lambda::Function')).filter(
      (fn) => fn.Properties.ReservedConcurrentExecutions !== undefined,
    );
    expect(reservedFunctions).toHaveLength(1);
  });

  it(
    'sizes the reservation from a declared peak, and keeps an explicit one',
    () => {
      const peak = { messagesPerSecond: 80 };
      const small = synthStack({ pipeline: { endpoint: 'function-url', expectedPeak: peak } });
      const posts = peakTraffic(peak).postsPerSecond;
      small.template.hasResourceProperties('AWS::Lambda::Function', {
        ReservedConcurrentExecutions: receiverReservedConcurrencyFor(posts, DEFAULT_RECEIVER_MS),
      });
      expect(receiverReservedConcurrencyFor(posts, DEFAULT_RECEIVER_MS)).toBeLessThan(
        plannedSizing().receiverReservedConcurrency,
      );

      const explicit = synthStack({
        pipeline: { endpoint: 'function-url', receiverReservedConcurrency: 700 },
      });
      explicit.template.hasResourceProperties('AWS::Lambda::Function', { ReservedConcurrentExecutions: 700 });
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'warns when the reservation cannot carry the peak, naming the setting',
    () => {
      const { stack: short } = synthStack({
        pipeline: { endpoint: 'function-url', receiverReservedConcurrency: 10 },
      });
      const needed = plannedSizing().receiverReservedConcurrency;
      Annotations.fromStack(short).hasWarning(
        '*',
        Match.stringLikeRegexp(`receiverReservedConcurrency 10 < ${needed} executions`),
      );
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'warns when the reservation would leave Lambda less than its 100 unreserved executions',
    () => {
      const { stack: greedy } = synthStack({
        pipeline: { endpoint: 'function-url', receiverReservedConcurrency: 950 },
      });
      Annotations.fromStack(greedy).hasWarning(
        '*',
        Match.stringLikeRegexp('Lambda concurrent executions 900 < 950 executions'),
      );
    },
    SYNTH_TIMEOUT_MS,
  );

  it('outputs the URL with the /webhook path as WebhookUrl', () => {
    const urlId = logicalIdStartingWith(template, 'AWS::Lambda::Url', 'WebhookReceiverFunctionUrl');
    template.hasOutput(STACK_OUTPUT.webhookUrl, {
      Value: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [urlId, 'FunctionUrl'] }, 'webhook']] },
    });
  });

  it('alarms on the URL 5xx and the receiver throttles, and graphs the URL metrics', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    const serverErrors = alarms.filter((alarm) => alarm.Properties.MetricName === 'Url5xxCount');
    expect(serverErrors).toHaveLength(1);
    expect(serverErrors[0]?.Properties).toMatchObject({
      Namespace: 'AWS/Lambda',
      Statistic: 'Sum',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: receiverId } }],
    });
    const throttles = alarms.filter(
      (alarm) =>
        alarm.Properties.MetricName === 'Throttles' &&
        JSON.stringify(alarm.Properties.Dimensions).includes(receiverId),
    );
    expect(throttles).toHaveLength(1);
    expect(throttles[0]?.Properties.AlarmDescription).toMatch(/receiverReservedConcurrency/);
    expect(JSON.stringify(alarms)).not.toMatch(/AWS\/ApiGateway/);
    // The same number of alarms as behind the HTTP API: one 5xx alarm, on the door Meta calls.
    template.resourceCountIs('AWS::CloudWatch::Alarm', 27);

    const dashboard = dashboardText(template);
    for (const metric of ['UrlRequestCount', 'Url4xxCount', 'Url5xxCount', 'UrlRequestLatency']) {
      expect(dashboard).toContain(`"${metric}"`);
    }
    expect(dashboard).toContain('Function URL requests, 4xx, 5xx');
    expect(dashboard).not.toContain('AWS/ApiGateway');
  });

  it(
    'keeps the receiver timeout free of the HTTP API’s 30 s limit',
    () => {
      expect(() =>
        synthStack({
          pipeline: { endpoint: 'function-url', receiverTimeoutSeconds: 40, consumerTimeoutSeconds: 60 },
        }),
      ).not.toThrow();
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('each door refuses the other door’s throttle', () => {
  it.each([
    [
      { endpoint: 'function-url', throttlingRateLimit: 100 },
      /throttlingRateLimit throttle the HTTP API's route.*receiverReservedConcurrency/,
    ],
    [
      { endpoint: 'function-url', throttlingRateLimit: 100, throttlingBurstLimit: 100 },
      /throttlingRateLimit and throttlingBurstLimit/,
    ],
    [{ receiverReservedConcurrency: 100 }, /receiverReservedConcurrency is the function URL's throttle/],
    [{ endpoint: 'function-url', receiverReservedConcurrency: 0 }, /receiverReservedConcurrency is 0/],
    [{ endpoint: 'function-url', receiverReservedConcurrency: 2.5 }, /whole number/],
    [{ endpoint: 'rest-api' }, /endpoint is "rest-api": use one of http-api, function-url/],
  ] as const)('%o', (pipeline, message) => {
    expect(() => synthStack({ pipeline: pipeline as never })).toThrow(UnsafeSettingsError);
    expect(() => synthStack({ pipeline: pipeline as never })).toThrow(message);
  });
});
