/**
 * The ops CLI's AWS-only calls, against aws-sdk-client-mock: stack outputs and consumer environments
 * (--stack), event source mapping updates (pause, resume) and SQS message move tasks (dlq redrive).
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  GetEventSourceMappingCommand,
  GetFunctionConfigurationCommand,
  LambdaClient,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { consumerEnvironment } from '../../../contract/environment.ts';
import { STACK_OUTPUT, subscriberOutputKeys } from '../../../contract/stack-outputs.ts';
import { OpsError } from '../../../ops/errors.ts';
import { runOps } from '../../../ops/run-ops.ts';
import { resolveStackTarget, type StackClients } from '../../../ops/target/stack-target.ts';

const cloudFormation = mockClient(CloudFormationClient);
const lambda = mockClient(LambdaClient);
const sqs = mockClient(SQSClient);

const REGION = 'eu-west-1';
const QUEUES = `https://sqs.${REGION}.amazonaws.com/123456789012`;
const queueUrl = (name: string) => `${QUEUES}/${name}`;
const queueArn = (url: string) => `arn:aws:sqs:${REGION}:123456789012:${url.split('/').pop()}`;

function clients(): StackClients {
  const config = { region: REGION, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };
  return {
    cloudFormation: new CloudFormationClient(config),
    lambda: new LambdaClient(config),
    sqs: new SQSClient(config),
    dynamodb: new DynamoDBClient(config),
  };
}

/** The outputs the stack writes for `bot` and `crm`, and each consumer's environment as the construct sets it. */
function deployedStack(): void {
  const outputs: Record<string, string> = {
    [STACK_OUTPUT.subscriberNames]: 'bot,crm',
    [STACK_OUTPUT.claimTableName]: 'prod-claims',
    [STACK_OUTPUT.quarantineQueueUrl]: queueUrl('quarantine'),
  };
  for (const name of ['bot', 'crm']) {
    const keys = subscriberOutputKeys(name);
    outputs[keys.deliveryQueueUrl] = queueUrl(`${name}-deliveries`);
    outputs[keys.deadLetterQueueUrl] = queueUrl(`${name}-dlq`);
    outputs[keys.consumerFunctionName] = `prod-${name}-consumer`;
    outputs[keys.eventSourceMappingId] = `esm-${name}`;
  }
  cloudFormation.on(DescribeStacksCommand, { StackName: 'prod' }).resolves({
    Stacks: [
      {
        StackName: 'prod',
        CreationTime: new Date(0),
        StackStatus: 'UPDATE_COMPLETE',
        Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
      },
    ],
  });
  const environment = (name: string, extra: { keyNamespace?: string; fields?: string[] }) =>
    consumerEnvironment({
      tableName: 'prod-claims',
      subscriberName: name,
      quarantineQueueUrl: queueUrl('quarantine'),
      deliveryQueueUrl: queueUrl(`${name}-deliveries`),
      retentionDays: 8,
      leaseMarginMs: 10_000,
      maximumMessageSizeBytes: 1_048_576,
      ...extra,
    });
  lambda
    .on(GetFunctionConfigurationCommand, { FunctionName: 'prod-bot-consumer' })
    .resolves({
      Environment: { Variables: environment('bot', { keyNamespace: 'bot', fields: ['messages'] }) },
    })
    .on(GetFunctionConfigurationCommand, { FunctionName: 'prod-crm-consumer' })
    .resolves({ Environment: { Variables: environment('crm', { keyNamespace: 'crm-v2' }) } });
  sqs.on(GetQueueAttributesCommand).callsFake((input: { QueueUrl: string; AttributeNames?: string[] }) => ({
    Attributes: input.AttributeNames?.includes('QueueArn')
      ? { QueueArn: queueArn(input.QueueUrl) }
      : {
          ApproximateNumberOfMessages: '7',
          ApproximateNumberOfMessagesNotVisible: '2',
          ApproximateNumberOfMessagesDelayed: '0',
        },
  }));
}

async function ops(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runOps(
    ['--stack', 'prod', ...args],
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    },
    { resolveTarget: () => resolveStackTarget('prod', clients()), sleep: async () => undefined },
  );
  return { code, stdout, stderr };
}

beforeEach(deployedStack);
afterEach(() => {
  cloudFormation.reset();
  lambda.reset();
  sqs.reset();
});

