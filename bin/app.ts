#!/usr/bin/env node
/**
 * CDK app. Settings come from context so that a deploy needs no code change, e.g.
 * `npx cdk deploy -c alarmTopicArn=arn:aws:sns:… -c existingSecretName=whatsapp/prod`; the subscribers come
 * from `bin/subscribers.ts`, which the local stack reads too.
 */
import { App } from 'aws-cdk-lib';
import { WhatsAppWebhookDedupStack } from 'whatsapp-webhook-dedup';
import { subscribers } from './subscribers.ts';

const app = new App();

function contextString(key: string): string | undefined {
  const value: unknown = app.node.tryGetContext(key);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

new WhatsAppWebhookDedupStack(app, contextString('stackName') ?? 'WhatsAppWebhookDedup', {
  description:
    'Exactly-once side effects for WhatsApp Cloud API webhooks (API Gateway, SQS, Lambda, DynamoDB).',
  alarmTopicArn: contextString('alarmTopicArn'),
  pipeline: {
    existingSecretName: contextString('existingSecretName'),
    keyNamespace: contextString('keyNamespace'),
    subscribers,
  },
});
