import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { WhatsAppWebhookDedup, type WhatsAppWebhookDedupProps } from './whatsapp-webhook-dedup.ts';

export interface WhatsAppWebhookDedupStackProps extends StackProps {
  /**
   * Props of the pipeline construct.
   * @default - the construct's defaults
   */
  readonly pipeline?: WhatsAppWebhookDedupProps;
  /**
   * ARN of an existing SNS topic that alarms notify (ignored when `pipeline.alarmTopic` is set).
   * @default - alarms have no actions
   */
  readonly alarmTopicArn?: string;
}

/**
 * The deployable stack: the pipeline plus the three outputs a user needs after `cdk deploy` (the callback URL
 * for the Meta app, the secret to fill in, the dashboard). Environment-agnostic, no lookups, so that
 * `cdk synth` runs offline without credentials.
 */
export class WhatsAppWebhookDedupStack extends Stack {
  public readonly pipeline: WhatsAppWebhookDedup;

  constructor(scope: Construct, id: string, props: WhatsAppWebhookDedupStackProps = {}) {
    super(scope, id, props);
    const alarmTopic =
      props.pipeline?.alarmTopic ??
      (props.alarmTopicArn ? Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn) : undefined);
    this.pipeline = new WhatsAppWebhookDedup(this, 'Webhook', { ...props.pipeline, alarmTopic });

    new CfnOutput(this, 'WebhookUrl', {
      description: 'Callback URL for the Meta app (WhatsApp > Configuration > Webhook).',
      value: this.pipeline.webhookUrl,
    });
    new CfnOutput(this, 'WebhookSecretName', {
      description: 'Secrets Manager secret holding {"appSecrets": [...], "verifyToken": "..."}.',
      value: this.pipeline.webhookSecretName,
    });
    new CfnOutput(this, 'DashboardUrl', {
      description: 'CloudWatch dashboard of the pipeline.',
      value: this.pipeline.dashboardUrl,
    });
    new CfnOutput(this, 'ReceiverFunctionName', {
      description:
        'Receiver Lambda (restart its containers after a secret rotation to skip the 5-minute cache).',
      value: this.pipeline.receiverFunction.functionName,
    });
  }
}
