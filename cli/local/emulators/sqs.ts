/**
 * The SQS emulator (fauxqs, in-process) and the pipeline's queues, with the same redrive policy, visibility
 * timeout, message size and retention as the CDK stack: both read them from `resolveSettings()`.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import { MAX_QUEUE_RETENTION_DAYS, type PipelineSettings } from 'whatsapp-webhook-dedup/contract/settings';
import { DEFAULT_SUBSCRIBER_NAME } from 'whatsapp-webhook-dedup/contract/subscribers';
import { SECONDS_PER_DAY } from 'whatsapp-webhook-dedup/functions/claims/lease';

export interface SqsEmulator {
  /** `http://127.0.0.1:<port>`; any region and credentials work. */
  readonly endpoint: string;
  readonly port: number;
  /** One look at a queue through fauxqs's own inspection, which neither receives nor hides a message. */
  inspect(queueUrl: string): QueueInspection;
  stop(): Promise<void>;
}

export interface QueueInspection {
  /**
   * The oldest `SentTimestamp` (epoch ms) among the queue's messages not yet deleted (waiting, delayed or in
   * flight: what CloudWatch's `ApproximateAgeOfOldestMessage` counts), or undefined when it holds none.
   */
  readonly oldestMessageSentAt: number | undefined;
  /**
   * The sends a FIFO queue accepted and did not enqueue (a repeat of a deduplication id within 5 minutes), since
   * it was created: CloudWatch's `NumberOfDeduplicatedSentMessages` (fauxqs patched to count them).
   */
  readonly deduplicatedSentMessages: number;
}

/** Starts fauxqs on a free port (or `port`), without request logging. */
export async function startSqsEmulator(options: { port?: number } = {}): Promise<SqsEmulator> {
  const server = await startFauxqs({ port: options.port ?? 0, logger: false });
  let stopping: Promise<void> | undefined;
  return {
    endpoint: server.address,
    port: server.port,
    inspect(queueUrl) {
      const inspection = server.inspectQueue(queueName(queueUrl));
      if (inspection === undefined) return { oldestMessageSentAt: undefined, deduplicatedSentMessages: 0 };
      const { messages } = inspection;
      let oldest: number | undefined;
      for (const message of [
        ...messages.ready,
        ...messages.delayed,
        ...messages.inflight.map((entry) => entry.message),
      ]) {
        if (oldest === undefined || message.sentTimestamp < oldest) oldest = message.sentTimestamp;
      }
      return { oldestMessageSentAt: oldest, deduplicatedSentMessages: inspection.deduplicatedSentMessages };
    },
    stop: () => {
      stopping ??= server.stop();
      return stopping;
    },
  };
}

function queueName(queueUrl: string): string {
  return decodeURIComponent(new URL(queueUrl).pathname.split('/').pop() ?? '');
}

export interface PipelineQueueNames {
  readonly deliveryQueueName: string;
  readonly deadLetterQueueName: string;
}

export const DEFAULT_PIPELINE_QUEUE_NAMES: PipelineQueueNames = {
  deliveryQueueName: 'whatsapp-webhook-deliveries',
  deadLetterQueueName: 'whatsapp-webhook-deliveries-dlq',
};

export interface PipelineQueues {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly dlqUrl: string;
  readonly dlqArn: string;
}

/** Attributes of the DLQ, as SQS wants them (strings). It keeps quarantined bodies longer than the queue. */
export function deadLetterQueueAttributes(settings: PipelineSettings): Record<string, string> {
  return {
    MaximumMessageSize: String(settings.maximumMessageSizeBytes),
    MessageRetentionPeriod: String(settings.deadLetterRetentionDays * SECONDS_PER_DAY),
  };
}

/** Attributes of the delivery queue: a record goes to the DLQ after `maxReceiveCount` receives. */
export function deliveryQueueAttributes(
  settings: PipelineSettings,
  deadLetterQueueArn: string,
): Record<string, string> {
  return {
    VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
    MaximumMessageSize: String(settings.maximumMessageSizeBytes),
    MessageRetentionPeriod: String(settings.queueRetentionDays * SECONDS_PER_DAY),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: deadLetterQueueArn,
      maxReceiveCount: settings.maxReceiveCount,
    }),
  };
}

export const QUARANTINE_QUEUE_NAME = 'whatsapp-webhook-quarantine';

/**
 * One subscriber's queue names: the default subscriber keeps the single-subscriber names, so a stack with
 * no `subscribers` looks exactly as before; any other gets its name in both.
 */
