/**
 * The construct sizes for its expected peak with the capacity planner (docs/capacity.md; docs/decisions.md, "The
 * defaults carry one number at Meta's top tier, sized by the planner"): the default template carries one number at
 * Meta's top tier, `expectedPeak` resizes it, explicit settings win and are named in a synth warning when they
 * cannot carry the peak. Every expected figure comes from `planCapacity`, computed here.
 */
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { runCapacity } from '../../cli/capacity/run-capacity.ts';
import {
  DEFAULT_EXPECTED_PEAK,
  DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS,
  type ExpectedPeak,
  LAMBDA_ACCOUNT_CONCURRENCY,
  peakTraffic,
} from '../../contract/capacity.ts';
import type { LaneName } from '../../contract/lanes.ts';
import { DEFAULT_SETTINGS, UnsafeSettingsError } from '../../contract/settings.ts';
import { DEFAULT_THROTTLING_BURST_LIMIT, DEFAULT_THROTTLING_RATE_LIMIT } from '../../lib/defaults.ts';
import type { WhatsAppWebhookDedupProps } from '../../lib/whatsapp-webhook-dedup.ts';
import { synthStack } from '../support/synth-stack.ts';
import { plannedSizing, sizedConcurrency } from './sizing.ts';

function synth(pipeline: WhatsAppWebhookDedupProps = {}) {
  return synthStack({ pipeline });
}

function stageThrottle(template: Template) {
  const [stage] = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
  return stage?.Properties.DefaultRouteSettings;
}

function concurrency(template: Template, queuePrefix: string): number | undefined {
  const mapping = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).find((resource) =>
    String(resource.Properties.EventSourceArn['Fn::GetAtt'][0]).startsWith(queuePrefix),
  );
  return mapping?.Properties.ScalingConfig?.MaximumConcurrency;
}

const QUEUE: Record<LaneName, string> = { status: 'WebhookDeliveryQueue', message: 'WebhookMessageQueue' };

function warmWrites(template: Template): number | undefined {
  const [table] = Object.values(template.findResources('AWS::DynamoDB::GlobalTable'));
  return table?.Properties.WarmThroughput?.WriteUnitsPerSecond;
}

/** What the planner sizes for `peak`, never below the defaults (a lower cap saves nothing while idle). */
function expectSizedFor(template: Template, peak: ExpectedPeak) {
  const sizing = plannedSizing(peak);
  expect(stageThrottle(template)).toEqual({
    ThrottlingRateLimit: Math.max(sizing.throttlingRateLimit, DEFAULT_THROTTLING_RATE_LIMIT),
    ThrottlingBurstLimit: Math.max(sizing.throttlingBurstLimit, DEFAULT_THROTTLING_BURST_LIMIT),
  });
  for (const lane of ['status', 'message'] as const) {
    expect(concurrency(template, QUEUE[lane]), lane).toBe(
      Math.max(sizedConcurrency(sizing, 'default', lane), DEFAULT_SETTINGS.maxConcurrency),
    );
  }
  return sizing;
}

describe('the default template', () => {
  const { stack, template } = synth();

  it("is sized by the planner for one number at Meta's top tier: throttle, each lane's concurrency, warm writes", () => {
    const sizing = expectSizedFor(template, DEFAULT_EXPECTED_PEAK);
    expect(stageThrottle(template).ThrottlingRateLimit).toBe(
      peakTraffic(DEFAULT_EXPECTED_PEAK).postsPerSecond,
    );
    expect(sizing.warmWriteUnitsPerSecond).toBeGreaterThan(DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS);
    expect(warmWrites(template)).toBe(sizing.warmWriteUnitsPerSecond);
    // Warm throughput is a table setting: still on-demand, billed per request.
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', { BillingMode: 'PAY_PER_REQUEST' });
  });

  it('fits within the default Lambda account quota and warns of nothing', () => {
    expect(plannedSizing().lambdaConcurrency).toBeLessThanOrEqual(LAMBDA_ACCOUNT_CONCURRENCY);
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('not carried'));
  });

  it('is what the planner reports on the default settings as carrying 1,000 msg/s (exit code 0)', async () => {
    let stdout = '';
    const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true } };
    const code = await runCapacity(
      ['--messages-per-second', String(DEFAULT_EXPECTED_PEAK.messagesPerSecond)],
      io,
    );
    expect(stdout).toContain('Every limit carries this peak.');
    expect(code).toBe(0);
  });
});

