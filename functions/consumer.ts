/**
 * The consumer Lambda: SQS event source (ReportBatchItemFailures) → claims → your handlers
 * (`functions/webhook-handlers.ts`) → completed claims. See docs/consumer.md.
 */
import { createConsumerFromEnv } from './consumer/create-consumer.ts';
import { webhookHandlers } from './webhook-handlers.ts';

export const handler = createConsumerFromEnv(webhookHandlers);
