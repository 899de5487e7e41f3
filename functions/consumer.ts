/**
 * The consumer Lambda of the default subscriber: SQS event source (ReportBatchItemFailures) → claims → your
 * handlers (`functions/webhook-handlers.ts`) → completed claims. See docs/consumer.md. Like every subscriber
 * module it exports `webhookHandlers` and `handler`; importing it builds nothing (the handler is lazy).
 */
import { createConsumerFromEnv } from './consumer/create-consumer.ts';
import { webhookHandlers } from './webhook-handlers.ts';

export { webhookHandlers };

export const handler = createConsumerFromEnv(webhookHandlers);
