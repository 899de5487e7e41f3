/**
 * Subscribers in the construct (docs/decisions.md, "Subscribers"): N subscribers synthesise N queues, DLQs,
 * consumers and event source mappings, each consumer confined to its own claim namespace, with its own
 * alarms, dashboard row and stack outputs; a stack without subscribers keeps every logical id it had;
 * definitions that cannot work are refused before anything is built.
 */
import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../contract/environment.ts';
import {
  FIFO_MAX_BATCH_SIZE,
  ORDERED_LANE_REDRIVE_MARGIN,
  ORDERED_MESSAGE_LANE_RETRY,
} from '../../contract/lanes.ts';
import {
  ConsumerFieldMetric,
  ConsumerMetric,
  METRICS_NAMESPACE,
  SERVICE_DIMENSION,
  SERVICE_NAME,
  SUBSCRIBER_DIMENSION,
} from '../../contract/metric-names.ts';
import { resolveSettings, UnsafeSettingsError } from '../../contract/settings.ts';
import { parseSubscriberNames, STACK_OUTPUT, subscriberOutputKeys } from '../../contract/stack-outputs.ts';
import type { SubscriberDefinitions } from '../../contract/subscribers.ts';
import { WhatsAppWebhookDedup, type WhatsAppWebhookDedupProps } from '../../lib/whatsapp-webhook-dedup.ts';
import type { WhatsAppWebhookDedupStack } from '../../lib/whatsapp-webhook-dedup-stack.ts';
import { actionsOf, type Statement, statementsOfRole, synthStack } from '../support/synth-stack.ts';
import LOGICAL_IDS_BEFORE_LANES from './fixtures/logical-ids-before-lanes.json' with { type: 'json' };
import { constructConcurrency, plannedSizing } from './sizing.ts';

/**
 * The delivery archive's resources, added beside everything else in their own scope (`Archive`, and
 * `Monitoring/Archive` for its alarms) and checked by archive.test.ts; a subscriber named `archive` is
 * `SubscriberArchive`.
 */
const ARCHIVE_RESOURCE = /^Webhook(Monitoring)?Archive/;
const ARCHIVE_ALARMS = 3;

const ENTRY = 'functions/consumer.ts';
const BOT_ENTRY = 'functions/examples/subscribers/bot.ts';
const CRM_ENTRY = 'functions/examples/subscribers/crm.ts';
const DEFAULTS = resolveSettings();

/**
 * Three systems: a bot on messages only, a CRM with its own settings on one number, an unprefixed archive of
 * one account.
 */
const THREE: SubscriberDefinitions = {
  bot: {
    entry: BOT_ENTRY,
    fields: ['messages'],
    // A longer budget needs a longer retention: 7 days + 80 receives of up to 3631 s, in whole days.
    settings: { maxReceiveCount: DEFAULTS.maxReceiveCount + 20, batchSize: 5, retentionDays: 11 },
  },
  crm: {
    entry: CRM_ENTRY,
    settings: { maxConcurrency: 2 },
    memorySize: 1024,
    statusLedger: 'always',
    numbers: ['106540352242922'],
  },
  archive: { entry: ENTRY, keyNamespace: '', wabas: ['102290129340398'] },
};

/** Per-subscriber alarms (alarms.ts createSubscriberAlarms) and pipeline alarms (createPipelineAlarms). */
const SUBSCRIBER_ALARMS = [
  'DeadLetterQueueNotEmpty',
  'DeadLetterQueueArrivals',
  'OldestMessageAge',
  'DuplicateRate',
  'ConsumerErrors',
  'ConsumerThrottles',
  'CompletionFailures',
  'HandlerErrorRate',
  'ClaimFailures',
  'RedeliveriesNotScheduled',
];
/** The alarms of a subscriber's message lane (alarms.ts messageLaneAlarms). */
const MESSAGE_LANE_ALARMS = [
  'MessageDeadLetterQueueNotEmpty',
  'MessageDeadLetterQueueArrivals',
  'MessageConsumerErrors',
  'MessageConsumerThrottles',
  'MessageEventWaitTime',
  'MessageOldestMessageAge',
];
const PIPELINE_ALARMS = [
  'ApiServerErrors',
  'SignatureRejections',
  'ReceiverErrors',
  'ReceiverThrottles',
  'ClaimTableThrottledRequests',
  'ClaimTableSystemErrors',
  'QuarantineQueueNotEmpty',
  'QuarantineQueueArrivals',
];

/**
 * Every logical id of the stack as synthesised before subscribers existed (commit d5eea51, `synthStack()`).
 * Deployed stacks hold these resources; an id that disappeared would make CloudFormation replace the
 * resource, and replacing a delivery queue deletes the deliveries it holds.
 */
const LOGICAL_IDS_BEFORE_SUBSCRIBERS = [
  'WebhookHttpApiC0016618',
  'WebhookHttpApiGETwebhookReceiverIntegrationD721184D',
  'WebhookHttpApiGETwebhook96143050',
  'WebhookHttpApiPOSTwebhookBD444AEA',
  'WebhookDefaultStage2EE84197',
  'WebhookMonitoringApiServerErrors9DB93E48',
  'WebhookMonitoringClaimFailures313B95D4',
  'WebhookMonitoringClaimTableSystemErrors641229E9',
  'WebhookMonitoringClaimTableThrottledRequestsEF96086B',
  'WebhookMonitoringCompletionFailures33D71A9A',
  'WebhookMonitoringConsumerErrorsD6A00AE5',
  'WebhookMonitoringConsumerThrottles3B944317',
  'WebhookMonitoringDeadLetterQueueArrivalsF0BD2AB6',
  'WebhookMonitoringDeadLetterQueueNotEmpty5D34F7F8',
  'WebhookMonitoringDuplicateRateA3C786B4',
  'WebhookMonitoringHandlerErrorRateC7373DB5',
  'WebhookMonitoringOldestMessageAgeA4BA2DF2',
  'WebhookMonitoringReceiverErrors8D49C20C',
  'WebhookMonitoringReceiverThrottles7607B507',
  'WebhookMonitoringSignatureRejections71794C95',
  'WebhookMonitoringDashboard99FC73F6',
  'WebhookClaimTable06370FB3',
  'WebhookConsumerRoleDefaultPolicy9BDB61D1',
  'WebhookReceiverRoleDefaultPolicyBC9B1A20',
  'WebhookConsumerRole8B6CFB14',
  'WebhookReceiverRole394E4739',
  'WebhookConsumerSqsEventSourceTestStackWebhookDeliveryQueue9990D4A63D41BFA4',
  'WebhookConsumer302E6104',
  'WebhookReceiver037EED6D',
  'WebhookHttpApiGETwebhookReceiverIntegrationPermissionE718AD00',
  'WebhookHttpApiPOSTwebhookReceiverIntegrationPermission8D79498C',
  'WebhookApiAccessLogGroup9E00DFF3',
  'WebhookConsumerLogGroupCFDF742C',
  'WebhookReceiverLogGroupAF921448',
  'WebhookDeadLetterQueueBA1474CF',
  'WebhookDeliveryQueue907D70F9',
  'WebhookDeadLetterQueuePolicy0F7B92E6',
  'WebhookDeliveryQueuePolicyA52DE409',
  'WebhookWebhookSecret67EFFCDF',
];

