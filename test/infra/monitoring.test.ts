/**
 * The alarms and the dashboard panels (docs/deploy.md, "5. Open the dashboard and the alarms"), on the
 * synthesised template: one fine-grained assertion per alarm (metric, dimensions, statistic, period,
 * threshold, comparison), thresholds from props, every alarm wired to the topic, refused thresholds, and the
 * docs that describe them.
 */
import { readFileSync } from 'node:fs';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { LANE_DIMENSION } from '../../contract/lanes.ts';
import {
  ANSWER_CLASS_DIMENSION,
  ANSWER_CLASSES,
  ConsumerFieldMetric,
  ConsumerLaneMetric,
  ConsumerMetric,
  METRICS_NAMESPACE,
  PHONE_NUMBER_DIMENSION,
  ReceiverMetric,
  SERVICE_DIMENSION,
  SERVICE_NAME,
  SUBSCRIBER_DIMENSION,
} from '../../contract/metric-names.ts';
import { ALARM_DEFAULTS } from '../../lib/defaults.ts';
import { resolveThresholds, type WebhookAlarmThresholds } from '../../lib/monitoring/alarms.ts';
import { ARCHIVE_BACKLOG_AGE_SECONDS } from '../../lib/monitoring/archive-alarms.ts';
import { logicalIdStartingWith, synthStack } from '../support/synth-stack.ts';

const TOPIC_ARN = 'arn:aws:sns:us-east-1:123456789012:ops-alarms';
const SERVICE = { Name: SERVICE_DIMENSION, Value: SERVICE_NAME };
/** The one subscriber of a stack without `subscribers`: every consumer metric carries its name. */
const SUBSCRIBER = { Name: SUBSCRIBER_DIMENSION, Value: 'default' };

/** Construct ids of the default alarms; the opt-in DynamoDbAccountUserErrors comes on top. */
const DEFAULT_ALARMS = [
  'DeadLetterQueueNotEmpty',
  'DeadLetterQueueArrivals',
  'OldestMessageAge',
  'DuplicateRate',
  'ApiServerErrors',
  'SignatureRejections',
  'ConsumerErrors',
  'ConsumerThrottles',
  'ReceiverErrors',
  'ReceiverThrottles',
  'CompletionFailures',
  'HandlerErrorRate',
  'ClaimFailures',
  'ClaimTableThrottledRequests',
  'ClaimTableSystemErrors',
  'QuarantineQueueNotEmpty',
  'QuarantineQueueArrivals',
  'RedeliveriesNotScheduled',
  'MessageDeadLetterQueueNotEmpty',
  'MessageDeadLetterQueueArrivals',
  'MessageConsumerErrors',
  'MessageConsumerThrottles',
  'MessageEventWaitTime',
  'MessageOldestMessageAge',
  // The delivery archive's (lib/monitoring/archive-alarms.ts, in the child `Archive`).
  'ArchiveArchiverErrors',
  'ArchiveArchiveBacklog',
  'ArchiveArchiveDeadLetterQueueNotEmpty',
] as const;

interface AlarmQuery {
  Id: string;
  Expression?: string;
  ReturnData?: boolean;
  MetricStat?: {
    Metric: { Namespace: string; MetricName: string; Dimensions?: unknown[] };
    Period: number;
    Stat: string;
  };
}

function alarmProperties(t: Template, id: string): Record<string, unknown> & { Metrics?: AlarmQuery[] } {
  const logicalId = logicalIdStartingWith(t, 'AWS::CloudWatch::Alarm', `WebhookMonitoring${id}`);
  return t.findResources('AWS::CloudWatch::Alarm')[logicalId]?.Properties;
}

function returnedExpression(queries: AlarmQuery[] | undefined): string {
  const returned = (queries ?? []).filter((query) => query.ReturnData !== false);
  expect(returned).toHaveLength(1);
  return returned[0]?.Expression as string;
}

function fetched(queries: AlarmQuery[] | undefined): Record<string, AlarmQuery['MetricStat']> {
  return Object.fromEntries(
    (queries ?? []).flatMap((query) => (query.MetricStat ? [[query.Id, query.MetricStat]] : [])),
  );
}

