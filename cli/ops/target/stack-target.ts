/**
 * A deployed stack as an ops target: each subscriber's lanes (queues, DLQs, consumer functions and event
 * source mappings) and the table from its CloudFormation outputs (`contract/stack-outputs.ts`), each subscriber's key namespace, fields, numbers and wabas from its consumer's
 * environment, read as the consumer reads it (`consumerConfigFromEnv`). Clients use the standard AWS credentials and region (environment, profile, SSO, …).
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  parseSubscriberNames,
  STACK_OUTPUT,
  subscriberOutputKeys,
} from 'whatsapp-webhook-dedup/contract/stack-outputs';
import {
  type ConsumerConfig,
  consumerConfigFromEnv,
} from 'whatsapp-webhook-dedup/functions/consumer/create-consumer';
import { archiveRetentionDays } from '../adapters/archive-reader.ts';
import { EventSourceMappings } from '../adapters/event-source-mappings.ts';
import { MessageMoveTasks } from '../adapters/message-move-tasks.ts';
import { SecretValues } from '../adapters/secret-values.ts';
import { StackResources } from '../adapters/stack-resources.ts';
import { OpsError } from '../errors.ts';
import type { ArchiveTarget, LaneTarget, OpsTarget, SubscriberTarget } from './ops-target.ts';

export interface StackClients {
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly s3: S3Client;
  readonly secretsManager: SecretsManagerClient;
}

export function createStackClients(): StackClients {
  return {
    cloudFormation: new CloudFormationClient({}),
    lambda: new LambdaClient({}),
    sqs: new SQSClient({}),
    dynamodb: new DynamoDBClient({}),
    s3: new S3Client({}),
    secretsManager: new SecretsManagerClient({}),
  };
}

export async function resolveStackTarget(
  stackName: string,
  clients: StackClients = createStackClients(),
): Promise<OpsTarget> {
  const close = () => {
    for (const client of Object.values(clients)) client.destroy();
  };
  try {
    return await resolve(stackName, clients, close);
  } catch (error) {
    close();
    throw error;
  }
}

async function resolve(stackName: string, clients: StackClients, close: () => void): Promise<OpsTarget> {
  const resources = new StackResources(clients.cloudFormation, clients.lambda);
  const outputs = await resources.outputs(stackName);
  const output = (key: string) => {
    const value = outputs[key];
    if (value === undefined) {
      throw new OpsError(
        `stack ${stackName} has no output ${key}: deploy this version of the construct (it writes the outputs ops reads)`,
      );
    }
    return value;
  };
  const names = parseSubscriberNames(output(STACK_OUTPUT.subscriberNames));
  const described = await Promise.all(
    names.map(async (name) => {
      const keys = subscriberOutputKeys(name);
      const functionName = output(keys.consumerFunctionName);
      let config: ConsumerConfig;
      try {
        config = consumerConfigFromEnv(await resources.environment(functionName));
      } catch (error) {
        if (error instanceof OpsError) throw error;
        throw new OpsError(`the consumer ${functionName} of ${name}: ${(error as Error).message}`);
      }
      const lanes: LaneTarget[] = [
        {
          lane: 'status',
          ordered: false,
          queueUrl: output(keys.deliveryQueueUrl),
          deadLetterQueueUrl: output(keys.deadLetterQueueUrl),
          functionName,
          eventSourceMappingId: output(keys.eventSourceMappingId),
        },
      ];
      // The message lane's outputs exist only for a subscriber that has the lane; then all four.
      if (outputs[keys.messageQueueUrl] !== undefined) {
        const queueUrl = output(keys.messageQueueUrl);
        lanes.push({
          lane: 'message',
          // SQS requires the name of a FIFO queue to end in .fifo, and only a FIFO queue's.
          ordered: queueUrl.endsWith('.fifo'),
          queueUrl,
          deadLetterQueueUrl: output(keys.messageDeadLetterQueueUrl),
          functionName: output(keys.messageConsumerFunctionName),
          eventSourceMappingId: output(keys.messageEventSourceMappingId),
        });
      }
      return {
        maximumMessageSizeBytes: config.maximumMessageSizeBytes,
        subscriber: {
          name,
          fields: config.fields,
          numbers: config.numbers,
          wabas: config.wabas,
          keyNamespace: config.keyNamespace,
          lanes,
        } satisfies SubscriberTarget,
      };
    }),
  );
  const region = await clients.sqs.config.region();
  return {
    description: `stack ${stackName} (${region})`,
    tableName: output(STACK_OUTPUT.claimTableName),
    quarantineQueueUrl: output(STACK_OUTPUT.quarantineQueueUrl),
    // Every queue of a pipeline has the receiver's limit, which each consumer is given too.
    maximumMessageSizeBytes: Math.min(...described.map((entry) => entry.maximumMessageSizeBytes)),
    subscribers: described.map((entry) => entry.subscriber),
    sqs: clients.sqs,
    documentClient: DynamoDBDocumentClient.from(clients.dynamodb),
    consumerSwitch: new EventSourceMappings(clients.lambda),
    messageMoveTasks: new MessageMoveTasks(clients.sqs),
    archive: archiveOf(outputs[STACK_OUTPUT.archiveBucketName], clients.s3),
    logDigestKey: generatedKey(outputs[STACK_OUTPUT.logDigestSecretArn], clients.secretsManager),
    provenanceKey: generatedKey(outputs[STACK_OUTPUT.provenanceSecretArn], clients.secretsManager),
    close,
  };
}

/** A key the stack generated (its secret's output), read when a command needs it; absent from older stacks. */
function generatedKey(
  secretArn: string | undefined,
  secretsManager: SecretsManagerClient,
): (() => Promise<string>) | undefined {
  if (secretArn === undefined) return undefined;
  return () => new SecretValues(secretsManager).secretString(secretArn);
}

/** The archive of a stack deployed with one (its bucket output); its retention from the bucket's lifecycle. */
function archiveOf(bucketName: string | undefined, s3: S3Client): ArchiveTarget | undefined {
  if (bucketName === undefined) return undefined;
  return { bucketName, s3, retentionDays: () => archiveRetentionDays(s3, bucketName) };
}