/** Logical ids of one subscriber's resources in a synthesised template. */
interface Ids {
  queue: string;
  dlq: string;
  consumer: string;
  role: string;
  messageQueue: string;
  messageDlq: string;
  messageConsumer: string;
  messageRole: string;
}

const arn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
/** The CDK hash a logical id ends with; an event source mapping's id holds its queue's too. */
const HASHES = /(?:[0-9A-F]{8}){1,2}$/;

/** Logical id → resource type. */
function typesById(template: Template): Record<string, string> {
  return Object.fromEntries(
    Object.entries(template.toJSON().Resources as Record<string, { Type: string }>).map(([id, { Type }]) => [
      id,
      Type,
    ]),
  );
}

/** The one logical id of `type` whose id starts with `prefix` followed by the CDK hash (8 hex digits). */
function idOf(template: Template, type: string, prefix: string): string {
  const pattern = new RegExp(`^${prefix}[0-9A-F]{8}$`);
  const ids = Object.keys(template.findResources(type)).filter((id) => pattern.test(id));
  expect(ids, `${type} ${prefix}`).toHaveLength(1);
  return ids[0] as string;
}

function propertiesOf(template: Template, type: string, id: string) {
  return template.findResources(type)[id]?.Properties;
}

/** A `Fn::Join` with `{Ref: id}` parts, as text with each reference written `<id>`. */
function joinedWithRefs(value: unknown): string {
  const [separator, parts] = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  return parts
    .map((part) => (typeof part === 'string' ? part : `<${(part as { Ref: string }).Ref}>`))
    .join(separator);
}

