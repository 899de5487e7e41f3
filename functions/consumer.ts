/**
 * The consumer Lambda: SQS event source (ReportBatchItemFailures) → claims → your handlers
 * (`functions/webhook-handlers.ts`) → completed claims. See docs/consumer.md.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import {
  consumerConfigFromEnv,
  createConsumerHandler,
  createConsumerLogger,
} from './consumer/create-consumer.ts';
import { webhookHandlers } from './webhook-handlers.ts';

const logger = createConsumerLogger();
const consumeBatch = createConsumerHandler(consumerConfigFromEnv(), {
  documentClient: DynamoDBDocumentClient.from(new DynamoDBClient({})),
  sqs: new SQSClient({}),
  handlers: webhookHandlers,
  logger,
});

export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  return consumeBatch(event, context);
};