/** What CloudWatch bills per alarm: one metric, or each metric a metric-math alarm reads. */
function alarmMetricCount(t: Template): number {
  return Object.values(t.findResources('AWS::CloudWatch::Alarm')).reduce(
    (total, alarm) =>
      total +
      (alarm.Properties.MetricName !== undefined
        ? 1
        : (alarm.Properties.Metrics as AlarmQuery[]).filter((query) => query.MetricStat).length),
    0,
  );
}

describe('default alarms', () => {
  let template: Template;
  let receiverId: string;
  let consumerId: string;
  let dlqId: string;
  let quarantineId: string;
  let tableId: string;
  let messageConsumerId: string;
  let messageDlqId: string;

  beforeAll(() => {
    template = synthStack().template;
    messageConsumerId = logicalIdStartingWith(template, 'AWS::Lambda::Function', 'WebhookMessageConsumer');
    messageDlqId = logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookMessageDeadLetterQueue');
    quarantineId = logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookQuarantineQueue');
    receiverId = logicalIdStartingWith(template, 'AWS::Lambda::Function', 'WebhookReceiver');
    consumerId = logicalIdStartingWith(template, 'AWS::Lambda::Function', 'WebhookConsumer');
    dlqId = logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookDeadLetterQueue');
    tableId = logicalIdStartingWith(template, 'AWS::DynamoDB::GlobalTable', 'WebhookClaimTable');
  });

  it('are the twenty-seven listed, each saying what to do, none breaching on missing data', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', DEFAULT_ALARMS.length);
    for (const id of DEFAULT_ALARMS) {
      const alarm = alarmProperties(template, id);
      expect(alarm.TreatMissingData, id).toBe('notBreaching');
      expect((alarm.AlarmDescription as string).length, id).toBeGreaterThan(80);
    }
  });

  it.each([
    ['ConsumerErrors', 'Errors', 'consumer'],
    ['ConsumerThrottles', 'Throttles', 'consumer'],
    ['ReceiverErrors', 'Errors', 'receiver'],
    ['ReceiverThrottles', 'Throttles', 'receiver'],
    ['MessageConsumerErrors', 'Errors', 'message consumer'],
    ['MessageConsumerThrottles', 'Throttles', 'message consumer'],
  ] as const)(
    '%s: Lambda %s of the %s function, summed over 5 minutes, at the first one',
    (id, metric, fn) => {
      const functionId = {
        consumer: consumerId,
        receiver: receiverId,
        'message consumer': messageConsumerId,
      }[fn];
      expect(alarmProperties(template, id)).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: metric,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId } }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
      });
    },
  );

  it('CompletionFailures: the first possible double effect', () => {
    const alarm = alarmProperties(template, 'CompletionFailures');
    expect(alarm).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
    expect(alarm.Metrics).toEqual([
      expect.objectContaining({
        MetricStat: {
          Metric: {
            Namespace: METRICS_NAMESPACE,
            MetricName: ConsumerMetric.CompletionFailures,
            Dimensions: [SUBSCRIBER, SERVICE],
          },
          Period: 300,
          Stat: 'Sum',
        },
      }),
    ]);
  });

  it('ClaimFailures: failures in 2 consecutive periods, not a single burst', () => {
    const alarm = alarmProperties(template, 'ClaimFailures');
    expect(alarm).toMatchObject({
      Threshold: 1,
      EvaluationPeriods: 2,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(Object.values(fetched(alarm.Metrics))).toEqual([
      {
        Metric: {
          Namespace: METRICS_NAMESPACE,
          MetricName: ConsumerMetric.ClaimFailures,
          Dimensions: [SUBSCRIBER, SERVICE],
        },
        Period: 300,
        Stat: 'Sum',
      },
    ]);
  });

  it('HandlerErrorRate: handler errors over fresh events of messages, statuses and errors, with a volume floor', () => {
    const alarm = alarmProperties(template, 'HandlerErrorRate');
    expect(alarm).toMatchObject({
      Threshold: 5,
      EvaluationPeriods: 2,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    const fresh = 'FILL(fresh_message, 0) + FILL(fresh_status, 0) + FILL(fresh_error, 0)';
    const errors = 'FILL(herr_message, 0) + FILL(herr_status, 0) + FILL(herr_error, 0)';
    expect(returnedExpression(alarm.Metrics)).toBe(`IF((${fresh}) >= 20, 100 * (${errors}) / (${fresh}), 0)`);
    const metrics = fetched(alarm.Metrics);
    expect(Object.keys(metrics)).toHaveLength(6);
    for (const field of ['message', 'status', 'error']) {
      for (const [id, name] of [
        [`fresh_${field}`, ConsumerFieldMetric.EventsFresh],
        [`herr_${field}`, ConsumerFieldMetric.HandlerErrors],
      ] as const) {
        expect(metrics[id]).toEqual({
          Metric: {
            Namespace: METRICS_NAMESPACE,
            MetricName: name,
            Dimensions: [{ Name: 'Field', Value: field }, SUBSCRIBER, SERVICE],
          },
          Period: 300,
          Stat: 'Sum',
        });
      }
    }
  });

  it.each([
    ['ClaimTableThrottledRequests', 'ThrottledRequests', 'throttled', 10],
    ['ClaimTableSystemErrors', 'SystemErrors', 'system', 5],
  ] as const)(
    '%s: %s of the three claim-table writes, each filled with 0 so one operation suffices',
    (id, metric, prefix, threshold) => {
      const alarm = alarmProperties(template, id);
      expect(alarm).toMatchObject({
        Threshold: threshold,
        EvaluationPeriods: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      const operations = ['PutItem', 'UpdateItem', 'DeleteItem'];
      expect(returnedExpression(alarm.Metrics)).toBe(
        operations.map((operation) => `FILL(${prefix}_${operation.toLowerCase()}, 0)`).join(' + '),
      );
      const metrics = fetched(alarm.Metrics);
      expect(Object.keys(metrics)).toHaveLength(3);
      for (const operation of operations) {
        expect(metrics[`${prefix}_${operation.toLowerCase()}`]).toEqual({
          Metric: {
            Namespace: 'AWS/DynamoDB',
            MetricName: metric,
            Dimensions: [
              { Name: 'Operation', Value: operation },
              { Name: 'TableName', Value: { Ref: tableId } },
            ],
          },
          Period: 300,
          Stat: 'Sum',
        });
      }
    },
  );

  it('DeadLetterQueueArrivals: growth of the DLQ depth within a minute, so each arrival is a new OK → ALARM', () => {
    const alarm = alarmProperties(template, 'DeadLetterQueueArrivals');
    expect(alarm).toMatchObject({
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(returnedExpression(alarm.Metrics)).toBe('DIFF(visible)');
    // Depth, not NumberOfMessagesSent: messages the redrive policy moves into the DLQ are not counted as sent.
    expect(fetched(alarm.Metrics)).toEqual({
      visible: {
        Metric: {
          Namespace: 'AWS/SQS',
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
        },
        Period: 60,
        Stat: 'Maximum',
      },
    });
    expect(JSON.stringify(template.findResources('AWS::CloudWatch::Alarm'))).not.toContain(
      'NumberOfMessagesSent',
    );
  });

  it('MessageEventWaitTime: p99 of the message lane’s wait before the handler above 5 s in 3 of 3 minutes', () => {
    const alarm = alarmProperties(template, 'MessageEventWaitTime');
    expect(fetched(alarm.Metrics)).toEqual({
      m1: {
        Metric: {
          Namespace: METRICS_NAMESPACE,
          MetricName: ConsumerLaneMetric.EventWaitTime,
          Dimensions: [{ Name: LANE_DIMENSION, Value: 'message' }, SUBSCRIBER, SERVICE],
        },
        Period: 60,
        Stat: 'p99',
      },
    });
    expect(alarm).toMatchObject({
      Threshold: ALARM_DEFAULTS.messageEventWaitTimeP99Ms,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
    });
    expect(ALARM_DEFAULTS.messageEventWaitTimeP99Ms).toBe(5000);
  });

  it('MessageOldestMessageAge: the message lane queue’s oldest message, a minute for 3 minutes', () => {
    const alarm = alarmProperties(template, 'MessageOldestMessageAge');
    expect(alarm).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Namespace: 'AWS/SQS',
      Statistic: 'Maximum',
      Period: 60,
      Threshold: ALARM_DEFAULTS.messageOldestMessageAgeSeconds,
      EvaluationPeriods: ALARM_DEFAULTS.messageOldestMessageAgeEvaluationPeriods,
      TreatMissingData: 'notBreaching',
    });
    const queue = (alarm.Dimensions as { Name: string; Value: unknown }[]).find(
      ({ Name }) => Name === 'QueueName',
    );
    expect(JSON.stringify(queue?.Value)).toContain('MessageQueue');
  });

  it('RedeliveriesNotScheduled: the first failed record that could not get its backoff, over 5 minutes', () => {
    const alarm = alarmProperties(template, 'RedeliveriesNotScheduled');
    expect(alarm).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
    expect(alarm.Metrics).toEqual([
      expect.objectContaining({
        MetricStat: {
          Metric: {
            Namespace: METRICS_NAMESPACE,
            MetricName: ConsumerMetric.RedeliveriesNotScheduled,
            Dimensions: [SUBSCRIBER, SERVICE],
          },
          Period: 300,
          Stat: 'Sum',
        },
      }),
    ]);
  });

  it('MessageDeadLetterQueueNotEmpty and MessageDeadLetterQueueArrivals: the message lane DLQ’s depth and growth, with the DLQ thresholds', () => {
    expect(alarmProperties(template, 'MessageDeadLetterQueueNotEmpty')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [messageDlqId, 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    const arrivals = alarmProperties(template, 'MessageDeadLetterQueueArrivals');
    expect(arrivals).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(returnedExpression(arrivals.Metrics)).toBe('DIFF(visible)');
    expect(fetched(arrivals.Metrics).visible?.Metric.Dimensions).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': [messageDlqId, 'QueueName'] } },
    ]);
    // The status lane's DLQ alarms watch its own DLQ only.
    expect(JSON.stringify(alarmProperties(template, 'DeadLetterQueueNotEmpty'))).not.toContain(messageDlqId);
  });

  it('QuarantineQueueNotEmpty and QuarantineQueueArrivals: the quarantine queue’s depth and its growth, with the DLQ thresholds', () => {
    expect(alarmProperties(template, 'QuarantineQueueNotEmpty')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [quarantineId, 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    const arrivals = alarmProperties(template, 'QuarantineQueueArrivals');
    expect(arrivals).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(returnedExpression(arrivals.Metrics)).toBe('DIFF(visible)');
    expect(fetched(arrivals.Metrics).visible?.Metric.Dimensions).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': [quarantineId, 'QueueName'] } },
    ]);
    // The subscriber's DLQ alarms watch its DLQ only: quarantined bodies no longer go there.
    expect(JSON.stringify(alarmProperties(template, 'DeadLetterQueueNotEmpty'))).not.toContain(quarantineId);
  });

  it('never alarm on failed conditions (duplicates), and leave the account-wide UserErrors out by default', () => {
    const alarms = JSON.stringify(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).not.toContain('ConditionalCheckFailedRequests');
    expect(alarms).not.toContain('"UserErrors"');
  });
});

type Widget = {
  properties?: {
    title?: string;
    metrics?: unknown[][];
    annotations?: { horizontal?: { value: number; label: string }[] };
  };
};

function dashboardWidgets(template: Template): Widget[] {
  const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
  const parts = dashboards[0]?.Properties.DashboardBody['Fn::Join'][1] as unknown[];
  return JSON.parse(parts.map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('')).widgets;
}

const ARCHIVE_TITLES = [
  'Archive: archiver errors and throttles; archiver duration p50 / p99',
  'Archive queue: oldest message (s); visible messages, archive DLQ',
];

describe('dashboard', () => {
  let widgets: Widget[];

  beforeAll(() => {
    widgets = dashboardWidgets(synthStack().template);
  });

  const rowsOf = (title: string): unknown[][] => {
    const widget = widgets.find((candidate) => candidate.properties?.title === title);
    expect(widget, title).toBeDefined();
    return widget?.properties?.metrics ?? [];
  };

  it('shows receiver and consumer quarantines as labelled lines, never one sum, beside the quarantine queue depth', () => {
    const rows = rowsOf('Quarantined bodies: receiver and each subscriber apart, quarantine queue depth');
    expect(rows).toHaveLength(3);
    expect(rows).toContainEqual([
      METRICS_NAMESPACE,
      ReceiverMetric.DeliveriesQuarantined,
      SERVICE_DIMENSION,
      SERVICE_NAME,
      expect.objectContaining({ label: 'Receiver: deliveries quarantined' }),
    ]);
    expect(rows).toContainEqual([
      METRICS_NAMESPACE,
      ConsumerMetric.Quarantined,
      SUBSCRIBER_DIMENSION,
      'default',
      SERVICE_DIMENSION,
      SERVICE_NAME,
      expect.objectContaining({ label: 'default: records quarantined' }),
    ]);
    expect(rows).toContainEqual([
      'AWS/SQS',
      'ApproximateNumberOfMessagesVisible',
      'QueueName',
      'TOKEN',
      expect.objectContaining({ label: 'Quarantine queue visible' }),
    ]);
  });

  it("counts the repeats the message lane's FIFO queue absorbed beside the claims' duplicates, and in the message duplicate %", () => {
    const rows = rowsOf(
      "default: fresh, duplicate and filtered-out events per field, and repeats the message lane's queue absorbed; duplicate %",
    );
    expect(rows).toContainEqual([
      'AWS/SQS',
      'NumberOfDeduplicatedSentMessages',
      'QueueName',
      'TOKEN',
      expect.objectContaining({ label: 'message: absorbed by the FIFO queue', id: 'absorbed_message' }),
    ]);
    const messageRate = rows.find((row) =>
      row.some((part) => (part as { label?: string })?.label === 'message duplicate % (claims and queue)'),
    );
    expect(JSON.stringify(messageRate)).toContain(
      '100 * (FILL(dup_message, 0) + FILL(absorbed_message, 0)) / (FILL(fresh_message, 0) + (FILL(dup_message, 0) + FILL(absorbed_message, 0)))',
    );
    const statusRate = rows.find((row) =>
      row.some((part) => (part as { label?: string })?.label === 'status duplicate %'),
    );
    expect(JSON.stringify(statusRate)).not.toContain('absorbed');
  });

  it('shows claim failures and malformed parts', () => {
    const names = (title: string) => rowsOf(title).map((row) => row[1]);
    expect(
      names(
        'default: handler errors, deferred retries, releases, claim and completion failures; handler error %',
      ),
    ).toContain(ConsumerMetric.ClaimFailures);
    expect(names('Unknown fields, malformed parts, merged status regressions, every subscriber')).toContain(
      ConsumerMetric.MalformedParts,
    );
  });

  it('shows the claim table’s throttled writes, system errors and the account-wide user errors', () => {
    const labels = rowsOf('Claim table: throttled writes, system errors, account-wide user errors').map(
      (row) => (row.at(-1) as { label?: string }).label,
    );
    expect(labels).toEqual(
      expect.arrayContaining([
        'Claim table: throttled writes',
        'Claim table: system errors (500)',
        'DynamoDB user errors (400), whole account and Region',
      ]),
    );
  });

  it('shows the archive’s row: the metrics of its three alarms, the backlog alarm’s threshold drawn', () => {
    const [archiver, queue] = ARCHIVE_TITLES.map((title) => rowsOf(title));
    const labels = (rows: unknown[][] | undefined) =>
      (rows ?? []).map((row) => (row.at(-1) as { label?: string }).label);
    expect(archiver?.map((row) => row.slice(0, 2))).toEqual(
      expect.arrayContaining([
        ['AWS/Lambda', 'Errors'],
        ['AWS/Lambda', 'Throttles'],
        ['AWS/Lambda', 'Duration'],
      ]),
    );
    expect(labels(queue)).toEqual([
      'Oldest archive message (s)',
      'Archive queue visible',
      'Archive DLQ visible',
    ]);
    expect(queue?.[0]?.slice(0, 2)).toEqual(['AWS/SQS', 'ApproximateAgeOfOldestMessage']);
    const backlog = widgets.find((widget) => widget.properties?.title === ARCHIVE_TITLES[1]);
    expect(backlog?.properties?.annotations?.horizontal).toEqual([
      expect.objectContaining({ value: ARCHIVE_BACKLOG_AGE_SECONDS, label: 'ArchiveBacklog alarm' }),
    ]);
  });

  it('gives each declared number of a subscriber its row (counts, and waits per lane), and undeclared numbers none', () => {
    const numbered = dashboardWidgets(
      synthStack({
        pipeline: {
          subscribers: {
            latam: { entry: 'functions/examples/subscribers/bot.ts', numbers: ['201', '202'] },
            crm: { entry: 'functions/examples/subscribers/crm.ts', wabas: ['100'] },
          },
        },
      }).template,
    );
    const titled = (title: string) => numbered.find((widget) => widget.properties?.title === title);
    const numberTitles = numbered
      .map((widget) => widget.properties?.title ?? '')
      .filter((title) => title.includes(' number '));
    expect(numberTitles).toEqual([
      'latam number 201: fresh, duplicate and failed events',
      'latam number 201: wait before the handler p50 / p99, per lane',
      'latam number 202: fresh, duplicate and failed events',
      'latam number 202: wait before the handler p50 / p99, per lane',
    ]);
    expect(titled('latam number 202: fresh, duplicate and failed events')?.properties?.metrics).toEqual(
      ['EventsFresh', 'EventsDuplicate', 'HandlerErrors'].map((name) => [
        METRICS_NAMESPACE,
        name,
        PHONE_NUMBER_DIMENSION,
        '202',
        SUBSCRIBER_DIMENSION,
        'latam',
        SERVICE_DIMENSION,
        SERVICE_NAME,
        expect.objectContaining({ label: name }),
      ]),
    );
    const waits = titled('latam number 201: wait before the handler p50 / p99, per lane')?.properties
      ?.metrics;
    expect(waits?.map((row) => [row[3], row[5], (row.at(-1) as { stat: string }).stat])).toEqual([
      ['message', '201', 'p50'],
      ['message', '201', 'p99'],
      ['status', '201', 'p50'],
      ['status', '201', 'p99'],
    ]);
  });

  it("gives a forward subscriber a row of its destination's answers by class, and a subscriber of code none", () => {
    const widgets = dashboardWidgets(
      synthStack({
        pipeline: {
          subscribers: {
            bot: { entry: 'functions/examples/subscribers/bot.ts' },
            chatwoot: { forward: { url: 'https://chat.example.com/webhooks/whatsapp' } },
          },
        },
      }).template,
    );
    const answers = widgets.filter((widget) => widget.properties?.title?.includes('answers by class'));
    expect(answers.map((widget) => widget.properties?.title?.split(':')[0])).toEqual([
      'chatwoot destination',
    ]);
    expect(answers[0]?.properties?.metrics?.map((row) => [row[1], row[2], row[3]])).toEqual(
      ANSWER_CLASSES.map((answerClass) => ['ForwardAnswers', ANSWER_CLASS_DIMENSION, answerClass]),
    );
  });

  it('has no archive row with archive: false', () => {
    const titles = dashboardWidgets(synthStack({ pipeline: { archive: false } }).template).map(
      (widget) => widget.properties?.title,
    );
    expect(titles).toContain('Receiver errors and throttles');
    for (const title of ARCHIVE_TITLES) expect(titles).not.toContain(title);
  });
});

describe('thresholds from props', () => {
  let template: Template;

  beforeAll(() => {
    template = synthStack({
      alarmTopicArn: TOPIC_ARN,
      pipeline: {
        alarmThresholds: {
          deadLetterQueueArrivals: 2,
          consumerErrors: 3,
          consumerThrottles: 4,
          receiverErrors: 5,
          receiverThrottles: 6,
          completionFailures: 7,
          handlerErrorRatePercent: 15,
          handlerErrorRateEvaluationPeriods: 4,
          handlerErrorRateMinimumEvents: 100,
          handlerErrorRateFields: ['message', 'calls'],
          claimFailures: 8,
          claimFailuresEvaluationPeriods: 3,
          claimTableThrottledRequests: 50,
          claimTableSystemErrors: 9,
          dynamoDbAccountUserErrors: 11,
          messageEventWaitTimeP99Ms: 2500,
          messageEventWaitTimeEvaluationPeriods: 5,
          redeliveriesNotScheduled: 12,
        },
      },
    }).template;
  });

  it('notify the topic on alarm and on recovery, the opt-in UserErrors alarm included', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(DEFAULT_ALARMS.length + 1);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([TOPIC_ARN]);
      expect(alarm.Properties.OKActions).toEqual([TOPIC_ARN]);
    }
  });

  it('reach each alarm', () => {
    const thresholds: Array<[string, number, number?]> = [
      ['DeadLetterQueueArrivals', 2],
      ['ConsumerErrors', 3],
      ['ConsumerThrottles', 4],
      ['ReceiverErrors', 5],
      ['ReceiverThrottles', 6],
      ['CompletionFailures', 7],
      ['HandlerErrorRate', 15, 4],
      ['ClaimFailures', 8, 3],
      ['ClaimTableThrottledRequests', 50],
      ['ClaimTableSystemErrors', 9],
      ['DynamoDbAccountUserErrors', 11],
      ['RedeliveriesNotScheduled', 12],
      ['MessageEventWaitTime', 2500, 5],
      // The message lane's DLQ and consumer alarms share the status lane's thresholds.
      ['MessageDeadLetterQueueArrivals', 2],
      ['MessageConsumerErrors', 3],
      ['MessageConsumerThrottles', 4],
    ];
    for (const [id, threshold, evaluationPeriods = 1] of thresholds) {
      expect(alarmProperties(template, id), id).toMatchObject({
        Threshold: threshold,
        EvaluationPeriods: evaluationPeriods,
      });
    }
    expect(alarmProperties(template, 'MessageEventWaitTime').DatapointsToAlarm).toBe(5);
    const rate = alarmProperties(template, 'HandlerErrorRate');
    expect(returnedExpression(rate.Metrics)).toMatch(
      /^IF\(\(FILL\(fresh_message, 0\) \+ FILL\(fresh_calls, 0\)\) >= 100, /,
    );
    expect(Object.keys(fetched(rate.Metrics)).sort()).toEqual([
      'fresh_calls',
      'fresh_message',
      'herr_calls',
      'herr_message',
    ]);
  });

  it('UserErrors is alarmed on as CloudWatch publishes it: account-wide, without a table dimension', () => {
    const alarm = alarmProperties(template, 'DynamoDbAccountUserErrors');
    expect(alarm).toMatchObject({ Threshold: 11, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(Object.values(fetched(alarm.Metrics))).toEqual([
      { Metric: { Namespace: 'AWS/DynamoDB', MetricName: 'UserErrors' }, Period: 300, Stat: 'Sum' },
    ]);
  });
});

describe('unusable thresholds are refused', () => {
  it.each<[string, WebhookAlarmThresholds, RegExp]>([
    [
      'a handler error rate of 0 %',
      { handlerErrorRatePercent: 0 },
      /handlerErrorRatePercent must be between 0 and 100/,
    ],
    [
      'a handler error rate over more fields than an alarm can hold',
      { handlerErrorRateFields: ['a', 'b', 'c', 'd', 'e', 'f'] },
      /handlerErrorRateFields must name 1 to 5 fields/,
    ],
    ['an always-on Lambda errors alarm', { consumerErrors: 0 }, /consumerErrors must be at least 1/],
    [
      'an always-on DLQ arrivals alarm',
      { deadLetterQueueArrivals: 0.5 },
      /deadLetterQueueArrivals must be at least 1/,
    ],
    [
      'a NaN throttling threshold',
      { claimTableThrottledRequests: Number.NaN },
      /claimTableThrottledRequests must be at least 1/,
    ],
    [
      'an always-on UserErrors alarm',
      { dynamoDbAccountUserErrors: 0 },
      /dynamoDbAccountUserErrors must be at least 1/,
    ],
    [
      'zero evaluation periods',
      { claimFailuresEvaluationPeriods: 0 },
      /claimFailuresEvaluationPeriods must be a whole number/,
    ],
    [
      'a fractional evaluation period',
      { handlerErrorRateEvaluationPeriods: 1.5 },
      /handlerErrorRateEvaluationPeriods must be a whole number/,
    ],
    [
      'a message wait threshold of 0 ms',
      { messageEventWaitTimeP99Ms: 0 },
      /messageEventWaitTimeP99Ms must be a number of milliseconds above 0/,
    ],
    [
      'zero message wait periods',
      { messageEventWaitTimeEvaluationPeriods: 0 },
      /messageEventWaitTimeEvaluationPeriods must be a whole number/,
    ],
    [
      'an always-on RedeliveriesNotScheduled alarm',
      { redeliveriesNotScheduled: 0 },
      /redeliveriesNotScheduled must be at least 1/,
    ],
    [
      'a negative volume floor',
      { handlerErrorRateMinimumEvents: -1 },
      /handlerErrorRateMinimumEvents must be a number >= 0/,
    ],
  ])('%s', (_case, thresholds, message) => {
    expect(() => resolveThresholds(thresholds)).toThrow(message);
  });

  it('fills every default from ALARM_DEFAULTS and leaves UserErrors off', () => {
    expect(resolveThresholds()).toEqual({ ...ALARM_DEFAULTS, dynamoDbAccountUserErrors: undefined });
  });
});

describe('docs', () => {
  const deploy = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
  const d = ALARM_DEFAULTS;
  const minutes = d.period.toMinutes();
  /** The numbers in brackets of each alarm's row, in order: the defaults the row quotes. */
  const quotedDefaults: Record<string, number[]> = {
    DeadLetterQueueNotEmpty: [d.deadLetterQueueMessages],
    DeadLetterQueueArrivals: [d.deadLetterQueueArrivals],
    OldestMessageAge: [d.oldestMessageAgeSeconds, d.oldestMessageAgeEvaluationPeriods],
    DuplicateRate: [
      d.duplicateRatePercent,
      d.duplicateRateEvaluationPeriods,
      minutes,
      d.duplicateRateMinimumEvents,
    ],
    ApiServerErrors: [d.apiServerErrors, minutes],
    SignatureRejections: [d.signatureRejections, minutes],
    ConsumerErrors: [d.consumerErrors, minutes],
    ConsumerThrottles: [d.consumerThrottles, minutes],
    ReceiverErrors: [d.receiverErrors, minutes],
    ReceiverThrottles: [d.receiverThrottles, minutes],
    CompletionFailures: [d.completionFailures, minutes],
    HandlerErrorRate: [
      d.handlerErrorRatePercent,
      d.handlerErrorRateEvaluationPeriods,
      minutes,
      d.handlerErrorRateMinimumEvents,
    ],
    ClaimFailures: [d.claimFailures, d.claimFailuresEvaluationPeriods, minutes],
    ClaimTableThrottledRequests: [d.claimTableThrottledRequests, minutes],
    ClaimTableSystemErrors: [d.claimTableSystemErrors, minutes],
    QuarantineQueueNotEmpty: [d.deadLetterQueueMessages],
    QuarantineQueueArrivals: [d.deadLetterQueueArrivals],
    DynamoDbAccountUserErrors: [],
    RedeliveriesNotScheduled: [d.redeliveriesNotScheduled, minutes],
    MessageDeadLetterQueueNotEmpty: [d.deadLetterQueueMessages],
    MessageDeadLetterQueueArrivals: [d.deadLetterQueueArrivals],
    MessageConsumerErrors: [d.consumerErrors, minutes],
    MessageConsumerThrottles: [d.consumerThrottles, minutes],
    MessageEventWaitTime: [
      d.messageEventWaitTimeP99Ms,
      d.messageEventWaitTimeEvaluationPeriods,
      d.messageEventWaitTimeEvaluationPeriods,
    ],
    MessageOldestMessageAge: [d.messageOldestMessageAgeSeconds, d.messageOldestMessageAgeEvaluationPeriods],
  };

  it('docs/deploy.md has one row per alarm, quoting its defaults from ALARM_DEFAULTS', () => {
    const rows = deploy.split('\n').filter((line) => /^\| [A-Z][A-Za-z]+ +\|/.test(line));
    const byAlarm = new Map(rows.map((row) => [row.split('|')[1]?.trim() ?? '', row]));
    expect([...byAlarm.keys()].filter((name) => name in quotedDefaults).sort()).toEqual(
      Object.keys(quotedDefaults).sort(),
    );
    for (const [alarm, expected] of Object.entries(quotedDefaults)) {
      const row = byAlarm.get(alarm) ?? '';
      const quoted = [...row.matchAll(/\[[^\]]*?(\d+(?:\.\d+)?)[^\]]*\]/g)].map((match) => Number(match[1]));
      expect(quoted, alarm).toEqual(expected);
    }
  });

  it('docs/cost.md prices the alarm metrics the default stack synthesises', () => {
    const count = alarmMetricCount(synthStack().template);
    const cost = readFileSync(new URL('../../docs/cost.md', import.meta.url), 'utf8');
    const row = cost.split('\n').find((line) => line.startsWith('| Alarms:')) ?? '';
    expect(row).toContain(`= ${count} alarm metrics`);
    expect(row).toContain(`$${(count * 0.1).toFixed(2)}`);
  });
});
