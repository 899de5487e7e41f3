/**
 * The local stack (`npm start`) as an ops target, from its `/local/info`: the emulators' endpoints, the
 * claim table, the quarantine queue, each subscriber's lanes and what it receives (fields, numbers, wabas).
 * Its pollers are switched through its HTTP endpoints; DLQ redrive copies messages itself (the SQS emulator
 * has no message move tasks).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_SETTINGS } from 'whatsapp-webhook-dedup/contract/settings';
import type { LocalInfo } from '../../local/local-stack-api.ts';
import { LocalStackApi } from '../adapters/local-stack-api.ts';
import type { LaneTarget, OpsTarget, SubscriberTarget } from './ops-target.ts';

/** The emulators take any credentials; the SDK only needs some. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const LOCAL_REGION = 'us-east-1';

export async function resolveLocalTarget(url: string): Promise<OpsTarget> {
  const api = new LocalStackApi(url);
  const info = await api.info();
  const common = { region: info.region ?? LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  // With an explicit endpoint the SQS client sends every call there, whatever host the queue URL names.
  const sqs = new SQSClient({ ...common, endpoint: info.sqsEndpoint });
  const dynamodb = new DynamoDBClient({ ...common, endpoint: info.dynamodbEndpoint });
  const archive = info.archive;
  // fauxqs serves S3 on its one endpoint; path-style, since bucket subdomains of 127.0.0.1 do not resolve.
  const s3 =
    archive === undefined
      ? undefined
      : new S3Client({ ...common, endpoint: archive.s3Endpoint ?? info.sqsEndpoint, forcePathStyle: true });
  return {
    description: `local stack at ${url}`,
    tableName: info.tableName,
    quarantineQueueUrl: info.quarantineQueueUrl,
    maximumMessageSizeBytes:
      info.settings?.maximumMessageSizeBytes ?? DEFAULT_SETTINGS.maximumMessageSizeBytes,
    subscribers: subscriberTargets(info),
    sqs,
    documentClient: DynamoDBDocumentClient.from(dynamodb),
    consumerSwitch: api,
    messageMoveTasks: undefined,
    ...(info.logDigestKey === undefined ? {} : { logDigestKey: async () => info.logDigestKey }),
    ...(info.provenanceKey === undefined ? {} : { provenanceKey: async () => info.provenanceKey }),
    archive:
      archive === undefined || s3 === undefined
        ? undefined
        : { bucketName: archive.bucketName, s3, retentionDays: async () => archive.retentionDays },
    close() {
      sqs.destroy();
      dynamodb.destroy();
      s3?.destroy();
    },
  };
}

/** The subscribers of `/local/info` as ops targets them. */
export function subscriberTargets(info: Pick<LocalInfo, 'subscribers'>): SubscriberTarget[] {
  return info.subscribers.map((subscriber) => {
    const lanes: LaneTarget[] = [
      {
        lane: 'status',
        ordered: false,
        queueUrl: subscriber.queueUrl,
        deadLetterQueueUrl: subscriber.dlqUrl,
      },
    ];
    if (subscriber.messageQueueUrl !== undefined && subscriber.messageDlqUrl !== undefined) {
      lanes.push({
        lane: 'message',
        ordered: subscriber.messageLaneOrdered === true,
        queueUrl: subscriber.messageQueueUrl,
        deadLetterQueueUrl: subscriber.messageDlqUrl,
      });
    }
    return {
      name: subscriber.name,
      fields: subscriber.fields ?? undefined,
      numbers: subscriber.numbers ?? undefined,
      wabas: subscriber.wabas ?? undefined,
      keyNamespace: subscriber.keyNamespace ?? undefined,
      lanes,
    };
  });
}
