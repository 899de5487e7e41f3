/**
 * The default stack, synthesised once (with real esbuild bundling): every secure default and every setting
 * of docs/design.md §2–§5 is checked on the CloudFormation template with fine-grained assertions.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Capture, Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../contract/environment.ts';
import {
  FIFO_MAX_BATCH_SIZE,
  LANE_DIMENSION,
  ORDERED_LANE_REDRIVE_MARGIN,
  ORDERED_MESSAGE_LANE_RETRY,
} from '../../contract/lanes.ts';
import {
  ConsumerFieldMetric,
  ConsumerLaneMetric,
  ConsumerMetric,
  MESSAGES_FIELD_DIMENSIONS,
  METRICS_NAMESPACE,
  ReceiverMetric,
  SERVICE_DIMENSION,
  SERVICE_NAME,
  SUBSCRIBER_DIMENSION,
} from '../../contract/metric-names.ts';
import { resolveSettings } from '../../contract/settings.ts';
import { STACK_OUTPUT, subscriberOutputKeys } from '../../contract/stack-outputs.ts';
import { decodeSubscriberQueues } from '../../contract/subscribers.ts';
import type { WhatsAppWebhookDedupStack } from '../../lib/whatsapp-webhook-dedup-stack.ts';
import {
  actionsOf,
  identityStatements,
  logicalIdStartingWith,
  statementsOfRole,
  synthStack,
} from '../support/synth-stack.ts';
import { constructConcurrency, plannedSizing } from './sizing.ts';

let template: Template;
let stack: WhatsAppWebhookDedupStack;
let outdir: string;
const defaults = resolveSettings();

let receiverId: string;
let consumerId: string;
let queueId: string;
let dlqId: string;
let quarantineId: string;
let tableId: string;
let secretId: string;
let logDigestSecretId: string;
let provenanceSecretId: string;
let messageConsumerId: string;
let messageQueueId: string;
let messageDlqId: string;

beforeAll(() => {
  const synthesised = synthStack({}, { bundle: true });
  template = synthesised.template;
  stack = synthesised.stack;
  outdir = synthesised.app.outdir;
  receiverId = logicalIdStartingWith(template, 'AWS::Lambda::Function', 'WebhookReceiver');
  consumerId = logicalIdStartingWith(template, 'AWS::Lambda::Function', 'WebhookConsumer');
  queueId = logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookDeliveryQueue');
  dlqId = logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookDeadLetterQueue');
  quarantineId = logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookQuarantineQueue');
  tableId = logicalIdStartingWith(template, 'AWS::DynamoDB::GlobalTable', 'WebhookClaimTable');
  secretId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'WebhookWebhookSecret');
  logDigestSecretId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'WebhookLogDigestKey');
  provenanceSecretId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'WebhookProvenanceKey');
  messageConsumerId = logicalIdStartingWith(template, 'AWS::Lambda::Function', 'WebhookMessageConsumer');
  messageQueueId = logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookMessageQueue');
  messageDlqId = logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookMessageDeadLetterQueue');
});

describe('Lambda functions', () => {
  it('run on the newest Node.js runtime, arm64, JSON logs into their own log group', () => {
    for (const id of [receiverId, consumerId]) {
      const fn = template.findResources('AWS::Lambda::Function')[id];
      expect(fn?.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        MemorySize: 512,
        LoggingConfig: { LogFormat: 'JSON', LogGroup: { Ref: expect.stringMatching(/LogGroup/) } },
      });
      expect(fn?.Properties.Environment.Variables.NODE_OPTIONS).toBe('--enable-source-maps');
      expect(fn?.Properties.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE).toBe(METRICS_NAMESPACE);
      // Powertools puts the service name in a `service` dimension that the dashboard queries.
      expect(fn?.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).toBe(SERVICE_NAME);
      // maxConcurrency on the event source mapping, never reserved concurrency.
      expect(fn?.Properties.ReservedConcurrentExecutions).toBeUndefined();
    }
  });

  it('have the chosen timeouts (receiver well under API Gateway’s 30 s, consumer from the settings)', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('receiver'),
      Timeout: defaults.receiverTimeoutSeconds,
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('consumer'),
      Timeout: defaults.consumerTimeoutSeconds,
    });
  });

  it('give the receiver the default subscriber’s queue, the quarantine queue, the message size and the secret id under the ENV names', () => {
    const variables =
      template.findResources('AWS::Lambda::Function')[receiverId]?.Properties.Environment.Variables;
    expect(variables).toMatchObject({
      [ENV.quarantineQueueUrl]: { Ref: quarantineId },
      [ENV.maximumMessageSizeBytes]: String(defaults.maximumMessageSizeBytes),
      [ENV.webhookSecretId]: { Ref: secretId },
    });
    const [separator, parts] = variables[ENV.subscriberQueues]['Fn::Join'] as [string, unknown[]];
    const text = parts
      .map((part) => (typeof part === 'string' ? part : `<${(part as { Ref: string }).Ref}>`))
      .join(separator);
    expect(decodeSubscriberQueues(text)).toEqual([
      {
        name: 'default',
        queueUrl: `<${queueId}>`,
        messageQueueUrl: `<${messageQueueId}>`,
        messageLaneOrdered: true,
      },
    ]);
    expect(variables).not.toHaveProperty(ENV.deliveryQueueUrl);
  });

  it('give the consumer the table, retention, lease margin, its queue, the quarantine queue and size limit, and no namespace, fields, ledger mode or unhandled-event choice by default', () => {
    const variables =
      template.findResources('AWS::Lambda::Function')[consumerId]?.Properties.Environment.Variables;
    expect(variables).toMatchObject({
      [ENV.claimTableName]: { Ref: tableId },
      [ENV.retentionDays]: String(defaults.retentionDays),
      [ENV.leaseMarginMs]: String(defaults.leaseMarginMs),
      [ENV.subscriberName]: 'default',
      [ENV.deliveryQueueUrl]: { Ref: queueId },
      [ENV.quarantineQueueUrl]: { Ref: quarantineId },
      [ENV.maximumMessageSizeBytes]: String(defaults.maximumMessageSizeBytes),
      [ENV.lane]: 'status',
      [ENV.retryBaseDelaySeconds]: String(defaults.retryBaseDelaySeconds),
      [ENV.retryMaxDelaySeconds]: String(defaults.retryMaxDelaySeconds),
    });
    expect(variables).not.toHaveProperty(ENV.laneOrdered);
    expect(variables).not.toHaveProperty(ENV.keyNamespace);
    expect(variables).not.toHaveProperty(ENV.subscriberFields);
    // Absent, the consumer uses its own defaults: the ledger with an onStatus handler, unhandled events claimed.
    expect(variables).not.toHaveProperty(ENV.statusLedger);
    expect(variables).not.toHaveProperty(ENV.claimUnhandledEvents);
    expect(variables).not.toHaveProperty(ENV.webhookSecretId);
    expect(variables).toMatchObject({ [ENV.logDigestSecretId]: { Ref: logDigestSecretId } });
    expect(variables).not.toHaveProperty(ENV.logDigestKey);
  });

  it('give the message lane consumer the same subscriber, its FIFO queue, LANE=message, LANE_ORDERED=true and a chat’s retry delays', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    const variables = functions[messageConsumerId]?.Properties.Environment.Variables;
    const statusVariables = functions[consumerId]?.Properties.Environment.Variables;
    expect(variables).toEqual({
      ...statusVariables,
      [ENV.deliveryQueueUrl]: { Ref: messageQueueId },
      [ENV.lane]: 'message',
      [ENV.laneOrdered]: 'true',
      [ENV.retryBaseDelaySeconds]: String(ORDERED_MESSAGE_LANE_RETRY.retryBaseDelaySeconds),
      [ENV.retryMaxDelaySeconds]: String(ORDERED_MESSAGE_LANE_RETRY.retryMaxDelaySeconds),
      // It moves a record failing on its 20th receive to the DLQ itself, so that the conversation goes on.
      [ENV.laneDeadLetterQueueUrl]: { Ref: messageDlqId },
      [ENV.laneMaxReceives]: String(ORDERED_MESSAGE_LANE_RETRY.maxReceiveCount),
    });
    // Same module, same runtime and memory: the two consumers differ only in what they read and how.
    for (const property of ['Handler', 'Runtime', 'Architectures', 'MemorySize', 'Timeout']) {
      expect(functions[messageConsumerId]?.Properties[property], property).toEqual(
        functions[consumerId]?.Properties[property],
      );
    }
  });

  it('are bundled by the local esbuild as minified ESM with a source map and the createRequire banner', () => {
    for (const id of [receiverId, consumerId, messageConsumerId]) {
      const assetPath = template.findResources('AWS::Lambda::Function')[id]?.Metadata['aws:asset:path'];
      const bundle = path.join(outdir, assetPath, 'index.mjs');
      expect(existsSync(bundle)).toBe(true);
      expect(existsSync(`${bundle}.map`)).toBe(true);
      const code = readFileSync(bundle, 'utf8');
      expect(code).toContain('createRequire');
      expect(code).toMatch(/sourceMappingURL=index\.mjs\.map/);
      // The AWS SDK is bundled, never left as an import the runtime would resolve to its own copy.
      expect(code).not.toMatch(/from\s*["']@aws-sdk\//);
      // Source text stays out of the map (sourcesContent: false).
      expect(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')).sourcesContent).toBeUndefined();
    }
  });

  it('log into five log groups (receiver, both lanes’ consumers, archiver, API access) with a retention', () => {
    template.resourceCountIs('AWS::Logs::LogGroup', 5);
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });
});

describe('SQS', () => {
  it('delivery queue: SSE, explicit maximum size, 14 days, visibility from the settings, redrive to the DLQ', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MaximumMessageSize: defaults.maximumMessageSizeBytes,
      // The only copy of an acknowledged delivery: the SQS maximum by default.
      MessageRetentionPeriod: 14 * 86_400,
      VisibilityTimeout: 6 * defaults.consumerTimeoutSeconds + defaults.maxBatchingWindowSeconds,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
        maxReceiveCount: defaults.maxReceiveCount,
      },
    });
  });

  it('dead-letter queue: SSE, same maximum size, 14 days', () => {
    const dlq = template.findResources('AWS::SQS::Queue')[dlqId];
    expect(dlq?.Properties).toEqual({
      SqsManagedSseEnabled: true,
      MaximumMessageSize: defaults.maximumMessageSizeBytes,
      MessageRetentionPeriod: 14 * 86_400,
    });
  });

  it('message lane queue: high-throughput FIFO (deduplication and quota per group, ids from the receiver), SSE, 14 days, no window in its visibility, redrive a few receives after the consumer’s own move', () => {
    expect(template.findResources('AWS::SQS::Queue')[messageQueueId]?.Properties).toEqual({
      FifoQueue: true,
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
      ContentBasedDeduplication: false,
      SqsManagedSseEnabled: true,
      MaximumMessageSize: defaults.maximumMessageSizeBytes,
      MessageRetentionPeriod: 14 * 86_400,
      VisibilityTimeout: 6 * defaults.consumerTimeoutSeconds,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [messageDlqId, 'Arn'] },
        // The net behind the consumer's own move on the 20th receive.
        maxReceiveCount: ORDERED_MESSAGE_LANE_RETRY.maxReceiveCount + ORDERED_LANE_REDRIVE_MARGIN,
      },
    });
  });

  it('message lane DLQ: FIFO too (SQS redrives a FIFO queue only into one), SSE, same size and retention', () => {
    expect(template.findResources('AWS::SQS::Queue')[messageDlqId]?.Properties).toEqual({
      FifoQueue: true,
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
      ContentBasedDeduplication: false,
      SqsManagedSseEnabled: true,
      MaximumMessageSize: defaults.maximumMessageSizeBytes,
      MessageRetentionPeriod: 14 * 86_400,
    });
  });

  it('quarantine queue: SSE, same maximum size, 14 days, no redrive policy, and no queue redrives into it', () => {
    // Two lanes and their DLQs, the quarantine queue, the archive queue and its DLQ (archive.test.ts).
    template.resourceCountIs('AWS::SQS::Queue', 7);
    const quarantine = template.findResources('AWS::SQS::Queue')[quarantineId];
    expect(quarantine?.Properties).toEqual({
      SqsManagedSseEnabled: true,
      MaximumMessageSize: defaults.maximumMessageSizeBytes,
      MessageRetentionPeriod: 14 * 86_400,
    });
    expect(JSON.stringify(template.findResources('AWS::SQS::Queue'))).not.toContain(
      `"deadLetterTargetArn":{"Fn::GetAtt":["${quarantineId}"`,
    );
  });

  it('all five queues refuse requests without TLS', () => {
    for (const id of [queueId, dlqId, quarantineId, messageQueueId, messageDlqId]) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 'sqs:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              Resource: { 'Fn::GetAtt': [id, 'Arn'] },
            }),
          ]),
        },
      });
    }
  });

  it('the message lane mapping: at most 10 records, no batching window (FIFO), reports batch item failures, caps concurrency', () => {
    // Both lanes' and the archiver's (archive.test.ts).
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 3);
    const mapping = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).find(
      (resource) => resource.Properties.EventSourceArn['Fn::GetAtt'][0] === messageQueueId,
    );
    expect(mapping?.Properties).toEqual({
      EventSourceArn: { 'Fn::GetAtt': [messageQueueId, 'Arn'] },
      FunctionName: { Ref: messageConsumerId },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: Math.min(defaults.batchSize, FIFO_MAX_BATCH_SIZE),
      ScalingConfig: { MaximumConcurrency: constructConcurrency(plannedSizing(), 'default', 'message') },
    });
    expect(mapping?.Properties.BatchSize).toBeLessThanOrEqual(FIFO_MAX_BATCH_SIZE);
  });

  it('the event source mapping reports batch item failures and caps concurrency with MaximumConcurrency', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      FunctionName: { Ref: consumerId },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: defaults.batchSize,
      MaximumBatchingWindowInSeconds: defaults.maxBatchingWindowSeconds,
      ScalingConfig: { MaximumConcurrency: constructConcurrency(plannedSizing(), 'default', 'status') },
    });
  });
});

describe('DynamoDB claim table', () => {
  it('is on-demand, keyed by pk, with TTL on expiresAt, PITR and deletion protection, and is retained', () => {
    template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        Replicas: [
          Match.objectLike({
            DeletionProtectionEnabled: true,
            PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          }),
        ],
      },
    });
  });
});

describe('Log digest key', () => {
  it('is generated by Secrets Manager at deploy time: 64 characters, never in the template', () => {
    const properties = template.findResources('AWS::SecretsManager::Secret')[logDigestSecretId]?.Properties;
    expect(properties.GenerateSecretString).toEqual({ PasswordLength: 64, ExcludePunctuation: true });
    expect(properties).not.toHaveProperty('SecretString');
  });
});

describe('Secret', () => {
  it('is created with a generated verify token and an empty list of app secrets', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'TestStack/Webhook',
      GenerateSecretString: {
        SecretStringTemplate: JSON.stringify({ appSecrets: [] }),
        GenerateStringKey: 'verifyToken',
        ExcludePunctuation: true,
      },
    });
  });
});

describe('IAM: least privilege', () => {
  it('no identity policy allows a wildcard action, and no role has a managed policy', () => {
    const statements = identityStatements(template);
    expect(statements.length).toBeGreaterThan(0);
    for (const { statement } of statements) {
      if (statement.Effect !== 'Allow') continue;
      for (const action of actionsOf(statement)) expect(action).not.toContain('*');
      expect(statement.Resource).not.toBe('*');
    }
    for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('the receiver may send to the delivery, quarantine and archive queues, read the secret and write its logs: nothing else', () => {
    const statements = statementsOfRole(template, 'WebhookReceiverRole');
    const actions = statements.flatMap(actionsOf).sort();
    expect(actions).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'secretsmanager:GetSecretValue',
      'secretsmanager:GetSecretValue',
      'sqs:SendMessage',
    ]);
    expect(actions.some((action) => action.startsWith('dynamodb:'))).toBe(false);
    const send = statements.find((s) => actionsOf(s).includes('sqs:SendMessage'));
    expect(send?.Resource).toEqual([
      { 'Fn::GetAtt': [queueId, 'Arn'] },
      { 'Fn::GetAtt': [messageQueueId, 'Arn'] },
      { 'Fn::GetAtt': [quarantineId, 'Arn'] },
      { 'Fn::GetAtt': [logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookArchiveQueue'), 'Arn'] },
    ]);
    const secrets = statements.filter((s) => actionsOf(s).includes('secretsmanager:GetSecretValue'));
    // The webhook secret, and the provenance key it proves the bodies it keeps with.
    expect(secrets.map((s) => s.Resource)).toEqual([{ Ref: secretId }, { Ref: provenanceSecretId }]);
  });

  it('only the receiver and the consumers may send to the quarantine queue, only the receiver to the archive queue', () => {
    const denyOthers = (queue: string) => {
      const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy')).filter((policy) =>
        JSON.stringify(policy.Properties.Queues).includes(queue),
      );
      const statements = policies.flatMap((policy) => policy.Properties.PolicyDocument.Statement);
      return statements.find((statement) => statement.Sid === 'OnlyThePipelineSends');
    };
    const roleArn = (role: string) => ({
      'Fn::GetAtt': [logicalIdStartingWith(template, 'AWS::IAM::Role', role), 'Arn'],
    });
    const quarantine = denyOthers(quarantineId);
    expect(quarantine).toMatchObject({ Effect: 'Deny', Principal: { AWS: '*' }, Action: 'sqs:SendMessage' });
    expect(quarantine.Condition.ArnNotEquals['aws:PrincipalArn']).toEqual([
      roleArn('WebhookReceiverRole'),
      roleArn('WebhookConsumerRole'),
      roleArn('WebhookMessageConsumerRole'),
    ]);
    const archive = denyOthers(logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookArchiveQueue'));
    expect(archive.Condition.ArnNotEquals['aws:PrincipalArn']).toEqual([roleArn('WebhookReceiverRole')]);
  });

  it.each([
    ['status lane', 'WebhookConsumerRole', () => [queueId, [quarantineId, dlqId]] as const],
    [
      'message lane',
      'WebhookMessageConsumerRole',
      () => [messageQueueId, [quarantineId, messageDlqId]] as const,
    ],
  ])(
    "the %s consumer may Put/Update/Delete items on its table, send to the quarantine queue and its lane's DLQ (DeadLetter), consume its queue: nothing else",
    (_lane, role, own) => {
      const [queueId, sendTo] = own();
      const statements = statementsOfRole(template, role);
      const dynamo = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
      expect(dynamo).toHaveLength(1);
      expect(actionsOf(dynamo[0] as never).sort()).toEqual([
        'dynamodb:DeleteItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ]);
      expect(dynamo[0]?.Resource).toEqual({ 'Fn::GetAtt': [tableId, 'Arn'] });

      const send = statements.filter((s) => actionsOf(s).includes('sqs:SendMessage'));
      expect(send.map((s) => s.Resource)).toEqual(sendTo.map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] })));

      const consume = statements.find((s) => actionsOf(s).includes('sqs:ReceiveMessage'));
      expect(consume?.Resource).toEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
      expect(actionsOf(consume as never).sort()).toEqual([
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
      ]);
      // Secrets Manager: only the log digest key, to read (never the webhook secret with the app secrets).
      const secrets = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));
      expect(secrets.map((s) => s.Resource)).toEqual([{ Ref: logDigestSecretId }]);
      expect(actionsOf(secrets[0] as never).sort()).toEqual([
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
      ]);
    },
  );

  it('API Gateway may invoke the receiver only through the webhook route', () => {
    template.resourcePropertiesCountIs(
      'AWS::Lambda::Permission',
      {
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [receiverId, 'Arn'] },
        SourceArn: { 'Fn::Join': ['', Match.arrayWith(['/*/*/webhook'])] },
      },
      2,
    );
    template.resourceCountIs('AWS::Lambda::Permission', 2);
  });
});