describe('three subscribers', () => {
  let template: Template;
  let stack: WhatsAppWebhookDedupStack;
  const ids: Record<string, Ids> = {};
  let quarantineId: string;
  let receiverId: string;

  beforeAll(() => {
    ({ template, stack } = synthStack({ pipeline: { subscribers: THREE } }));
    for (const [name, part] of [
      ['bot', 'Bot'],
      ['crm', 'Crm'],
      ['archive', 'Archive'],
    ] as const) {
      ids[name] = {
        queue: idOf(template, 'AWS::SQS::Queue', `WebhookSubscriber${part}DeliveryQueue`),
        dlq: idOf(template, 'AWS::SQS::Queue', `WebhookSubscriber${part}DeadLetterQueue`),
        consumer: idOf(template, 'AWS::Lambda::Function', `WebhookSubscriber${part}Consumer`),
        role: idOf(template, 'AWS::IAM::Role', `WebhookSubscriber${part}ConsumerRole`),
        messageQueue: idOf(template, 'AWS::SQS::Queue', `WebhookSubscriber${part}MessageQueue`),
        messageDlq: idOf(template, 'AWS::SQS::Queue', `WebhookSubscriber${part}MessageDeadLetterQueue`),
        messageConsumer: idOf(template, 'AWS::Lambda::Function', `WebhookSubscriber${part}MessageConsumer`),
        messageRole: idOf(template, 'AWS::IAM::Role', `WebhookSubscriber${part}MessageConsumerRole`),
      };
    }
    quarantineId = idOf(template, 'AWS::SQS::Queue', 'WebhookQuarantineQueue');
    receiverId = idOf(template, 'AWS::Lambda::Function', 'WebhookReceiver');
  });

  const of = (name: string) => ids[name] as Ids;

  it('synthesise per subscriber two lanes (queue, DLQ, consumer, mapping each), one quarantine queue and one receiver', () => {
    // And the delivery archive's queue, DLQ, archiver, mapping and log group (archive.test.ts).
    template.resourceCountIs('AWS::SQS::Queue', 13 + 2);
    template.resourceCountIs('AWS::Lambda::Function', 7 + 1);
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 6 + 1);
    template.resourceCountIs('AWS::Logs::LogGroup', 8 + 1);
    // None at the root ids of the single-subscriber stack: no subscriber is called `default`.
    expect(
      Object.keys(template.findResources('AWS::SQS::Queue')).some((id) => /^WebhookDeliveryQueue/.test(id)),
    ).toBe(false);
    expect(stack.pipeline.subscribers.map(({ name }) => name)).toEqual(['bot', 'crm', 'archive']);
  });

  it('give each message lane a high-throughput FIFO queue and FIFO DLQ with the lane’s redrive, whatever the subscriber’s maxReceiveCount', () => {
    for (const name of ['bot', 'crm', 'archive']) {
      const fifo = {
        FifoQueue: true,
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
        ContentBasedDeduplication: false,
      };
      expect(propertiesOf(template, 'AWS::SQS::Queue', of(name).messageQueue), name).toMatchObject({
        ...fifo,
        RedrivePolicy: {
          deadLetterTargetArn: arn(of(name).messageDlq),
          maxReceiveCount: ORDERED_MESSAGE_LANE_RETRY.maxReceiveCount + ORDERED_LANE_REDRIVE_MARGIN,
        },
      });
      expect(propertiesOf(template, 'AWS::SQS::Queue', of(name).messageDlq), name).toMatchObject(fifo);
      // The status lane stays the standard queue it was.
      expect(propertiesOf(template, 'AWS::SQS::Queue', of(name).queue)).not.toHaveProperty('FifoQueue');
    }
  });

  it('map each message queue to its own message consumer: the subscriber’s batch size (≤ 10) and concurrency, no batching window', () => {
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).map(
      (mapping) => mapping.Properties,
    );
    for (const [name, batchSize, maximumConcurrency] of [
      ['bot', 5, constructConcurrency(plannedSizing(undefined, THREE), 'bot', 'message')],
      ['crm', Math.min(DEFAULTS.batchSize, FIFO_MAX_BATCH_SIZE), 2],
      [
        'archive',
        Math.min(DEFAULTS.batchSize, FIFO_MAX_BATCH_SIZE),
        constructConcurrency(plannedSizing(undefined, THREE), 'archive', 'message'),
      ],
    ] as const) {
      const mapping = mappings.find(
        (properties) => properties.EventSourceArn['Fn::GetAtt'][0] === of(name).messageQueue,
      );
      expect(mapping, name).toEqual({
        EventSourceArn: arn(of(name).messageQueue),
        FunctionName: { Ref: of(name).messageConsumer },
        BatchSize: batchSize,
        ScalingConfig: { MaximumConcurrency: maximumConcurrency },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
    }
  });

  it('give both consumers of a subscriber its entry, name, fields and namespace, each its own lane, queue and retry delays', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    for (const name of ['bot', 'crm', 'archive']) {
      const status = functions[of(name).consumer]?.Properties;
      const message = functions[of(name).messageConsumer]?.Properties;
      expect(status.Environment.Variables[ENV.lane], name).toBe('status');
      expect(status.Environment.Variables).not.toHaveProperty(ENV.laneOrdered);
      expect(message.Environment.Variables, name).toEqual({
        ...status.Environment.Variables,
        [ENV.deliveryQueueUrl]: { Ref: of(name).messageQueue },
        [ENV.lane]: 'message',
        [ENV.laneOrdered]: 'true',
        [ENV.retryBaseDelaySeconds]: String(ORDERED_MESSAGE_LANE_RETRY.retryBaseDelaySeconds),
        [ENV.retryMaxDelaySeconds]: String(ORDERED_MESSAGE_LANE_RETRY.retryMaxDelaySeconds),
        [ENV.laneDeadLetterQueueUrl]: { Ref: of(name).messageDlq },
        [ENV.laneMaxReceives]: String(ORDERED_MESSAGE_LANE_RETRY.maxReceiveCount),
      });
      expect(message.MemorySize, name).toBe(status.MemorySize);
    }
  });

  it('give each delivery queue its own DLQ with its own maxReceiveCount, the others the pipeline’s', () => {
    for (const [name, maxReceiveCount] of [
      ['bot', DEFAULTS.maxReceiveCount + 20],
      ['crm', DEFAULTS.maxReceiveCount],
      ['archive', DEFAULTS.maxReceiveCount],
    ] as const) {
      expect(propertiesOf(template, 'AWS::SQS::Queue', of(name).queue).RedrivePolicy, name).toEqual({
        deadLetterTargetArn: arn(of(name).dlq),
        maxReceiveCount,
      });
      expect(propertiesOf(template, 'AWS::SQS::Queue', of(name).dlq).RedrivePolicy).toBeUndefined();
    }
  });

  it('map each queue to its own consumer with that subscriber’s batch size and concurrency', () => {
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).map(
      (mapping) => mapping.Properties,
    );
    for (const [name, batchSize, maximumConcurrency] of [
      ['bot', 5, constructConcurrency(plannedSizing(undefined, THREE), 'bot', 'status')],
      ['crm', DEFAULTS.batchSize, 2],
      [
        'archive',
        DEFAULTS.batchSize,
        constructConcurrency(plannedSizing(undefined, THREE), 'archive', 'status'),
      ],
    ] as const) {
      expect(mappings, name).toContainEqual(
        expect.objectContaining({
          EventSourceArn: arn(of(name).queue),
          FunctionName: { Ref: of(name).consumer },
          BatchSize: batchSize,
          ScalingConfig: { MaximumConcurrency: maximumConcurrency },
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        }),
      );
    }
  });

  it('give each consumer its name, fields, numbers, wabas, namespace, own queue and the shared quarantine queue', () => {
    const variables = (name: string) =>
      propertiesOf(template, 'AWS::Lambda::Function', of(name).consumer).Environment.Variables;
    for (const name of ['bot', 'crm', 'archive']) {
      expect(variables(name), name).toMatchObject({
        [ENV.subscriberName]: name,
        [ENV.deliveryQueueUrl]: { Ref: of(name).queue },
        [ENV.quarantineQueueUrl]: { Ref: quarantineId },
      });
    }
    expect(variables('bot')[ENV.subscriberFields]).toBe('messages');
    expect(variables('crm')).not.toHaveProperty(ENV.subscriberFields);
    expect(variables('crm')[ENV.subscriberNumbers]).toBe('106540352242922');
    expect(variables('archive')[ENV.subscriberWabas]).toBe('102290129340398');
    expect(variables('bot')).not.toHaveProperty(ENV.subscriberNumbers);
    expect(variables('bot')).not.toHaveProperty(ENV.subscriberWabas);
    expect(variables('bot')[ENV.keyNamespace]).toBe('bot');
    expect(variables('crm')[ENV.keyNamespace]).toBe('crm');
    expect(variables('archive')).not.toHaveProperty(ENV.keyNamespace);
    expect(variables('crm')[ENV.statusLedger]).toBe('always');
    expect(variables('bot')).toMatchObject({
      [ENV.retryBaseDelaySeconds]: String(DEFAULTS.retryBaseDelaySeconds),
      [ENV.retryMaxDelaySeconds]: String(DEFAULTS.retryMaxDelaySeconds),
    });
    expect(variables('bot')).not.toHaveProperty(ENV.statusLedger);
    expect(propertiesOf(template, 'AWS::Lambda::Function', of('crm').consumer).MemorySize).toBe(1024);
    expect(propertiesOf(template, 'AWS::Lambda::Function', of('bot').consumer).MemorySize).toBe(512);
  });

  it('give the receiver every subscriber queue with its fields, numbers and wabas, and the quarantine queue', () => {
    const variables = propertiesOf(template, 'AWS::Lambda::Function', receiverId).Environment.Variables;
    const lane = (name: string) => ({
      messageQueueUrl: `<${of(name).messageQueue}>`,
      messageLaneOrdered: true,
    });
    expect(JSON.parse(joinedWithRefs(variables[ENV.subscriberQueues]))).toEqual([
      { name: 'bot', queueUrl: `<${of('bot').queue}>`, fields: ['messages'], ...lane('bot') },
      { name: 'crm', queueUrl: `<${of('crm').queue}>`, numbers: ['106540352242922'], ...lane('crm') },
      {
        name: 'archive',
        queueUrl: `<${of('archive').queue}>`,
        wabas: ['102290129340398'],
        ...lane('archive'),
      },
    ]);
    expect(variables[ENV.quarantineQueueUrl]).toEqual({ Ref: quarantineId });
  });

  it('let the receiver send to every subscriber’s two lane queues and the quarantine queue, and to no DLQ', () => {
    const send = statementsOfRole(template, 'WebhookReceiverRole').filter((s) =>
      actionsOf(s).includes('sqs:SendMessage'),
    );
    expect(send).toHaveLength(1);
    expect(send[0]?.Resource).toEqual(
      expect.arrayContaining([
        ...['bot', 'crm', 'archive'].flatMap((name) => [arn(of(name).queue), arn(of(name).messageQueue)]),
        arn(quarantineId),
      ]),
    );
    // And the archive queue (archive.test.ts).
    expect(send[0]?.Resource).toHaveLength(7 + 1);
  });

  it('confine a namespaced subscriber’s consumers (both lanes) to keys starting with its namespace', () => {
    const tableId = idOf(template, 'AWS::DynamoDB::GlobalTable', 'WebhookClaimTable');
    for (const [name, role] of ['bot', 'crm'].flatMap((name) => [
      [name, of(name).role],
      [name, of(name).messageRole],
    ])) {
      const dynamo = dynamoStatements(template, role as string);
      expect(dynamo, name).toEqual([
        expect.objectContaining({
          Effect: 'Allow',
          Resource: arn(tableId),
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${name}#*`] } },
        }),
      ]);
      expect(actionsOf(dynamo[0] as Statement).sort()).toEqual([
        'dynamodb:DeleteItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ]);
    }
  });

  it.each([
    ['status', 'role'],
    ['message', 'messageRole'],
  ] as const)(
    'give the unprefixed %s lane consumer the table with an explicit Deny on the other subscribers’ prefixes',
    (_lane, role) => {
      const tableId = idOf(template, 'AWS::DynamoDB::GlobalTable', 'WebhookClaimTable');
      const dynamo = dynamoStatements(template, of('archive')[role]);
      expect(dynamo).toHaveLength(2);
      const allow = dynamo.find((s) => s.Effect === 'Allow');
      expect(allow?.Resource).toEqual(arn(tableId));
      expect(allow).not.toHaveProperty('Condition');
      const deny = dynamo.find((s) => s.Effect === 'Deny') as Statement & { Condition: unknown };
      expect(deny.Resource).toEqual(arn(tableId));
      expect(actionsOf(deny).sort()).toEqual(actionsOf(allow as Statement).sort());
      expect(deny.Condition).toEqual({
        'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ['bot#*', 'crm#*'] },
      });
    },
  );

  it('let each consumer send only to the quarantine queue and its lane’s DLQ (DeadLetter), and consume only its own queue', () => {
    for (const name of ['bot', 'crm', 'archive']) {
      const statements = statementsOfRole(template, of(name).role);
      const send = statements.filter((s) => actionsOf(s).includes('sqs:SendMessage'));
      expect(
        send.map((s) => s.Resource),
        name,
      ).toEqual([arn(quarantineId), arn(of(name).dlq)]);
      const consume = statements.filter((s) => actionsOf(s).includes('sqs:ReceiveMessage'));
      expect(
        consume.map((s) => s.Resource),
        name,
      ).toEqual([arn(of(name).queue)]);
      const message = statementsOfRole(template, of(name).messageRole);
      expect(
        message.filter((s) => actionsOf(s).includes('sqs:SendMessage')).map((s) => s.Resource),
        name,
      ).toEqual([arn(quarantineId), arn(of(name).messageDlq)]);
      expect(
        message.filter((s) => actionsOf(s).includes('sqs:ReceiveMessage')).map((s) => s.Resource),
        name,
      ).toEqual([arn(of(name).messageQueue)]);
    }
  });

  it('create each subscriber’s alarms on its own resources and metrics, the pipeline’s once', () => {
    template.resourceCountIs(
      'AWS::CloudWatch::Alarm',
      3 * (SUBSCRIBER_ALARMS.length + MESSAGE_LANE_ALARMS.length) + PIPELINE_ALARMS.length + ARCHIVE_ALARMS,
    );
    for (const alarm of PIPELINE_ALARMS)
      idOf(template, 'AWS::CloudWatch::Alarm', `WebhookMonitoring${alarm}`);
    for (const [name, part] of [
      ['bot', 'Bot'],
      ['crm', 'Crm'],
      ['archive', 'Archive'],
    ] as const) {
      const alarm = (id: string) =>
        propertiesOf(
          template,
          'AWS::CloudWatch::Alarm',
          idOf(template, 'AWS::CloudWatch::Alarm', `WebhookMonitoringSubscriber${part}${id}`),
        );
      for (const id of [...SUBSCRIBER_ALARMS, ...MESSAGE_LANE_ALARMS])
        expect(alarm(id).AlarmDescription, id).toMatch(`Subscriber ${name}: `);
      expect(alarm('MessageConsumerErrors').Dimensions).toEqual([
        { Name: 'FunctionName', Value: { Ref: of(name).messageConsumer } },
      ]);
      expect(JSON.stringify(alarm('MessageDeadLetterQueueArrivals').Metrics)).toContain(
        `"${of(name).messageDlq}"`,
      );
      expect(alarm('MessageEventWaitTime').Metrics[0].MetricStat.Metric.Dimensions).toEqual(
        expect.arrayContaining([{ Name: SUBSCRIBER_DIMENSION, Value: name }]),
      );
      expect(alarm('ConsumerErrors').Dimensions).toEqual([
        { Name: 'FunctionName', Value: { Ref: of(name).consumer } },
      ]);
      expect(alarm('OldestMessageAge').Dimensions).toEqual([
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [of(name).queue, 'QueueName'] } },
      ]);
      expect(JSON.stringify(alarm('DeadLetterQueueArrivals').Metrics)).toContain(`"${of(name).dlq}"`);
      // Every custom metric an alarm reads carries the subscriber's dimension next to service.
      for (const id of [
        'CompletionFailures',
        'ClaimFailures',
        'HandlerErrorRate',
        'DuplicateRate',
        'RedeliveriesNotScheduled',
      ]) {
        const metrics = (
          alarm(id).Metrics as Array<{ MetricStat?: { Metric: { Dimensions: unknown[] } } }>
        ).flatMap((query) => (query.MetricStat ? [query.MetricStat.Metric] : []));
        expect(metrics.length, id).toBeGreaterThan(0);
        for (const metric of metrics) {
          expect(metric.Dimensions, id).toEqual(
            expect.arrayContaining([
              { Name: SUBSCRIBER_DIMENSION, Value: name },
              { Name: SERVICE_DIMENSION, Value: SERVICE_NAME },
            ]),
          );
        }
      }
    }
  });

  it('give the dashboard one row per subscriber, each on that subscriber’s metrics and resources', () => {
    const widgets = dashboardWidgets(template);
    for (const name of ['bot', 'crm', 'archive']) {
      const row = widgets.filter((widget) => widget.properties?.title?.startsWith(`${name}: `));
      expect(row, name).toHaveLength(4);
      // Quarter-width widgets: the four fill one 24-unit row.
      expect(new Set(row.map((widget) => widget.y)).size, name).toBe(1);
      expect(row.reduce((width, widget) => width + (widget.width ?? 0), 0)).toBe(24);
      const text = JSON.stringify(row);
      expect(text).toContain(`${SUBSCRIBER_DIMENSION}=\\"${name}\\"`);
      for (const other of ['bot', 'crm', 'archive'].filter((candidate) => candidate !== name)) {
        expect(text).not.toContain(`${SUBSCRIBER_DIMENSION}=\\"${other}\\"`);
      }
      const custom = row
        .flatMap((widget) => (widget.properties?.metrics ?? []) as unknown[][])
        .filter((metric) => metric[0] === METRICS_NAMESPACE);
      for (const metric of custom)
        expect(metric, name).toEqual(expect.arrayContaining([SUBSCRIBER_DIMENSION, name]));
      expect(custom.map((metric) => metric[1])).toEqual(
        expect.arrayContaining([ConsumerMetric.ClaimFailures, ConsumerMetric.CompletionFailures]),
      );
      expect(text).toContain(`MetricName=\\"${ConsumerFieldMetric.EventsFilteredOut}\\"`);
      // Its lanes' row: the message lane's three graphs, then the status lane's wait.
      const lanes = widgets.filter((widget) =>
        /^\S+ (message|status) lane: /.test(widget.properties?.title ?? ''),
      );
      const own = lanes.filter((widget) => widget.properties?.title?.startsWith(`${name} `));
      expect(own.map((widget) => widget.properties?.title?.split(':')[0])).toEqual([
        `${name} message lane`,
        `${name} message lane`,
        `${name} message lane`,
        `${name} status lane`,
      ]);
      expect(new Set(own.map((widget) => widget.y)).size, name).toBe(1);
      const laneMetrics = own.flatMap((widget) => (widget.properties?.metrics ?? []) as unknown[][]);
      const waits = laneMetrics.filter(
        (metric) => metric[0] === METRICS_NAMESPACE && metric[1] === 'EventWaitTime',
      );
      expect(waits, name).toHaveLength(4);
      for (const metric of waits)
        expect(metric, name).toEqual(expect.arrayContaining([SUBSCRIBER_DIMENSION, name]));
      expect(laneMetrics.filter((metric) => metric[1] === 'ApproximateAgeOfOldestMessage')).toHaveLength(2);
    }
  });

  it('output the quarantine queue, the table, the subscriber names and each subscriber’s resources', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs[STACK_OUTPUT.quarantineQueueUrl]?.Value).toEqual({ Ref: quarantineId });
    expect(outputs[STACK_OUTPUT.claimTableName]?.Value).toEqual({
      Ref: idOf(template, 'AWS::DynamoDB::GlobalTable', 'WebhookClaimTable'),
    });
    expect(parseSubscriberNames(outputs[STACK_OUTPUT.subscriberNames]?.Value as string)).toEqual([
      'bot',
      'crm',
      'archive',
    ]);
    const mappings = template.findResources('AWS::Lambda::EventSourceMapping');
    for (const name of ['bot', 'crm', 'archive']) {
      const keys = subscriberOutputKeys(name);
      expect(outputs[keys.deliveryQueueUrl]?.Value, name).toEqual({ Ref: of(name).queue });
      expect(outputs[keys.deadLetterQueueUrl]?.Value, name).toEqual({ Ref: of(name).dlq });
      expect(outputs[keys.consumerFunctionName]?.Value, name).toEqual({ Ref: of(name).consumer });
      const mappingRef =
        (outputs[keys.eventSourceMappingId]?.Value as { Ref: string } | undefined)?.Ref ?? '';
      expect(mappings[mappingRef]?.Properties.FunctionName, name).toEqual({ Ref: of(name).consumer });
      expect(outputs[keys.messageQueueUrl]?.Value, name).toEqual({ Ref: of(name).messageQueue });
      expect(outputs[keys.messageDeadLetterQueueUrl]?.Value, name).toEqual({ Ref: of(name).messageDlq });
      expect(outputs[keys.messageConsumerFunctionName]?.Value, name).toEqual({
        Ref: of(name).messageConsumer,
      });
      const messageMappingRef =
        (outputs[keys.messageEventSourceMappingId]?.Value as { Ref: string } | undefined)?.Ref ?? '';
      expect(mappings[messageMappingRef]?.Properties.FunctionName, name).toEqual({
        Ref: of(name).messageConsumer,
      });
    }
    expect(subscriberOutputKeys('crm').messageQueueUrl).toBe('CrmMessageQueueUrl');
    expect(subscriberOutputKeys('crm').deliveryQueueUrl).toBe('CrmDeliveryQueueUrl');
  });

  it('docs quote the alarms and alarm metrics each subscriber adds, as synthesised', () => {
    const alarms = Object.entries(template.findResources('AWS::CloudWatch::Alarm'));
    const bots = alarms.filter(([id]) => id.startsWith('WebhookMonitoringSubscriberBot'));
    const perSubscriber = bots.length;
    const withOne = alarms.length - 2 * perSubscriber;
    const withoutMessageLane = perSubscriber - MESSAGE_LANE_ALARMS.length;
    // What CloudWatch bills per alarm: one metric, or each metric a metric-math alarm reads.
    const metrics = bots.reduce(
      (total, [, alarm]) =>
        total +
        (alarm.Properties.MetricName !== undefined
          ? 1
          : (alarm.Properties.Metrics as Array<{ MetricStat?: unknown }>).filter((query) => query.MetricStat)
              .length),
      0,
    );
    const words =
      'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(
        ' ',
      );
    const tens = ['', '', 'twenty', 'thirty'];
    const inWords = (count: number) =>
      words[count] ??
      (count < 40
        ? `${tens[Math.floor(count / 10)]}${count % 10 === 0 ? '' : `-${words[count % 10]}`}`
        : `${count} (no word for it in this test)`);
    const read = (file: string) =>
      readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(read('docs/deploy.md')).toContain(
      `its alarms (${inWords(withOne)} with one subscriber, ${inWords(perSubscriber)} more for each further subscriber, ${inWords(withoutMessageLane)} for one without \`messages\`)`,
    );
    const row = read('docs/cost.md')
      .split('| ')
      .find((cell) => cell.startsWith('Each subscriber beyond the first, its alarms:'));
    expect(row).toContain(`= ${metrics} alarm metrics`);
  });

  it('expose each subscriber’s resources, and the first one’s as the single-consumer properties', () => {
    const pipeline = stack.pipeline;
    const [bot] = pipeline.subscribers;
    expect(pipeline.consumerFunction).toBe(bot?.consumerFunction);
    expect(pipeline.deliveryQueue).toBe(bot?.deliveryQueue);
    expect(pipeline.deadLetterQueue).toBe(bot?.deadLetterQueue);
    expect(pipeline.subscribers.map(({ keyNamespace }) => keyNamespace)).toEqual(['bot', 'crm', undefined]);
    expect(Object.keys(pipeline.subscriberAlarms)).toEqual(['bot', 'crm', 'archive']);
    expect(pipeline.alarms.consumerErrors).toBe(pipeline.subscriberAlarms.bot?.consumerErrors);
  });
});