describe('--stack NAME: the target from CloudFormation outputs and the consumers’ environment', () => {
  it('finds each subscriber’s queues, key namespace and fields, the table and the quarantine queue', async () => {
    const target = await resolveStackTarget('prod', clients());

    expect(target).toMatchObject({
      description: `stack prod (${REGION})`,
      tableName: 'prod-claims',
      quarantineQueueUrl: queueUrl('quarantine'),
      maximumMessageSizeBytes: 1_048_576,
      subscribers: [
        {
          name: 'bot',
          fields: ['messages'],
          keyNamespace: 'bot',
          deliveryQueueUrl: queueUrl('bot-deliveries'),
          deadLetterQueueUrl: queueUrl('bot-dlq'),
        },
        {
          name: 'crm',
          fields: undefined,
          keyNamespace: 'crm-v2',
          deliveryQueueUrl: queueUrl('crm-deliveries'),
          deadLetterQueueUrl: queueUrl('crm-dlq'),
        },
      ],
    });
    expect(target.messageMoveTasks).toBeDefined();
    target.close();
  });

  it('says which output is missing (a stack deployed before the outputs existed)', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [{ StackName: 'prod', CreationTime: new Date(0), StackStatus: 'CREATE_COMPLETE', Outputs: [] }],
    });

    await expect(resolveStackTarget('prod', clients())).rejects.toThrow(
      new OpsError(
        'stack prod has no output SubscriberNames: deploy this version of the construct (it writes the outputs ops reads)',
      ),
    );
  });

  it('says so in one line, exit 1, when the stack does not exist', async () => {
    cloudFormation
      .on(DescribeStacksCommand)
      .rejects(Object.assign(new Error('Stack with id prod does not exist'), { name: 'ValidationError' }));

    expect(await ops('dlq', 'stats', '--subscriber', 'bot')).toEqual({
      code: 1,
      stdout: '',
      stderr: `ops: no stack prod in region ${REGION}\n`,
    });
  });

  it('asks for --subscriber when the stack has several, naming them', async () => {
    expect(await ops('pause')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ops: several subscribers (bot, crm): choose one with --subscriber NAME\n',
    });
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand)).toHaveLength(0);
  });
});

describe('pause / resume: the subscriber’s event source mapping', () => {
  it('disables the mapping and waits until Lambda reports it Disabled', async () => {
    lambda
      .on(UpdateEventSourceMappingCommand)
      .resolves({ State: 'Disabling' })
      .on(GetEventSourceMappingCommand)
      .resolvesOnce({ State: 'Disabling' })
      .resolves({ State: 'Disabled' });

    const result = await ops('pause', '--subscriber', 'crm');

    expect(result.code).toBe(0);
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand).map((call) => call.args[0].input)).toEqual([
      { UUID: 'esm-crm', Enabled: false },
    ]);
    expect(lambda.commandCalls(GetEventSourceMappingCommand)).toHaveLength(2);
    expect(result.stdout).toBe(
      'consumer of crm paused (Disabled): deliveries wait in its queue (7 waiting, 2 in flight); undo with the resume command\n',
    );
    expect(result.stderr).toMatch(
      /^crm: Disabling…\ncrm: Disabling…\n\{"level":"INFO","message":"ops pause"/,
    );
  });

  it('enables the mapping again', async () => {
    lambda.on(UpdateEventSourceMappingCommand).resolves({ State: 'Enabled' });

    const result = await ops('--json', 'resume', '--subscriber', 'bot');

    expect(lambda.commandCalls(UpdateEventSourceMappingCommand)[0]?.args[0].input).toEqual({
      UUID: 'esm-bot',
      Enabled: true,
    });
    expect(JSON.parse(result.stdout)).toEqual({
      subscriber: 'bot',
      state: 'Enabled',
      deliveryQueue: { visible: 7, inFlight: 2, delayed: 0 },
    });
  });
});

