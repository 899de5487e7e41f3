/**
 * The package's runtime export (`import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers'`):
 * the handler API and the consumer wiring a subscriber module exports as its Lambda `handler`. A subscriber
 * module imports only this, so its bundle holds the consumer and its SDK clients and never aws-cdk-lib or
 * constructs (test/package/runtime-export.test.ts bundles this file and checks).
 */
export type { ClaimedAs } from './claims/lease.ts';
export { createConsumerFromEnv } from './consumer/create-consumer.ts';
export {
  type ConversationTurnContext,
  DeadLetter,
  type DeadLetterOptions,
  defineWebhookHandlers,
  type ErrorContext,
  type GroupEventContext,
  type HandlerLogger,
  type HandlerMetrics,
  InvalidHandlersError,
  type LogDetails,
  type ManagementEventContext,
  type MessageContext,
  type RecordContext,
  type RecordEvent,
  RetryLater,
  type RetryLaterOptions,
  type StatusContext,
  type WebhookEventContext,
  type WebhookHandler,
  type WebhookHandlers,
} from './consumer/handler-api.ts';
export { InvalidMetricError } from './consumer/handler-metrics.ts';
export type { Customer, SendAddress } from './events/customer.ts';
export type { GroupCustomer, GroupCustomerList, GroupField } from './events/group-item.ts';
export type { EventKind, JsonObject, JsonValue, WebhookEvent } from './events/types.ts';
export type { StatusLedgerChange, StatusLedgerView } from './ledger/status-ledger.ts';