describe('a subscriber named default beside new ones', () => {
  it('keeps every resource of the single-consumer stack under its logical id', () => {
    const { template } = synthStack({
      pipeline: { subscribers: { default: { entry: ENTRY, keyNamespace: '' }, crm: { entry: ENTRY } } },
    });
    const present = new Set(Object.keys(template.toJSON().Resources));
    expect(LOGICAL_IDS_BEFORE_SUBSCRIBERS.filter((id) => !present.has(id))).toEqual([]);
    // Each with its two lanes, and the archiver's.
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 4 + 1);
    idOf(template, 'AWS::SQS::Queue', 'WebhookSubscriberCrmDeliveryQueue');
  });
});

describe('without subscribers', () => {
  let template: Template;
  beforeAll(() => {
    ({ template } = synthStack());
  });

  it('keeps every logical id of the stack as it was before subscribers, adding the quarantine queue, the message lane and their alarms', () => {
    const present = Object.keys(template.toJSON().Resources);
    expect(LOGICAL_IDS_BEFORE_SUBSCRIBERS.filter((id) => !present.includes(id))).toEqual([]);
    expect(
      present
        .filter((id) => !LOGICAL_IDS_BEFORE_SUBSCRIBERS.includes(id) && !ARCHIVE_RESOURCE.test(id))
        .map((id) => id.replace(HASHES, ''))
        .sort(),
    ).toEqual([
      // The keys the stack generates: the log digest key and the provenance key.
      'WebhookLogDigestKey',
      'WebhookMessageConsumer',
      'WebhookMessageConsumerLogGroup',
      'WebhookMessageConsumerRole',
      'WebhookMessageConsumerRoleDefaultPolicy',
      // The event source's id names the queue by its path, then the CDK hash.
      'WebhookMessageConsumerSqsEventSourceTestStackWebhookMessageQueue',
      'WebhookMessageDeadLetterQueue',
      'WebhookMessageDeadLetterQueuePolicy',
      'WebhookMessageQueue',
      'WebhookMessageQueuePolicy',
      'WebhookMonitoringMessageConsumerErrors',
      'WebhookMonitoringMessageConsumerThrottles',
      'WebhookMonitoringMessageDeadLetterQueueArrivals',
      'WebhookMonitoringMessageDeadLetterQueueNotEmpty',
      'WebhookMonitoringMessageEventWaitTime',
      'WebhookMonitoringMessageOldestMessageAge',
      'WebhookMonitoringQuarantineQueueArrivals',
      'WebhookMonitoringQuarantineQueueNotEmpty',
      'WebhookMonitoringRedeliveriesNotScheduled',
      'WebhookProvenanceKey',
      'WebhookQuarantineQueue',
      'WebhookQuarantineQueuePolicy',
    ]);
  });

  it('keeps every resource of the stack before lanes under its logical id with its type: the status lane is the queue it had', () => {
    const now = typesById(template);
    const before = LOGICAL_IDS_BEFORE_LANES.default as Record<string, string>;
    expect(Object.entries(before).filter(([id, type]) => now[id] !== type)).toEqual([]);
    expect(
      Object.keys(now)
        .filter((id) => !(id in before) && !ARCHIVE_RESOURCE.test(id))
        .map((id) => `${now[id]} ${id.replace(HASHES, '')}`)
        .sort(),
    ).toEqual([
      'AWS::CloudWatch::Alarm WebhookMonitoringMessageConsumerErrors',
      'AWS::CloudWatch::Alarm WebhookMonitoringMessageConsumerThrottles',
      'AWS::CloudWatch::Alarm WebhookMonitoringMessageDeadLetterQueueArrivals',
      'AWS::CloudWatch::Alarm WebhookMonitoringMessageDeadLetterQueueNotEmpty',
      'AWS::CloudWatch::Alarm WebhookMonitoringMessageEventWaitTime',
      'AWS::CloudWatch::Alarm WebhookMonitoringMessageOldestMessageAge',
      'AWS::CloudWatch::Alarm WebhookMonitoringRedeliveriesNotScheduled',
      'AWS::IAM::Policy WebhookMessageConsumerRoleDefaultPolicy',
      'AWS::IAM::Role WebhookMessageConsumerRole',
      'AWS::Lambda::EventSourceMapping WebhookMessageConsumerSqsEventSourceTestStackWebhookMessageQueue',
      'AWS::Lambda::Function WebhookMessageConsumer',
      'AWS::Logs::LogGroup WebhookMessageConsumerLogGroup',
      'AWS::SQS::Queue WebhookMessageDeadLetterQueue',
      'AWS::SQS::Queue WebhookMessageQueue',
      'AWS::SQS::QueuePolicy WebhookMessageDeadLetterQueuePolicy',
      'AWS::SQS::QueuePolicy WebhookMessageQueuePolicy',
      'AWS::SecretsManager::Secret WebhookLogDigestKey',
      'AWS::SecretsManager::Secret WebhookProvenanceKey',
    ]);
    // The status lane keeps the standard queue it was (a FIFO queue cannot replace it in place).
    const queueId = idOf(template, 'AWS::SQS::Queue', 'WebhookDeliveryQueue');
    expect(propertiesOf(template, 'AWS::SQS::Queue', queueId)).not.toHaveProperty('FifoQueue');
  });
});