export function subscriberQueueNames(subscriberName: string): PipelineQueueNames {
  if (subscriberName === DEFAULT_SUBSCRIBER_NAME) return DEFAULT_PIPELINE_QUEUE_NAMES;
  return {
    deliveryQueueName: `whatsapp-webhook-${subscriberName}-deliveries`,
    deadLetterQueueName: `whatsapp-webhook-${subscriberName}-deliveries-dlq`,
  };
}

/** The pipeline's quarantine queue: bodies nobody could handle, kept 14 days, never redriven. */
export function quarantineQueueAttributes(settings: PipelineSettings): Record<string, string> {
  return {
    MaximumMessageSize: String(settings.maximumMessageSizeBytes),
    MessageRetentionPeriod: String(MAX_QUEUE_RETENTION_DAYS * SECONDS_PER_DAY),
  };
}

export async function createQuarantineQueue(
  client: SQSClient,
  settings: PipelineSettings,
  name: string = QUARANTINE_QUEUE_NAME,
): Promise<string> {
  return createQueue(client, name, quarantineQueueAttributes(settings));
}

/**
 * A FIFO queue in high-throughput mode, as the ordered message lane is deployed: deduplication per message
 * group and a throughput limit per message group id (no content-based deduplication: the receiver derives
 * each part's `MessageDeduplicationId` from its event keys). A FIFO queue's DLQ must be FIFO too.
 */
export const FIFO_QUEUE_ATTRIBUTES = {
  FifoQueue: 'true',
  ContentBasedDeduplication: 'false',
  DeduplicationScope: 'messageGroup',
  FifoThroughputLimit: 'perMessageGroupId',
} as const;

/** SQS wants a FIFO queue's name to end with `.fifo`. */
export const FIFO_QUEUE_SUFFIX = '.fifo';

/**
 * One subscriber's message lane queue names (contract/lanes.ts): beside its delivery queue's, with `.fifo`
 * when the lane is ordered.
 */
export function messageLaneQueueNames(subscriberName: string, ordered: boolean): PipelineQueueNames {
  const base =
    subscriberName === DEFAULT_SUBSCRIBER_NAME
      ? 'whatsapp-webhook-messages'
      : `whatsapp-webhook-${subscriberName}-messages`;
  const suffix = ordered ? FIFO_QUEUE_SUFFIX : '';
  return { deliveryQueueName: `${base}${suffix}`, deadLetterQueueName: `${base}-dlq${suffix}` };
}

export interface PipelineQueueOptions {
  /** Both queues FIFO ({@link FIFO_QUEUE_ATTRIBUTES}); their names must end with `.fifo`. @default false */
  readonly fifo?: boolean;
  /**
   * The redrive policy's `maxReceiveCount`, when it is not the settings' (an ordered lane's redrive is a net
   * behind its consumer's own dead-lettering: `redriveMaxReceiveCount`, contract/lanes.ts).
   * @default settings.maxReceiveCount
   */
  readonly redriveMaxReceiveCount?: number;
}

/** Creates the DLQ, then the delivery queue redriving to it. */
export async function createPipelineQueues(
  client: SQSClient,
  settings: PipelineSettings,
  names: Partial<PipelineQueueNames> = {},
  options: PipelineQueueOptions = {},
): Promise<PipelineQueues> {
  const { deliveryQueueName, deadLetterQueueName } = { ...DEFAULT_PIPELINE_QUEUE_NAMES, ...names };
  const fifo = options.fifo === true ? FIFO_QUEUE_ATTRIBUTES : {};
  const dlqUrl = await createQueue(client, deadLetterQueueName, {
    ...deadLetterQueueAttributes(settings),
    ...fifo,
  });
  const dlqArn = await queueArn(client, dlqUrl);
  const redrive =
    options.redriveMaxReceiveCount === undefined
      ? settings
      : { ...settings, maxReceiveCount: options.redriveMaxReceiveCount };
  const queueUrl = await createQueue(client, deliveryQueueName, {
    ...deliveryQueueAttributes(redrive, dlqArn),
    ...fifo,
  });
  return { queueUrl, queueArn: await queueArn(client, queueUrl), dlqUrl, dlqArn };
}

async function createQueue(
  client: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<string> {
  const created = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (created.QueueUrl === undefined) throw new Error(`CreateQueue ${name} returned no QueueUrl.`);
  return created.QueueUrl;
}

async function queueArn(client: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (arn === undefined) throw new Error(`GetQueueAttributes ${queueUrl} returned no QueueArn.`);
  return arn;
}
