import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** A queue's approximate message counts, as SQS reports them. */
export interface QueueCounts {
  /** Waiting to be received (ApproximateNumberOfMessages). */
  readonly visible: number;
  /** Received and not yet deleted (ApproximateNumberOfMessagesNotVisible). */
  readonly inFlight: number;
  /** Sent with a delay not yet over (ApproximateNumberOfMessagesDelayed). */
  readonly delayed: number;
}

export async function readQueueCounts(client: SQSClient, queueUrl: string): Promise<QueueCounts> {
  const { Attributes = {} } = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return {
    visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

export function totalMessages(counts: QueueCounts): number {
  return counts.visible + counts.inFlight + counts.delayed;
}