describe('three subscribers, upgraded to lanes', () => {
  it('keep every resource they had under its logical id with its type, and gain a message lane each', () => {
    const now = typesById(synthStack({ pipeline: { subscribers: THREE } }).template);
    const before = LOGICAL_IDS_BEFORE_LANES.three as Record<string, string>;
    expect(Object.entries(before).filter(([id, type]) => now[id] !== type)).toEqual([]);
    const added = Object.keys(now).filter((id) => !(id in before) && !ARCHIVE_RESOURCE.test(id));
    for (const part of ['Bot', 'Crm', 'Archive']) {
      const mine = added.filter(
        (id) =>
          id.startsWith(`WebhookSubscriber${part}`) || id.startsWith(`WebhookMonitoringSubscriber${part}`),
      );
      expect(mine.map((id) => `${now[id]} ${id.replace(HASHES, '')}`).sort(), part).toEqual(
        [
          `AWS::CloudWatch::Alarm WebhookMonitoringSubscriber${part}RedeliveriesNotScheduled`,
          ...MESSAGE_LANE_ALARMS.map(
            (alarm) => `AWS::CloudWatch::Alarm WebhookMonitoringSubscriber${part}${alarm}`,
          ),
          `AWS::IAM::Policy WebhookSubscriber${part}MessageConsumerRoleDefaultPolicy`,
          `AWS::IAM::Role WebhookSubscriber${part}MessageConsumerRole`,
          `AWS::Lambda::EventSourceMapping WebhookSubscriber${part}MessageConsumerSqsEventSourceTestStackWebhookSubscriber${part}MessageQueue`,
          `AWS::Lambda::Function WebhookSubscriber${part}MessageConsumer`,
          `AWS::Logs::LogGroup WebhookSubscriber${part}MessageConsumerLogGroup`,
          `AWS::SQS::Queue WebhookSubscriber${part}MessageDeadLetterQueue`,
          `AWS::SQS::Queue WebhookSubscriber${part}MessageQueue`,
          `AWS::SQS::QueuePolicy WebhookSubscriber${part}MessageDeadLetterQueuePolicy`,
          `AWS::SQS::QueuePolicy WebhookSubscriber${part}MessageQueuePolicy`,
        ].sort(),
      );
    }
    // And the two keys the stack generates, once for the pipeline.
    expect(added).toHaveLength(3 * 16 + 2);
  });
});