describe('expectedPeak', () => {
  it('sizes the throttle, the concurrencies and the warm writes for the declared peak', () => {
    const peak = { messagesPerSecond: 1000, numbers: 2 };
    const { stack, template } = synth({ expectedPeak: peak });
    const sizing = expectSizedFor(template, peak);
    expect(sizing.throttlingRateLimit).toBeGreaterThan(plannedSizing().throttlingRateLimit);
    expect(warmWrites(template)).toBe(sizing.warmWriteUnitsPerSecond);
    Annotations.fromStack(stack).hasNoWarning('*', Match.anyValue());
  });

  it('sets no warm throughput where a new table already carries the peak', () => {
    const peak = { messagesPerSecond: 80 };
    const { template } = synth({ expectedPeak: peak });
    expectSizedFor(template, peak);
    expect(plannedSizing(peak).warmWriteUnitsPerSecond).toBeLessThanOrEqual(
      DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS,
    );
    expect(warmWrites(template)).toBeUndefined();
  });

  it('never sizes below the defaults for a small peak: Meta’s retries after an outage come faster than it', () => {
    const { template } = synth({ expectedPeak: { messagesPerSecond: 5 } });
    expect(plannedSizing({ messagesPerSecond: 5 }).throttlingRateLimit).toBeLessThan(
      DEFAULT_THROTTLING_RATE_LIMIT,
    );
    expect(stageThrottle(template).ThrottlingRateLimit).toBe(DEFAULT_THROTTLING_RATE_LIMIT);
    for (const lane of ['status', 'message'] as const) {
      expect(concurrency(template, QUEUE[lane]), lane).toBe(DEFAULT_SETTINGS.maxConcurrency);
    }
  });

  it('refuses a peak that is not a rate', () => {
    expect(() => synth({ expectedPeak: { messagesPerSecond: -1 } })).toThrow(UnsafeSettingsError);
    expect(() => synth({ expectedPeak: { messagesPerSecond: 10, numbers: 1.5 } })).toThrow(
      /expectedPeak: numbers/,
    );
  });
});

describe('explicit settings', () => {
  it('win over the sizing, and a throttle or concurrency that cannot carry the peak is named in a warning', () => {
    const posts = peakTraffic(DEFAULT_EXPECTED_PEAK).postsPerSecond;
    const { stack, template } = synth({
      throttlingRateLimit: 1000,
      throttlingBurstLimit: 2000,
      maxConcurrency: 3,
    });
    expect(stageThrottle(template)).toEqual({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 });
    expect(concurrency(template, QUEUE.status)).toBe(3);
    expect(concurrency(template, QUEUE.message)).toBe(3);
    const annotations = Annotations.fromStack(stack);
    annotations.hasWarning('*', Match.stringLikeRegexp(`throttlingRateLimit 1000 < ${posts} POSTs/s`));
    annotations.hasWarning('*', Match.stringLikeRegexp(`throttlingBurstLimit 2000 < ${posts} requests`));
    const needed = sizedConcurrency(plannedSizing(), 'default', 'status');
    annotations.hasWarning(
      '*',
      Match.stringLikeRegexp(`status lane: maxConcurrency 3 < ${needed} concurrent batches`),
    );
    annotations.hasWarning(
      '*',
      Match.stringLikeRegexp('message lane: messageLane.settings.maxConcurrency 3'),
    );
    // A warning, not a refusal: the template is there (both lanes' mappings, and the archiver's).
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 3);
  });

  it('that carry the peak raise no warning', () => {
    const sizing = plannedSizing();
    const { stack } = synth({
      throttlingRateLimit: sizing.throttlingRateLimit * 2,
      throttlingBurstLimit: sizing.throttlingBurstLimit * 2,
      maxConcurrency: 50,
    });
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('not carried'));
  });

  it('name the account quota to raise when the declared peak exceeds it', () => {
    const { stack } = synth({ expectedPeak: { messagesPerSecond: 1000, numbers: 10 } });
    Annotations.fromStack(stack).hasWarning(
      '*',
      Match.stringLikeRegexp(
        'API Gateway throttle quota per Region 10000 < 40000 requests/s: raise the quota',
      ),
    );
  });
});

describe("a forward subscriber's maxInFlight", () => {
  const relay = (maxInFlight: number) =>
    synth({ subscribers: { relay: { forward: { url: 'https://relay.example.com/wa', maxInFlight } } } });

  it('caps the concurrency the planner sizes, and the warning names it as the setting to raise', () => {
    const { stack, template } = relay(12);
    expect(concurrency(template, 'WebhookSubscriberRelayDeliveryQueue')).toBe(6);
    expect(concurrency(template, 'WebhookSubscriberRelayMessageQueue')).toBe(6);
    // The default peak needs more than 6 concurrent status batches: its bound cannot carry it, and says so.
    expect(sizedConcurrency(plannedSizing(), 'default', 'status')).toBeGreaterThan(6);
    Annotations.fromStack(stack).hasWarning(
      '*',
      Match.stringLikeRegexp('subscriber relay, status lane: forward.maxInFlight 6 <'),
    );
  });

  it('leaves a share above what the peak needs to the planner', () => {
    const needed = (lane: LaneName) => sizedConcurrency(plannedSizing(), 'default', lane);
    const { template } = relay(10_000);
    expect(concurrency(template, 'WebhookSubscriberRelayDeliveryQueue')).toBe(
      Math.max(needed('status'), DEFAULT_SETTINGS.maxConcurrency),
    );
  });
});
