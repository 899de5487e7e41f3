/** The delivery archive's resources (docs/design.md, "Archive"), read from the synthesised template. */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ARCHIVE_RETENTION_DAYS } from '../../contract/archive.ts';
import { ENV } from '../../contract/environment.ts';
import { STACK_OUTPUT } from '../../contract/stack-outputs.ts';
import { ARCHIVE_BACKLOG_AGE_SECONDS } from '../../lib/monitoring/archive-alarms.ts';
import {
  actionsOf,
  logicalIdStartingWith,
  SYNTH_TIMEOUT_MS,
  statementsOfRole,
  synthStack,
} from '../support/synth-stack.ts';

let template: Template;
let bucketId: string;
let queueId: string;
let dlqId: string;

beforeAll(() => {
  template = synthStack().template;
  bucketId = logicalIdStartingWith(template, 'AWS::S3::Bucket', 'WebhookArchiveBucket');
  queueId = logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookArchiveQueue');
  dlqId = logicalIdStartingWith(template, 'AWS::SQS::Queue', 'WebhookArchiveDeadLetterQueue');
}, SYNTH_TIMEOUT_MS);

describe('the archive bucket', () => {
  it('is encrypted, private, unversioned, and expires deliveries after the default retention', () => {
    const bucket = template.findResources('AWS::S3::Bucket')[bucketId]?.Properties;
    expect(bucket.BucketEncryption.ServerSideEncryptionConfiguration).toEqual([
      { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
    ]);
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.VersioningConfiguration).toBeUndefined();
    expect(bucket.LifecycleConfiguration.Rules).toEqual([
      {
        Id: 'ExpireDeliveries',
        Prefix: 'deliveries/',
        ExpirationInDays: DEFAULT_ARCHIVE_RETENTION_DAYS,
        Status: 'Enabled',
      },
      { Id: 'ExpireStagedChunks', Prefix: 'staging/', ExpirationInDays: 1, Status: 'Enabled' },
    ]);
  });

  it('refuses any request without TLS', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Principal: { AWS: '*' },
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it(
    'takes its retention from the prop, and is not built with archive: false',
    () => {
      const kept = synthStack({ pipeline: { archive: { retentionDays: 90 } } }).template;
      const [bucket] = Object.values(kept.findResources('AWS::S3::Bucket'));
      expect(bucket?.Properties.LifecycleConfiguration.Rules[0].ExpirationInDays).toBe(90);
      expect(() => synthStack({ pipeline: { archive: { retentionDays: 0 } } })).toThrow(/retentionDays/);

      const off = synthStack({ pipeline: { archive: false } }).template;
      expect(Object.keys(off.findResources('AWS::S3::Bucket'))).toEqual([]);
      expect(
        Object.keys(off.findResources('AWS::SQS::Queue')).filter((id) => id.includes('Archive')),
      ).toEqual([]);
      expect(off.findOutputs(STACK_OUTPUT.archiveBucketName)).toEqual({});
      const receiver = Object.values(off.findResources('AWS::Lambda::Function')).find((fn) =>
        String(fn.Properties.Description).startsWith('WhatsApp webhook receiver'),
      );
      expect(receiver?.Properties.Environment.Variables[ENV.archiveQueueUrl]).toBeUndefined();
    },
    SYNTH_TIMEOUT_MS,
  );

  it('is a stack output, for ops to find', () => {
    expect(
      template.findOutputs(STACK_OUTPUT.archiveBucketName)[STACK_OUTPUT.archiveBucketName]?.Value,
    ).toEqual({
      Ref: bucketId,
    });
  });
});

describe('the archive queue and the archiver', () => {
  it('keeps archive messages 14 days, encrypted, with a DLQ after five receives', () => {
    const queue = template.findResources('AWS::SQS::Queue')[queueId]?.Properties;
    expect(queue.MessageRetentionPeriod).toBe(14 * 86_400);
    expect(queue.SqsManagedSseEnabled).toBe(true);
    expect(queue.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
      maxReceiveCount: 5,
    });
    expect(queue.VisibilityTimeout).toBe(6 * 60 + 60);
  });

  it('runs the archiver on batches of up to 10,000 gathered for 60 s, reporting failed items', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      BatchSize: 10_000,
      MaximumBatchingWindowInSeconds: 60,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('archiver'),
      Environment: { Variables: Match.objectLike({ [ENV.archiveBucketName]: { Ref: bucketId } }) },
    });
  });

  it('updates the receiver after the archiver, so that no receiver sends a copy an old archiver misreads', () => {
    const archiverId = logicalIdStartingWith(template, 'AWS::Lambda::Function', 'WebhookArchiveArchiver');
    const receiverId = logicalIdStartingWith(template, 'AWS::Lambda::Function', 'WebhookReceiver');
    const receiver = template.findResources('AWS::Lambda::Function')[receiverId];
    expect(receiver?.DependsOn).toEqual(expect.arrayContaining([archiverId]));
  });

  it('lets the archiver write under the two prefixes and read only its staged chunks, nothing else of S3', () => {
    const statements = statementsOfRole(template, 'WebhookArchiveArchiverRole').filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('s3:')),
    );
    expect(
      statements.map((statement) => ({
        actions: actionsOf(statement),
        resource: JSON.stringify(statement.Resource),
      })),
    ).toEqual([
      { actions: ['s3:PutObject'], resource: expect.stringMatching(/deliveries\/\*.*staging\/\*/) },
      { actions: ['s3:GetObject'], resource: expect.stringMatching(/staging\/\*/) },
      { actions: ['s3:ListBucket'], resource: JSON.stringify({ 'Fn::GetAtt': [bucketId, 'Arn'] }) },
    ]);
  });

  it('lets the receiver send to the archive queue and gives it the queue URL; no S3 for the receiver', () => {
    const receiver = statementsOfRole(template, 'WebhookReceiverRole');
    const send = receiver.find((statement) => statement.Sid === 'EnqueueDeliveriesAndQuarantine');
    expect(JSON.stringify(send?.Resource)).toContain(queueId);
    expect(receiver.flatMap(actionsOf).filter((action) => action.startsWith('s3:'))).toEqual([]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('receiver'),
      Environment: { Variables: Match.objectLike({ [ENV.archiveQueueUrl]: { Ref: queueId } }) },
    });
  });

  it('alarms on archiver errors, an old backlog and a non-empty archive DLQ', () => {
    const alarms = template.findResources('AWS::CloudWatch::Alarm');
    const archive = Object.entries(alarms).filter(([id]) => id.startsWith('WebhookMonitoringArchive'));
    const byName = Object.fromEntries(
      archive.map(([id, alarm]) => [
        id.replace(/^WebhookMonitoringArchive/, '').replace(/[0-9A-F]{8}$/, ''),
        alarm.Properties,
      ]),
    );
    expect(Object.keys(byName).sort()).toEqual([
      'ArchiveBacklog',
      'ArchiveDeadLetterQueueNotEmpty',
      'ArchiverErrors',
    ]);
    expect(byName.ArchiveBacklog.MetricName).toBe('ApproximateAgeOfOldestMessage');
    expect(byName.ArchiveBacklog.Threshold).toBe(ARCHIVE_BACKLOG_AGE_SECONDS);
    expect(byName.ArchiveDeadLetterQueueNotEmpty.Dimensions).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } },
    ]);
    expect(byName.ArchiverErrors.MetricName).toBe('Errors');
  });
});