describe('a subscriber without messages beside one with them', () => {
  let template: Template;
  let stack: WhatsAppWebhookDedupStack;
  beforeAll(() => {
    ({ template, stack } = synthStack({
      pipeline: {
        subscribers: {
          bot: { entry: BOT_ENTRY, fields: ['messages'] },
          templates: { entry: CRM_ENTRY, fields: ['message_template_status_update'] },
        },
      },
    }));
  });

  it('has only its status lane: no message queue, consumer, mapping, alarms or outputs, and LANE=status', () => {
    const ids = Object.keys(template.toJSON().Resources);
    expect(ids.filter((id) => /^WebhookSubscriberTemplatesMessage/.test(id))).toEqual([]);
    expect(ids.filter((id) => /^WebhookMonitoringSubscriberTemplatesMessage/.test(id))).toEqual([]);
    expect(ids.filter((id) => /^WebhookSubscriberBotMessageQueue[0-9A-F]{8}$/.test(id))).toHaveLength(1);
    // And the archiver.
    template.resourceCountIs('AWS::Lambda::Function', 4 + 1);
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 3 + 1);
    idOf(template, 'AWS::CloudWatch::Alarm', 'WebhookMonitoringSubscriberTemplatesRedeliveriesNotScheduled');
    const outputs = template.toJSON().Outputs as Record<string, unknown>;
    const keys = subscriberOutputKeys('templates');
    expect(outputs).toHaveProperty(keys.deliveryQueueUrl);
    for (const key of [
      keys.messageQueueUrl,
      keys.messageDeadLetterQueueUrl,
      keys.messageConsumerFunctionName,
      keys.messageEventSourceMappingId,
    ]) {
      expect(outputs).not.toHaveProperty(key);
    }
    expect(outputs).toHaveProperty(subscriberOutputKeys('bot').messageQueueUrl);
    const consumer = idOf(template, 'AWS::Lambda::Function', 'WebhookSubscriberTemplatesConsumer');
    expect(propertiesOf(template, 'AWS::Lambda::Function', consumer).Environment.Variables[ENV.lane]).toBe(
      'status',
    );
    expect(stack.pipeline.subscribers.map(({ name, messageLane }) => [name, messageLane?.ordered])).toEqual([
      ['bot', true],
      ['templates', undefined],
    ]);
    expect(Object.keys(stack.pipeline.subscriberAlarms.templates ?? {})).not.toContain(
      'messageEventWaitTime',
    );
  });

  it('reaches the receiver without a message queue; the other with its FIFO lane', () => {
    const receiver = idOf(template, 'AWS::Lambda::Function', 'WebhookReceiver');
    const variables = propertiesOf(template, 'AWS::Lambda::Function', receiver).Environment.Variables;
    expect(JSON.parse(joinedWithRefs(variables[ENV.subscriberQueues]))).toEqual([
      {
        name: 'bot',
        queueUrl: `<${idOf(template, 'AWS::SQS::Queue', 'WebhookSubscriberBotDeliveryQueue')}>`,
        fields: ['messages'],
        messageQueueUrl: `<${idOf(template, 'AWS::SQS::Queue', 'WebhookSubscriberBotMessageQueue')}>`,
        messageLaneOrdered: true,
      },
      {
        name: 'templates',
        queueUrl: `<${idOf(template, 'AWS::SQS::Queue', 'WebhookSubscriberTemplatesDeliveryQueue')}>`,
        fields: ['message_template_status_update'],
      },
    ]);
  });
});

