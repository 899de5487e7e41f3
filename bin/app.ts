#!/usr/bin/env node
/**
 * CDK app. Settings come from context so that a deploy needs no code change, e.g.
 * `npx cdk deploy -c alarmTopicArn=arn:aws:sns:… -c existingSecretName=whatsapp/prod` (and
 * `-c endpoint=function-url` for the receiver's function URL instead of the HTTP API); the subscribers come
 * from `bin/subscribers.ts`, which the local stack reads too, or from the module `-c subscribers=PATH` names
 * (`-c subscribers=bin/bot-and-crm.ts`: the example bot and CRM). It imports the package by name, as a
 * user's app does.
 */
import { App } from 'aws-cdk-lib';
import { type WhatsAppWebhookDedupProps, WhatsAppWebhookDedupStack } from 'whatsapp-webhook-dedup';
import { loadSubscribers } from './subscribers-module.ts';

const app = new App();

function contextString(key: string): string | undefined {
  const value: unknown = app.node.tryGetContext(key);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

const subscribers = await loadSubscribers(contextString('subscribers'));

new WhatsAppWebhookDedupStack(app, contextString('stackName') ?? 'WhatsAppWebhookDedup', {
  description:
    'Exactly-once side effects for WhatsApp Cloud API webhooks (API Gateway, SQS, Lambda, DynamoDB).',
  alarmTopicArn: contextString('alarmTopicArn'),
  pipeline: {
    existingSecretName: contextString('existingSecretName'),
    keyNamespace: contextString('keyNamespace'),
    // The construct refuses any other value, naming the two doors.
    endpoint: contextString('endpoint') as WhatsAppWebhookDedupProps['endpoint'],
    subscribers,
  },
});