describe('HTTP API', () => {
  it('routes GET and POST /webhook to the receiver', () => {
    const integrationId = logicalIdStartingWith(template, 'AWS::ApiGatewayV2::Integration', 'WebhookHttpApi');
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      IntegrationUri: { 'Fn::GetAtt': [receiverId, 'Arn'] },
      PayloadFormatVersion: '2.0',
    });
    for (const routeKey of ['GET /webhook', 'POST /webhook']) {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
        RouteKey: routeKey,
        Target: { 'Fn::Join': ['', ['integrations/', { Ref: integrationId }]] },
      });
    }
    template.resourceCountIs('AWS::ApiGatewayV2::Route', 2);
  });

  it('throttles the routes and writes access logs without the query string', () => {
    const format = new Capture();
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: {
        ThrottlingRateLimit: plannedSizing().throttlingRateLimit,
        ThrottlingBurstLimit: plannedSizing().throttlingBurstLimit,
      },
      AccessLogSettings: {
        DestinationArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('ApiAccessLogGroup'), 'Arn'] },
        Format: format,
      },
    });
    const fields = JSON.parse(format.asString());
    expect(fields).toMatchObject({ requestId: '$context.requestId', status: '$context.status' });
    expect(format.asString()).not.toMatch(/querystring|\$context\.path/i);
  });

  it('is the only door: no function URL, and the receiver reserves no concurrency (the route throttles)', () => {
    template.resourceCountIs('AWS::Lambda::Url', 0);
    const receiver = template.findResources('AWS::Lambda::Function')[receiverId];
    expect(receiver?.Properties.ReservedConcurrentExecutions).toBeUndefined();
    expect(stack.pipeline.functionUrl).toBeUndefined();
  });
});