describe('an unordered message lane (ordered: false)', () => {
  let template: Template;
  beforeAll(() => {
    ({ template } = synthStack({
      pipeline: {
        subscribers: {
          crm: {
            entry: CRM_ENTRY,
            messageLane: { ordered: false, settings: { maxBatchingWindowSeconds: 2 } },
          },
        },
      },
    }));
  });

  it('is a standard queue and DLQ with the subscriber’s own retry budget', () => {
    const queue = idOf(template, 'AWS::SQS::Queue', 'WebhookSubscriberCrmMessageQueue');
    const dlq = idOf(template, 'AWS::SQS::Queue', 'WebhookSubscriberCrmMessageDeadLetterQueue');
    for (const id of [queue, dlq]) {
      const properties = propertiesOf(template, 'AWS::SQS::Queue', id);
      for (const fifoOnly of [
        'FifoQueue',
        'DeduplicationScope',
        'FifoThroughputLimit',
        'ContentBasedDeduplication',
      ])
        expect(properties, fifoOnly).not.toHaveProperty(fifoOnly);
    }
    expect(propertiesOf(template, 'AWS::SQS::Queue', queue)).toMatchObject({
      // Its own window is in the visibility timeout, as on the status lane.
      VisibilityTimeout: 6 * DEFAULTS.consumerTimeoutSeconds + 2,
      RedrivePolicy: { deadLetterTargetArn: arn(dlq), maxReceiveCount: DEFAULTS.maxReceiveCount },
    });
  });

  it('keeps the batching window it asks for, and its consumer and the receiver know it is unordered', () => {
    const queue = idOf(template, 'AWS::SQS::Queue', 'WebhookSubscriberCrmMessageQueue');
    const consumer = idOf(template, 'AWS::Lambda::Function', 'WebhookSubscriberCrmMessageConsumer');
    const mapping = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).find(
      (resource) => resource.Properties.EventSourceArn['Fn::GetAtt'][0] === queue,
    );
    expect(mapping?.Properties).toMatchObject({
      FunctionName: { Ref: consumer },
      MaximumBatchingWindowInSeconds: 2,
      BatchSize: DEFAULTS.batchSize,
    });
    const consumerVariables = propertiesOf(template, 'AWS::Lambda::Function', consumer).Environment.Variables;
    expect(consumerVariables).toMatchObject({
      [ENV.lane]: 'message',
      [ENV.laneOrdered]: 'false',
      [ENV.retryBaseDelaySeconds]: String(DEFAULTS.retryBaseDelaySeconds),
      [ENV.retryMaxDelaySeconds]: String(DEFAULTS.retryMaxDelaySeconds),
    });
    // Its DLQ takes the records a handler gives up on (DeadLetter); on its last receive a failing record is
    // left to SQS redrive, as no conversation waits behind it.
    const dlq = idOf(template, 'AWS::SQS::Queue', 'WebhookSubscriberCrmMessageDeadLetterQueue');
    expect(JSON.stringify(consumerVariables[ENV.laneDeadLetterQueueUrl])).toContain(dlq);
    const role = idOf(template, 'AWS::IAM::Role', 'WebhookSubscriberCrmMessageConsumerRole');
    expect(
      statementsOfRole(template, role)
        .filter((s) => actionsOf(s).includes('sqs:SendMessage'))
        .map((s) => s.Resource),
    ).toEqual([arn(idOf(template, 'AWS::SQS::Queue', 'WebhookQuarantineQueue')), arn(dlq)]);
    const receiver = idOf(template, 'AWS::Lambda::Function', 'WebhookReceiver');
    const variables = propertiesOf(template, 'AWS::Lambda::Function', receiver).Environment.Variables;
    expect(JSON.parse(joinedWithRefs(variables[ENV.subscriberQueues]))[0]).toMatchObject({
      messageQueueUrl: `<${queue}>`,
      messageLaneOrdered: false,
    });
  });
});

