/**
 * Every prop reaches the resource it configures (one stack with all props changed from their defaults), and
 * unsafe props are refused at synth time with a message that says what to change.
 */
import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../contract/environment.ts';
import { ConsumerFieldMetric } from '../../contract/metric-names.ts';
import { UnsafeSettingsError } from '../../contract/settings.ts';
import { WhatsAppWebhookDedup, type WhatsAppWebhookDedupProps } from '../../lib/whatsapp-webhook-dedup.ts';
import {
  logicalIdStartingWith,
  SYNTH_TIMEOUT_MS,
  statementsOfRole,
  synthStack,
} from '../support/synth-stack.ts';

const TOPIC_ARN = 'arn:aws:sns:us-east-1:123456789012:ops-alarms';

describe('custom props', () => {
  let template: Template;

  beforeAll(() => {
    template = synthStack({
      alarmTopicArn: TOPIC_ARN,
      pipeline: {
        // 7 days + 80 receives of up to 5 s window + 60 s timeout + 3600 s delay (3.4 days), in whole days.
        retentionDays: 11,
        leaseMarginMs: 5_000,
        consumerTimeoutSeconds: 60,
        receiverTimeoutSeconds: 20,
        batchSize: 25,
        maxBatchingWindowSeconds: 5,
        maxConcurrency: 50,
        maxReceiveCount: 80,
        retryBaseDelaySeconds: 20,
        maximumMessageSizeBytes: 1_048_576,
        queueRetentionDays: 7,
        deadLetterRetentionDays: 10,
        keyNamespace: 'crm-sync',
        tableRemovalPolicy: RemovalPolicy.DESTROY,
        tableDeletionProtection: false,
        existingSecretName: 'whatsapp/prod',
        throttlingRateLimit: 50,
        throttlingBurstLimit: 100,
        logRetention: RetentionDays.THREE_MONTHS,
        logLevel: 'DEBUG',
        receiverMemorySize: 1024,
        consumerMemorySize: 256,
        dashboardName: 'whatsapp-webhooks',
        statusLedger: 'always',
        claimUnhandledEvents: false,
        alarmThresholds: {
          period: Duration.minutes(1),
          oldestMessageAgeSeconds: 120,
          oldestMessageAgeEvaluationPeriods: 5,
          deadLetterQueueMessages: 3,
          duplicateRatePercent: 25,
          duplicateRateEvaluationPeriods: 4,
          duplicateRateMinimumEvents: 200,
          duplicateRateFields: ['message', 'calls'],
          apiServerErrors: 1,
          signatureRejections: 20,
        },
      },
    }).template;
  });

  it('pass the settings to the functions, the queues and the event source mapping', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('consumer'),
      Timeout: 60,
      MemorySize: 256,
      Environment: {
        Variables: Match.objectLike({
          [ENV.retentionDays]: '11',
          [ENV.leaseMarginMs]: '5000',
          [ENV.keyNamespace]: 'crm-sync',
          [ENV.maximumMessageSizeBytes]: '1048576',
          [ENV.statusLedger]: 'always',
          [ENV.claimUnhandledEvents]: 'false',
          [ENV.retryBaseDelaySeconds]: '20',
          [ENV.retryMaxDelaySeconds]: '3600',
          POWERTOOLS_LOG_LEVEL: 'DEBUG',
        }),
      },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('receiver'),
      Timeout: 20,
      MemorySize: 1024,
      Environment: { Variables: Match.objectLike({ [ENV.maximumMessageSizeBytes]: '1048576' }) },
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 6 * 60 + 5,
      MaximumMessageSize: 1_048_576,
      MessageRetentionPeriod: 7 * 86_400,
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 80 }),
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      MaximumMessageSize: 1_048_576,
      MessageRetentionPeriod: 10 * 86_400,
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 25,
      MaximumBatchingWindowInSeconds: 5,
      ScalingConfig: { MaximumConcurrency: 50 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('confine the consumer’s claim-table writes to its key namespace', () => {
    const dynamo = statementsOfRole(template, 'WebhookConsumerRole').filter((s) =>
      JSON.stringify(s.Action).includes('dynamodb:'),
    );
    expect(dynamo).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['crm-sync#*'] } },
      }),
    ]);
  });

  it('let the table be destroyed without deletion protection when asked', () => {
    template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Delete',
      Properties: { Replicas: [Match.objectLike({ DeletionProtectionEnabled: false })] },
    });
  });

  it('import the existing secret by name instead of creating one, and grant only that secret', () => {
    // Only the keys the stack generates (log digest, provenance): no webhook secret is created.
    expect(
      Object.keys(template.findResources('AWS::SecretsManager::Secret')).map((id) =>
        id.replace(/[0-9A-F]{8}$/, ''),
      ),
    ).toEqual(['WebhookLogDigestKey', 'WebhookProvenanceKey']);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ [ENV.webhookSecretId]: 'whatsapp/prod' }) },
    });
    const read = statementsOfRole(template, 'WebhookReceiverRole').find(
      (s) => s.Action === 'secretsmanager:GetSecretValue',
    );
    // The real ARN of a secret imported by name ends in a random 6-character suffix.
    expect(JSON.stringify(read?.Resource)).toMatch(/:secret:whatsapp\/prod-\?{6}"\]\]\}$/);
    template.hasOutput('WebhookSecretName', { Value: 'whatsapp/prod' });
  });

  it('apply route throttling, log retention and the dashboard name', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
    // Receiver, both lanes' consumers, the archiver, API access.
    template.resourceCountIs('AWS::Logs::LogGroup', 5);
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'whatsapp-webhooks' });
  });

  it('use the alarm thresholds and notify the SNS topic on alarm and on recovery', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    // The pipeline's and the default subscriber's, and the archive's three.
    expect(alarms).toHaveLength(27);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([TOPIC_ARN]);
      expect(alarm.Properties.OKActions).toEqual([TOPIC_ARN]);
    }
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Threshold: 120,
      EvaluationPeriods: 5,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 3,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: '5xx', Threshold: 1, Period: 60 });
    const duplicate = alarms.find((alarm) =>
      JSON.stringify(alarm.Properties).includes(ConsumerFieldMetric.EventsDuplicate),
    );
    expect(duplicate?.Properties).toMatchObject({ Threshold: 25, EvaluationPeriods: 4 });
    const metrics = JSON.stringify(duplicate?.Properties.Metrics);
    expect(metrics).toContain('>= 200');
    expect(metrics).toContain('"Value":"calls"');
    expect(metrics).not.toContain('"Value":"status"');
    expect(duplicate?.Properties.Metrics.filter((m: { MetricStat?: unknown }) => m.MetricStat)).toHaveLength(
      4,
    );
  });

  it(
    'a topic passed as a construct is used as is',
    () => {
      const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'TopicStack');
      const topic = new Topic(stack, 'Ops');
      new WhatsAppWebhookDedup(stack, 'Webhook', { alarmTopic: topic });
      const withTopic = Template.fromStack(stack);
      const topicId = logicalIdStartingWith(withTopic, 'AWS::SNS::Topic', 'Ops');
      const alarms = Object.values(withTopic.findResources('AWS::CloudWatch::Alarm'));
      expect(alarms).toHaveLength(27);
      for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('unsafe props are refused at synth time', () => {
  // Validation runs before any resource is created, so these cases never bundle or synthesise (bundling is
  // left on to prove it: a refusal after the functions were built would take seconds, not milliseconds).
  const build = (props: WhatsAppWebhookDedupProps) => () =>
    new WhatsAppWebhookDedup(new Stack(new App(), 'Unsafe'), 'Webhook', props);

  it.each<[string, WhatsAppWebhookDedupProps, RegExp]>([
    [
      'retention below 7 days',
      { retentionDays: 6 },
      /retentionDays is 6, but Meta retries a webhook for up to 7 days/,
    ],
    [
      "a retention a second short of 7 days plus the status lane's retry budget",
      // Defaults: 60 receives of up to 1 s window + 30 s timeout + 3600 s delay.
      { retentionDays: (7 * 86_400 + 60 * 3631 - 1) / 86_400 },
      /retentionDays is 9\.52151\d*, but Meta retries a webhook for up to 7 days, and its last retry may then wait in the status lane's queue for that lane's retry budget, 60 receives × up to 3631 s = 217860 s \(2\.5 days\), before its claim is checked: a done claim must outlast both\. Use a retentionDays of at least 9\.521528 \(7 days \+ 217860 s; 10 in whole days\), or a shorter retry budget\./,
    ],
    [
      'a retention the default would give, below a longer retry budget',
      { maxReceiveCount: 100 },
      /retentionDays is 10, but .* 100 receives × up to 3631 s = 363100 s .* at least 11\.202547 .*12 in whole days/,
    ],
    [
      'a visibility timeout below 6 × consumer timeout + batching window',
      { consumerTimeoutSeconds: 30, maxBatchingWindowSeconds: 1, visibilityTimeoutSeconds: 180 },
      /visibilityTimeoutSeconds is 180, below 6 × consumerTimeoutSeconds \(30\) \+ maxBatchingWindowSeconds \(1\) = 181/,
    ],
    ['maxReceiveCount below 5', { maxReceiveCount: 4 }, /maxReceiveCount is 4: use at least 5/],
    [
      'a delivery queue that keeps messages less than 7 days',
      { queueRetentionDays: 6, deadLetterRetentionDays: 14 },
      /queueRetentionDays is 6: once Meta has its 200 the delivery queue holds the only copy/,
    ],
    [
      'a lease margin that reaches the visibility timeout',
      { leaseMarginMs: 150_000 },
      /leaseMarginMs is 150000: .* reaches visibilityTimeoutSeconds \(181\)/,
    ],
    [
      'a lease margin that reaches the visibility timeout of a longer consumer timeout',
      { consumerTimeoutSeconds: 60, leaseMarginMs: 300_000 },
      /leaseMarginMs is 300000: .* reaches visibilityTimeoutSeconds \(361\)/,
    ],
    ['a lease margin that is not a number', { leaseMarginMs: Number.NaN }, /leaseMarginMs is NaN/],
    ['maxConcurrency below the Lambda minimum', { maxConcurrency: 1 }, /maxConcurrency >= 2/],
    [
      'a receiver timeout API Gateway would cut off',
      { receiverTimeoutSeconds: 30 },
      /receiverTimeoutSeconds is 30, but API Gateway gives up after 30 s/,
    ],
    [
      'a DLQ that keeps messages shorter than the queue',
      { queueRetentionDays: 10, deadLetterRetentionDays: 5 },
      /deadLetterRetentionDays \(5\) is shorter than queueRetentionDays \(10\)/,
    ],
    [
      'a key namespace with the key separator',
      { keyNamespace: 'crm#sync' },
      /keyNamespace "crm#sync" must be 1 to 64/,
    ],
    ['a zero rate limit', { throttlingRateLimit: 0 }, /throttlingRateLimit must be > 0/],
    [
      'a status ledger mode the consumer does not know',
      { statusLedger: 'sometimes' as 'always' },
      /statusLedger is "sometimes": use one of with-handler, always/,
    ],
    ['an empty secret name', { existingSecretName: ' ' }, /existingSecretName is empty/],
    [
      'an archive kept 0 days',
      { archive: { retentionDays: 0 } },
      /archive.retentionDays must be a whole number of days, at least 1; got 0/,
    ],
    [
      'an archive kept part of a day',
      { archive: { retentionDays: 1.5 } },
      /archive.retentionDays must be a whole number of days, at least 1; got 1.5/,
    ],
  ])('%s', (_case, props, message) => {
    expect(build(props)).toThrow(UnsafeSettingsError);
    expect(build(props)).toThrow(message);
  });

  it.each<[string, WhatsAppWebhookDedupProps, RegExp]>([
    [
      'a duplicate-rate alarm over more fields than an alarm can hold',
      {
        alarmThresholds: { duplicateRateFields: ['message', 'status', 'error', 'calls', 'flows', 'history'] },
      },
      /duplicateRateFields must name 1 to 5 fields \(CloudWatch allows 10 metrics per alarm\), got 6/,
    ],
    [
      'a duplicate-rate threshold of 100 %',
      { alarmThresholds: { duplicateRatePercent: 100 } },
      /between 0 and 100/,
    ],
    ['a DLQ alarm that is always on', { alarmThresholds: { deadLetterQueueMessages: 0 } }, /at least 1/],
  ])('%s', (_case, props, message) => {
    expect(build(props)).toThrow(message);
  });

  it("refuses a subscriber whose message lane's retry budget outlasts its retention", () => {
    const props: WhatsAppWebhookDedupProps = {
      subscribers: {
        bot: { entry: 'functions/consumer.ts' },
        crm: {
          entry: 'functions/consumer.ts',
          settings: { retentionDays: 11 },
          // Unordered, no window: 100 receives of up to 30 s + 3600 s.
          messageLane: { ordered: false, settings: { maxReceiveCount: 100 } },
        },
      },
    };
    expect(build(props)).toThrow(UnsafeSettingsError);
    expect(build(props)).toThrow(
      /^Subscriber crm: retentionDays is 11, but .* in the message lane's queue .* 100 receives × up to 3630 s = 363000 s .* at least 11\.201389 /,
    );
  });

  it('accepts a lease margin that fits a longer consumer timeout, and gives it to the consumer', () => {
    // 150 s would reach the default 181 s visibility timeout; a 60 s consumer gets 6 × 60 + 1 = 361 s.
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'LongConsumer');
    new WhatsAppWebhookDedup(stack, 'Webhook', { consumerTimeoutSeconds: 60, leaseMarginMs: 150_000 });
    Template.fromStack(stack).hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 60,
      Environment: { Variables: Match.objectLike({ [ENV.leaseMarginMs]: '150000' }) },
    });
  });

  it('accepts the smallest safe values', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Edge');
    // 7 days + 55 receives of up to 10 s + the default 3600 s delay: the smallest the construct accepts.
    const retentionDays = (7 * 86_400 + 55 * 3610) / 86_400;
    const pipeline = new WhatsAppWebhookDedup(stack, 'Webhook', {
      retentionDays,
      // The fewest receives whose default backoff rides out a day-long outage (contract/retry-budget.ts).
      maxReceiveCount: 55,
      consumerTimeoutSeconds: 10,
      maxBatchingWindowSeconds: 0,
      visibilityTimeoutSeconds: 60,
      receiverTimeoutSeconds: 29,
    });
    expect(pipeline.settings).toMatchObject({
      retentionDays,
      visibilityTimeoutSeconds: 60,
      maxReceiveCount: 55,
    });
  });
});