describe('Monitoring', () => {
  const alarmsOn = (metricName: string) =>
    Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((alarm) =>
      JSON.stringify(alarm.Properties).includes(`"MetricName":"${metricName}"`),
    );

  it('creates the twenty-seven alarms, none with actions by default (monitoring.test.ts and archive.test.ts check each)', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 27);
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions).toBeUndefined();
      expect(alarm.Properties.TreatMissingData).toBe('notBreaching');
    }
  });

  it('alarms when the DLQ is not empty and when the oldest delivery is too old', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      Threshold: 300,
      EvaluationPeriods: 3,
    });
  });

  it('alarms on the duplicate rate of messages, statuses and errors over N periods, with a volume floor', () => {
    const [alarm] = alarmsOn(ConsumerFieldMetric.EventsDuplicate);
    expect(alarm?.Properties).toMatchObject({ Threshold: 10, EvaluationPeriods: 3 });
    const queries = alarm?.Properties.Metrics as Array<{
      ReturnData: boolean;
      Expression?: string;
      MetricStat?: { Metric: unknown };
    }>;
    const expression = queries.find((q) => q.ReturnData)?.Expression as string;
    expect(expression).toMatch(/^IF\(.*>= 50, 100 \* \(.*\) \/ \(.*\), 0\)$/);
    const fetched = queries.flatMap((q) => (q.MetricStat ? [q.MetricStat.Metric] : []));
    expect(fetched).toHaveLength(6);
    for (const field of ['message', 'status', 'error']) {
      for (const name of [ConsumerFieldMetric.EventsFresh, ConsumerFieldMetric.EventsDuplicate]) {
        expect(fetched).toContainEqual({
          Namespace: METRICS_NAMESPACE,
          MetricName: name,
          Dimensions: [
            { Name: 'Field', Value: field },
            { Name: SUBSCRIBER_DIMENSION, Value: 'default' },
            { Name: SERVICE_DIMENSION, Value: SERVICE_NAME },
          ],
        });
      }
    }
  });

  it('alarms on API 5xx and on a spike of signature rejections', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Statistic: 'Sum',
      Threshold: 5,
    });
    const [signature] = alarmsOn(ReceiverMetric.SignatureRejected);
    expect(signature?.Properties.Threshold).toBe(100);
    expect(signature?.Properties.Metrics[0].MetricStat.Metric).toEqual({
      Namespace: METRICS_NAMESPACE,
      MetricName: ReceiverMetric.SignatureRejected,
      Dimensions: [{ Name: SERVICE_DIMENSION, Value: SERVICE_NAME }],
    });
  });

  it('the dashboard shows every metric name of metric-names.ts, the consumer’s on the default subscriber’s dimension', () => {
    const widgets = dashboardWidgets(template);
    const metricRows = widgets.flatMap((widget) => (widget.properties?.metrics ?? []) as unknown[][]);
    const custom = metricRows.filter((row) => row[0] === METRICS_NAMESPACE);
    const expressions = metricRows
      .map((row) => (row[0] as { expression?: string }).expression ?? '')
      .filter((expression) => expression !== '');
    const explicitNames = new Set(custom.map((row) => row[1]));
    for (const name of [
      ...Object.values(ConsumerMetric),
      ...Object.values(ConsumerLaneMetric),
      ...Object.values(ReceiverMetric),
    ]) {
      expect(explicitNames, name).toContain(name);
    }
    // Every custom metric is queried with exactly the dimensions its function emits: service, and for the
    // consumer Subscriber (+ Field).
    const laneNames = new Set<string>(Object.values(ConsumerLaneMetric));
    const consumerNames = new Set<string>([
      ...Object.values(ConsumerMetric),
      ...Object.values(ConsumerFieldMetric),
      ...laneNames,
    ]);
    const lanes: string[] = [];
    for (const row of custom) {
      const dimensions = row.slice(2).filter((part) => typeof part === 'string');
      expect(dimensions[dimensions.indexOf(SERVICE_DIMENSION) + 1]).toBe(SERVICE_NAME);
      if (consumerNames.has(row[1] as string)) {
        expect(dimensions[dimensions.indexOf(SUBSCRIBER_DIMENSION) + 1], row[1] as string).toBe('default');
        if (laneNames.has(row[1] as string)) {
          lanes.push(
            `${dimensions[dimensions.indexOf(LANE_DIMENSION) + 1]} ${(row.at(-1) as { stat: string }).stat}`,
          );
        } else {
          expect(dimensions, row[1] as string).not.toContain(LANE_DIMENSION);
        }
      } else {
        expect(dimensions, row[1] as string).not.toContain(SUBSCRIBER_DIMENSION);
      }
    }
    // Each lane's wait before the handler, p50 and p99.
    expect(lanes.sort()).toEqual(['message p50', 'message p99', 'status p50', 'status p99']);
    // The per-field counts are SEARCHed over the exact dimension set, so every field shows up, known or not:
    // in the subscriber's row for its own, once for the pipeline for the rare ones.
    const schema = `{${METRICS_NAMESPACE},Field,${SUBSCRIBER_DIMENSION},${SERVICE_DIMENSION}}`;
    const mine = (name: string) =>
      `SEARCH('${schema} MetricName="${name}" ${SERVICE_DIMENSION}="${SERVICE_NAME}" ${SUBSCRIBER_DIMENSION}="default"', 'Sum', 300)`;
    const everySubscriber = (name: string) =>
      `SEARCH('${schema} MetricName="${name}" ${SERVICE_DIMENSION}="${SERVICE_NAME}"', 'Sum', 300)`;
    for (const name of [
      ConsumerFieldMetric.EventsFresh,
      ConsumerFieldMetric.EventsDuplicate,
      ConsumerFieldMetric.EventsFilteredOut,
      ConsumerFieldMetric.HandlerErrors,
      ConsumerFieldMetric.RetriesDeferred,
      ConsumerFieldMetric.ClaimReleases,
    ]) {
      expect(expressions, name).toContain(mine(name));
    }
    for (const name of [
      ConsumerFieldMetric.EventsDuplicateInFlight,
      ConsumerFieldMetric.LeaseTakeovers,
      ConsumerFieldMetric.UnknownField,
    ]) {
      expect(expressions, name).toContain(everySubscriber(name));
    }
    const searched = expressions.join('\n');
    for (const name of Object.values(ConsumerFieldMetric))
      expect(searched, name).toContain(`MetricName="${name}"`);
    for (const field of MESSAGES_FIELD_DIMENSIONS) {
      // The message lane's queue absorbs repeats before any claim: the message rate counts them too.
      const label = field === 'message' ? `${field} duplicate % (claims and queue)` : `${field} duplicate %`;
      const rate = metricRows.find((row) => (row[0] as { label?: string }).label === label)?.[0] as {
        expression: string;
      };
      expect(rate.expression).toMatch(
        field === 'message'
          ? /^100 \* \(FILL\(dup_\w+, 0\) \+ FILL\(absorbed_\w+, 0\)\) \/ \(FILL\(fresh_\w+, 0\) \+ \(FILL\(dup_\w+, 0\) \+ FILL\(absorbed_\w+, 0\)\)\)$/
          : /^100 \* FILL\(dup_\w+, 0\) \/ \(FILL\(fresh_\w+, 0\) \+ FILL\(dup_\w+, 0\)\)$/,
      );
    }
    const awsMetrics = new Set(
      metricRows.filter((row) => typeof row[0] === 'string').map((row) => `${row[0]} ${row[1]}`),
    );
    for (const metric of [
      'AWS/SQS ApproximateAgeOfOldestMessage',
      'AWS/SQS ApproximateNumberOfMessagesVisible',
      'AWS/SQS ApproximateNumberOfMessagesNotVisible',
      'AWS/ApiGateway Latency',
      'AWS/ApiGateway 4xx',
      'AWS/ApiGateway 5xx',
      'AWS/Lambda Duration',
      'AWS/Lambda Errors',
      'AWS/Lambda Throttles',
      'AWS/Lambda ConcurrentExecutions',
    ]) {
      expect(awsMetrics, metric).toContain(metric);
    }
    const latencyStats = metricRows
      .filter((row) => row[1] === 'Latency')
      .map((row) => (row.at(-1) as { stat: string }).stat);
    expect(latencyStats).toEqual(['p50', 'p99']);
  });
});