describe('dlq redrive: an SQS message move task from the DLQ to the delivery queue', () => {
  const source = queueArn(queueUrl('bot-dlq'));

  it('starts a task and follows it to completion', async () => {
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolvesOnce({
        Results: [{ TaskHandle: 'old', Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 3 }],
      })
      .resolvesOnce({
        Results: [
          {
            TaskHandle: 'task-1',
            Status: 'RUNNING',
            ApproximateNumberOfMessagesMoved: 40,
            ApproximateNumberOfMessagesToMove: 100,
          },
        ],
      })
      .resolves({
        Results: [
          {
            TaskHandle: 'task-1',
            Status: 'COMPLETED',
            ApproximateNumberOfMessagesMoved: 100,
            ApproximateNumberOfMessagesToMove: 100,
          },
        ],
      })
      .on(StartMessageMoveTaskCommand)
      .resolves({ TaskHandle: 'task-1' });

    const result = await ops('dlq', 'redrive', '--subscriber', 'bot');

    expect(result.code).toBe(0);
    expect(sqs.commandCalls(StartMessageMoveTaskCommand).map((call) => call.args[0].input)).toEqual([
      { SourceArn: source, DestinationArn: queueArn(queueUrl('bot-deliveries')) },
    ]);
    expect(sqs.commandCalls(ListMessageMoveTasksCommand)[0]?.args[0].input).toMatchObject({
      SourceArn: source,
    });
    expect(result.stdout).toBe('redrive of the DLQ of bot: COMPLETED, 100 of 100 moved\n');
    expect(result.stderr).toContain('RUNNING, 40 of 100 moved');
    expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(0);
  });

  it('follows a task already running instead of starting a second one', async () => {
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolvesOnce({ Results: [{ TaskHandle: 'running', Status: 'RUNNING', StartedTimestamp: 0 }] })
      .resolves({
        Results: [{ TaskHandle: 'running', Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 5 }],
      });

    const result = await ops('dlq', 'redrive', '--subscriber', 'bot');

    expect(result.code).toBe(0);
    expect(sqs.commandCalls(StartMessageMoveTaskCommand)).toHaveLength(0);
    expect(result.stderr).toContain(
      'a redrive of this DLQ is already running (started 1970-01-01T00:00:00.000Z)',
    );
  });

  it('reports a failed task in one line, exit 1', async () => {
    sqs
      .on(ListMessageMoveTasksCommand)
      .resolvesOnce({ Results: [] })
      .resolves({
        Results: [
          {
            TaskHandle: 'task-2',
            Status: 'FAILED',
            FailureReason: 'AWS.SimpleQueueService.NonExistentQueue',
          },
        ],
      })
      .on(StartMessageMoveTaskCommand)
      .resolves({ TaskHandle: 'task-2' });

    const result = await ops('dlq', 'redrive', '--subscriber', 'bot');

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^ops: the move task ended FAILED: AWS\.SimpleQueueService\.NonExistentQueue\n$/m,
    );
  });

  it('with --max moves that many records itself (a move task cannot stop after N), deleting only stored copies', async () => {
    const message = (n: number) => ({
      MessageId: `m${n}`,
      ReceiptHandle: `r${n}`,
      Body: `{"n":${n}}`,
      MessageAttributes: { part: { DataType: 'Number', StringValue: '1', StringListValues: [] } },
    });
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message(1), message(2)] })
      .resolves({})
      .on(SendMessageBatchCommand)
      .resolves({
        Successful: [{ Id: '0', MessageId: 'copy-1', MD5OfMessageBody: '' }],
        Failed: [{ Id: '1', Code: 'InternalError', SenderFault: false }],
      })
      .on(DeleteMessageBatchCommand)
      .resolves({ Successful: [{ Id: '0' }] });

    const result = await ops('dlq', 'redrive', '--max', '2', '--subscriber', 'bot');

    expect(sqs.commandCalls(StartMessageMoveTaskCommand)).toHaveLength(0);
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input).toMatchObject({
      QueueUrl: queueUrl('bot-dlq'),
      MaxNumberOfMessages: 2,
    });
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input).toEqual({
      QueueUrl: queueUrl('bot-deliveries'),
      Entries: [
        {
          Id: '0',
          MessageBody: '{"n":1}',
          MessageAttributes: { part: { DataType: 'Number', StringValue: '1' } },
        },
        {
          Id: '1',
          MessageBody: '{"n":2}',
          MessageAttributes: { part: { DataType: 'Number', StringValue: '1' } },
        },
      ],
    });
    expect(sqs.commandCalls(DeleteMessageBatchCommand).map((call) => call.args[0].input)).toEqual([
      { QueueUrl: queueUrl('bot-dlq'), Entries: [{ Id: '0', ReceiptHandle: 'r1' }] },
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('not moved: m2 (InternalError), left in the DLQ');
  });
});