describe('subscriber definitions that cannot work are refused before anything is built', () => {
  const build = (props: WhatsAppWebhookDedupProps) => () =>
    new WhatsAppWebhookDedup(new Stack(new App(), 'Refused'), 'Webhook', props);

  it.each<[string, WhatsAppWebhookDedupProps, RegExp]>([
    [
      'a name with capitals',
      { subscribers: { Bot: { entry: ENTRY } } },
      /Subscriber Bot: the name must be lowercase/,
    ],
    [
      'two subscribers sharing a namespace',
      { subscribers: { bot: { entry: ENTRY }, crm: { entry: ENTRY, keyNamespace: 'bot' } } },
      /Subscribers bot and crm share the key namespace "bot"/,
    ],
    [
      'two unprefixed subscribers',
      { subscribers: { bot: { entry: ENTRY, keyNamespace: '' }, crm: { entry: ENTRY, keyNamespace: '' } } },
      /Subscribers bot and crm share the key namespace ""/,
    ],
    [
      'consumerEntry beside subscribers',
      { consumerEntry: ENTRY, subscribers: { bot: { entry: ENTRY } } },
      /consumerEntry describe the single default consumer: with subscribers, give each subscriber its own entry/,
    ],
    [
      'keyNamespace beside subscribers',
      { keyNamespace: 'crm', subscribers: { bot: { entry: ENTRY } } },
      /keyNamespace describe the single default consumer/,
    ],
    [
      'names that give the same construct id and output keys',
      { subscribers: { 'x-1': { entry: ENTRY }, x1: { entry: ENTRY } } },
      /Subscribers x-1 and x1 would share the construct id and stack output keys X1/,
    ],
    [
      'an entry that does not exist',
      { subscribers: { bot: { entry: 'functions/examples/subscribers/nope.ts' } } },
      /Subscriber bot: entry functions\/examples\/subscribers\/nope\.ts does not exist/,
    ],
    [
      'a pipeline-only setting on one subscriber',
      { subscribers: { bot: { entry: ENTRY, settings: { receiverTimeoutSeconds: 5 } as never } } },
      /Subscriber bot: receiverTimeoutSeconds belong to the whole pipeline/,
    ],
    [
      'an unsafe setting of one subscriber',
      { subscribers: { bot: { entry: ENTRY, settings: { maxReceiveCount: 2 } } } },
      /Subscriber bot: maxReceiveCount is 2: use at least/,
    ],
    [
      'a subscriber DLQ that keeps messages shorter than its queue',
      {
        subscribers: {
          bot: { entry: ENTRY, settings: { queueRetentionDays: 10, deadLetterRetentionDays: 8 } },
        },
      },
      /Subscriber bot: deadLetterRetentionDays \(8\) is shorter than queueRetentionDays \(10\)/,
    ],
    [
      'a namespace longer than 64 characters',
      { subscribers: { bot: { entry: ENTRY, keyNamespace: 'n'.repeat(65) } } },
      /Subscriber bot: keyNamespace "n{65}" must be 1 to 64/,
    ],
    [
      'a status ledger mode the consumer does not know',
      { subscribers: { bot: { entry: ENTRY, statusLedger: 'never' as 'always' } } },
      /Subscriber bot: statusLedger is "never"/,
    ],
    ['no subscriber at all', { subscribers: {} }, /subscribers is empty/],
    [
      'an ordered message lane with a batching window (Lambda has none on FIFO queues)',
      { subscribers: { bot: { entry: ENTRY, messageLane: { settings: { maxBatchingWindowSeconds: 1 } } } } },
      /Subscriber bot: messageLane: maxBatchingWindowSeconds is 1, but an ordered lane is a FIFO queue/,
    ],
    [
      'the pipeline’s ordered message lane with a batching window, without subscribers',
      { messageLane: { settings: { maxBatchingWindowSeconds: 1 } } },
      /messageLane: maxBatchingWindowSeconds is 1, but an ordered lane is a FIFO queue/,
    ],
    [
      'an ordered message lane batch above what Lambda hands out from a FIFO queue',
      { subscribers: { bot: { entry: ENTRY, messageLane: { settings: { batchSize: 20 } } } } },
      /Subscriber bot: messageLane: batchSize is 20/,
    ],
    [
      'a message lane DLQ that keeps messages shorter than its queue',
      { subscribers: { bot: { entry: ENTRY, messageLane: { settings: { deadLetterRetentionDays: 7 } } } } },
      /Subscriber bot: messageLane: deadLetterRetentionDays \(7\) is shorter than queueRetentionDays \(14\)/,
    ],
    [
      'a name whose status lane outputs are another’s message lane outputs',
      { subscribers: { x: { entry: ENTRY }, 'x-message': { entry: ENTRY } } },
      /Subscribers x and x-message would share the stack output key XMessageDeadLetterQueueUrl/,
    ],
  ])('%s', (_case, props, message) => {
    expect(build(props)).toThrow(UnsafeSettingsError);
    expect(build(props)).toThrow(message);
  });
});

function dynamoStatements(template: Template, roleId: string): Statement[] {
  return statementsOfRole(template, roleId).filter((s) =>
    actionsOf(s).some((a) => a.startsWith('dynamodb:')),
  );
}

interface DashboardWidget {
  y?: number;
  width?: number;
  properties?: { title?: string; metrics?: unknown[][] };
}

/** The dashboard body with CloudFormation tokens replaced by a placeholder, parsed back into widgets. */
function dashboardWidgets(t: Template): DashboardWidget[] {
  const dashboards = Object.values(t.findResources('AWS::CloudWatch::Dashboard'));
  expect(dashboards).toHaveLength(1);
  const parts = dashboards[0]?.Properties.DashboardBody['Fn::Join'][1] as unknown[];
  return JSON.parse(parts.map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('')).widgets;
}
