/**
 * The package's root export (`import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup'`): the construct,
 * the deployable stack, their props and the types a CDK app names. Everything here may reach aws-cdk-lib; the
 * handler API lives apart, in `whatsapp-webhook-dedup/handlers` (functions/handlers.ts), which does not.
 */
export type { ExpectedPeak } from '../contract/capacity.ts';
export type { MessageLaneDefinition } from '../contract/lanes.ts';
export { type PipelineSettings, UnsafeSettingsError } from '../contract/settings.ts';
export type { StatusLedgerMode } from '../contract/status-ledger-mode.ts';
export type {
  SubscriberDefinition,
  SubscriberDefinitions,
  SubscriberSettingsInput,
} from '../contract/subscribers.ts';
export type { WebhookMessageLane, WebhookSubscriber } from './builders/subscriber.ts';
export type {
  PipelineAlarms,
  SubscriberAlarms,
  WebhookAlarms,
  WebhookAlarmThresholds,
} from './monitoring/alarms.ts';
export { WhatsAppWebhookDedup, type WhatsAppWebhookDedupProps } from './whatsapp-webhook-dedup.ts';
export {
  WhatsAppWebhookDedupStack,
  type WhatsAppWebhookDedupStackProps,
} from './whatsapp-webhook-dedup-stack.ts';