/** The dashboard body with CloudFormation tokens replaced by a placeholder, parsed back into widgets. */
function dashboardWidgets(t: Template): Array<{ type: string; properties?: { metrics?: unknown[][] } }> {
  const dashboards = Object.values(t.findResources('AWS::CloudWatch::Dashboard'));
  expect(dashboards).toHaveLength(1);
  const parts = dashboards[0]?.Properties.DashboardBody['Fn::Join'][1] as unknown[];
  const text = parts.map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('');
  return JSON.parse(text).widgets;
}

describe('Outputs', () => {
  it('print the webhook URL, the secret name, the dashboard URL and the receiver function', () => {
    template.hasOutput('WebhookUrl', {
      Value: { 'Fn::Join': ['', Match.arrayWith(['https://', '/webhook'])] },
    });
    template.hasOutput('WebhookSecretName', { Value: 'TestStack/Webhook' });
    template.hasOutput('DashboardUrl', {
      Value: { 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp('#dashboards/dashboard/$')])] },
    });
    template.hasOutput('ReceiverFunctionName', { Value: { Ref: receiverId } });
    expect(stack.pipeline.webhookSecretName).toBe('TestStack/Webhook');
  });

  it('print the quarantine queue, the claim table and the default subscriber’s resources for the ops CLI', () => {
    template.hasOutput(STACK_OUTPUT.quarantineQueueUrl, { Value: { Ref: quarantineId } });
    template.hasOutput(STACK_OUTPUT.claimTableName, { Value: { Ref: tableId } });
    template.hasOutput(STACK_OUTPUT.subscriberNames, { Value: 'default' });
    const keys = subscriberOutputKeys('default');
    template.hasOutput(keys.deliveryQueueUrl, { Value: { Ref: queueId } });
    template.hasOutput(keys.deadLetterQueueUrl, { Value: { Ref: dlqId } });
    template.hasOutput(keys.consumerFunctionName, { Value: { Ref: consumerId } });
    const mappingId = logicalIdStartingWith(template, 'AWS::Lambda::EventSourceMapping', 'WebhookConsumer');
    template.hasOutput(keys.eventSourceMappingId, { Value: { Ref: mappingId } });
    template.hasOutput(keys.messageQueueUrl, { Value: { Ref: messageQueueId } });
    template.hasOutput(keys.messageDeadLetterQueueUrl, { Value: { Ref: messageDlqId } });
    template.hasOutput(keys.messageConsumerFunctionName, { Value: { Ref: messageConsumerId } });
    const messageMappingId = logicalIdStartingWith(
      template,
      'AWS::Lambda::EventSourceMapping',
      'WebhookMessageConsumer',
    );
    template.hasOutput(keys.messageEventSourceMappingId, { Value: { Ref: messageMappingId } });
    template.hasOutput(STACK_OUTPUT.logDigestSecretArn, { Value: { Ref: logDigestSecretId } });
    template.hasOutput(STACK_OUTPUT.provenanceSecretArn, { Value: { Ref: provenanceSecretId } });
    // And the archive bucket's (archive.test.ts).
    expect(Object.keys(template.toJSON().Outputs)).toHaveLength(18);
  });
});
